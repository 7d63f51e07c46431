"""Exclusion rules for the human data: a plain frozen dataclass (no pandas, safe for the web process)."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Exclusions:
    """Which trials and sessions are left out of the human analyses (all counted in the report)."""

    drop_preview: bool = True
    drop_failed_attention: bool = True
    completed_only: bool = True
    rt_min_ms: float | None = 200.0
    rt_log_sd: float | None = 3.0  # per participant, on log RT; None turns the rule off
    # The study's definition of a failed attention check (AttentionRule.describe()), for the report's
    # text; the frames' failed_attention column applies it (experiments/participation/attention.py).
    attention_rule: str = "a participant who answers one attention check wrongly has failed"

    def describe(self) -> list[str]:
        rules = []
        if self.drop_preview:
            rules.append("preview sessions")
        if self.drop_failed_attention:
            rules.append(f"participants who failed the attention checks ({self.attention_rule})")
        if self.completed_only:
            rules.append("sessions that were not completed")
        rules.append("attention-check trials and timed-out trials (not data)")
        if self.rt_min_ms is not None:
            rules.append(f"trials faster than {self.rt_min_ms:g} ms")
        if self.rt_log_sd is not None:
            rules.append(f"trials more than {self.rt_log_sd:g} SD from the participant's mean log RT")
        return rules
