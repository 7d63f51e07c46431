"""The report's rules a researcher sets in study.settings: which human data are excluded (a plain frozen
dataclass) and the paired sections' options. No pandas here: the web process (the study's settings editor)
reads these too. They sit here, below analysis, so the editor (an app) reads them without importing upward
(issue 29 item 4); analysis.rules re-exports them."""
from __future__ import annotations

from dataclasses import dataclass, fields

RT_LOG_SD_MIN = 1.0  # below it the relative RT cut could leave out every answer of a participant (Exclusions.steps)


@dataclass(frozen=True)
class Excluded:
    """One exclusion rule over trial rows: a trial is left out when any condition in `when` holds. A condition is
    (column, test, value) over schema.TRIAL's columns; test "is" (equal), "is not" (not equal) or "below" (less
    than). The report applies it to its frame (analysis/prep.py), the study page to the same rows in the database
    (participation/selectors.py, analysed_participants): one rule, read two ways."""

    rule: str
    when: tuple[tuple[str, str, object], ...]


@dataclass(frozen=True)
class Exclusions:
    """Which trials and sessions are left out of the human analyses (all counted in the report)."""

    drop_preview: bool = True
    drop_failed_attention: bool = True
    completed_only: bool = True
    rt_min_ms: float | None = 200.0
    rt_log_sd: float | None = 3.0  # per participant, on log RT; None turns the rule off
    # The study's definition of a failed attention check (AttentionRule.describe()), for the report's
    # text; the frames' failed_attention column applies it (experiments/models/attention.py).
    attention_rule: str = "a participant who answers one attention check wrongly has failed"

    def steps(self) -> tuple[Excluded, ...]:
        """The rules that read one trial row each, in the order the report applies them. The relative RT cut
        (`rt_log_sd`, applied after them) is not among them: it reads a participant's other answers, and at
        RT_LOG_SD_MIN SD or more it never leaves out all of a participant's answers (the z-scores of n answers
        have mean square (n − 1)/n < 1, so one lies within 1 SD), so who is analysed is decided by these."""
        from .models.participants import ParticipantStatus  # here: this module is read before Django's apps load

        steps = []
        if self.drop_preview:
            steps.append(Excluded("preview session", (("is_preview", "is", True),)))
        if self.drop_failed_attention:  # the study's attention rule, in the rows' failed_attention column
            steps.append(Excluded("failed attention check", (("failed_attention", "is", True),)))
        if self.completed_only:
            steps.append(Excluded("session not completed",
                                  (("participant_status", "is not", ParticipantStatus.COMPLETED.value),)))
        steps.append(Excluded("attention-check trial", (("is_attention_check", "is", True),)))
        steps.append(Excluded("timed out / no answer", (("timed_out", "is", True), ("answer", "is", ""))))
        if self.rt_min_ms is not None:
            steps.append(Excluded(f"RT < {self.rt_min_ms:g} ms", (("rt_ms", "below", self.rt_min_ms),)))
        return tuple(steps)

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


EXCLUSION_SETTINGS = tuple(f.name for f in fields(Exclusions) if f.name != "attention_rule")  # the human arm's


def exclusion_settings(settings: dict | None) -> dict:
    """The researcher's exclusion rules: defaults, overridden by settings["analysis_exclusions"]
    (the attention rule is the human arm's). A bad name raises ValueError naming it."""
    given = (settings or {}).get("analysis_exclusions", {}) or {}
    if not isinstance(given, dict):
        raise ValueError('settings["analysis_exclusions"] must be an object such as {"rt_min_ms": 200}.')
    unknown = sorted(set(given) - set(EXCLUSION_SETTINGS))
    if unknown:
        raise ValueError(f"Unknown analysis_exclusions setting(s) {unknown}; known: {sorted(EXCLUSION_SETTINGS)}")
    defaults = Exclusions()
    chosen = {name: given.get(name, getattr(defaults, name)) for name in EXCLUSION_SETTINGS}
    cut = chosen["rt_log_sd"]
    if cut is not None and (isinstance(cut, bool) or not isinstance(cut, (int, float)) or cut < RT_LOG_SD_MIN):
        raise ValueError(f"analysis_exclusions rt_log_sd must be a number of SD of at least {RT_LOG_SD_MIN:g} (a "
                         f"cut nearer the mean could leave out every answer of a participant), or null; not {cut!r}")
    return chosen


# The paired sections' options (study.settings["paired_report"]; seeds 000 and 002).
ALTERNATIVES = ("n12>n21", "n12<n21", "two-sided")
PAIRED_REPORT = {
    "alternative": "n12>n21",  # 002: the one-sided alternative the researcher names (or two-sided)
    "alpha": 0.05,  # Benjamini–Hochberg level across models
    "exact_max": 10,  # exact binomial test up to this many discordant pairs, McNemar z above
    "drop_unknown_pairs": False,  # 000 §4.1: leave out pairs about cities/instances a model does not know
}


def paired_report_options(settings: dict | None) -> dict:
    """The paired sections' options: defaults, overridden by settings["paired_report"]. A bad name or
    value raises ValueError naming it."""
    given = (settings or {}).get("paired_report", {}) or {}
    if not isinstance(given, dict):
        raise ValueError('settings["paired_report"] must be an object such as {"alternative": "two-sided"}.')
    unknown = sorted(set(given) - set(PAIRED_REPORT))
    if unknown:
        raise ValueError(f"Unknown paired_report setting(s) {unknown}; known: {sorted(PAIRED_REPORT)}")
    options = {**PAIRED_REPORT, **given}
    if options["alternative"] not in ALTERNATIVES:
        raise ValueError(f"paired_report alternative must be one of {', '.join(ALTERNATIVES)}, "
                         f"not {options['alternative']!r}.")
    alpha = options["alpha"]
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0 < alpha < 1:
        raise ValueError(f"paired_report alpha must be a number between 0 and 1, not {alpha!r}.")
    exact_max = options["exact_max"]
    if isinstance(exact_max, bool) or not isinstance(exact_max, int) or exact_max < 0:
        raise ValueError(f"paired_report exact_max must be a whole number of pairs (0 or more), not {exact_max!r}.")
    if not isinstance(options["drop_unknown_pairs"], bool):
        raise ValueError("paired_report drop_unknown_pairs must be true or false.")
    return options
