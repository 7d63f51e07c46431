"""What the paired sections of the report read besides the trial and score frames (issue 6).

With analysis.frames, the only analysis modules that read the database: the study's linked items
with their descriptive attributes, the knowledge-probe answers of the probe runs analysis.runs
uses (each configuration's latest complete probe run; 000 §4.1), and the report options in ``study.settings["paired_report"]``.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from analysis import rules
from analysis.factors import SETTING, normalise

# The linked items' columns the paired sections read: the tidy item columns (analysis.frames.ITEM_COLUMNS) that
# say how an item is linked, with its descriptive attributes (read as stored, in this order: items_frame).
LINK_COLUMNS = ["item_id", "design", "pair_id", "pair_role", "condition", "variant", "original_item_id", "attributes",
                "link_kind"]
# The kinds of link (experiments.models.LinkKind) each paired section reads (issue 35): 002's matched-pair
# test reads perturbed copies and nonsense mirrors (both keep the logic and change the tokens), never the
# option orders of a multiple-choice question (001), which the multiple-choice section reads.
PERTURBED_LINKS = ("perturbation", "nonsense_mirror")
PROBE_COLUMNS = ["model", "run_id", "probe_key", "target", "p_target", "top_token", "known"]


@dataclass
class PairedInputs:
    items: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=LINK_COLUMNS))
    probes: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=PROBE_COLUMNS))
    options: dict = field(default_factory=lambda: dict(rules.PAIRED_REPORT))
    presentation: str = "across"  # HumanArm.paired_presentation: how people were shown the pairs
    # The study's declared factors: the dual-sided tables are sliced by these columns only (empty:
    # overall only). Issue 25: slicing by every descriptive column gave 769 one-rule rows for ULogic.
    factors: list[str] = field(default_factory=list)
    # The items people could be shown (logic.shown_items.ItemsShown; None: the items they answered), the report's
    # own (StudyFrames.shown, set by register.build): each paired section says which of its model rows are like
    # for like.
    shown: object = None
    # The study's paired designs and whether it has perturbed copies, when `items` holds only the items
    # a report analyses (linked_designs; None: read from `items`).
    linked: tuple[set[str], bool, bool] | None = None


def report_options(settings: dict | None) -> dict:
    return rules.paired_report_options(settings)


def _linked(study):
    from django.db.models import Q

    from experiments.models import Item

    originals = Item.objects.filter(study=study, original__isnull=False).values("original_id")
    return Item.objects.filter(study=study).filter(~Q(pair_id="") | Q(original__isnull=False) | Q(pk__in=originals))


def items_frame(study, analysed=None) -> pd.DataFrame:
    """Items that take part in a pair: a design pair (pair id), or a perturbation (perturbed or original).
    `analysed` (a query of item ids: those answered or scored, frames.analysed_item_ids): only those, so
    the frame grows with the answers a report reads, not with the study's items (issue 37; the paired
    sections read the items' columns onto the answers, and which sections exist from linked_designs);
    None: every linked item."""
    rows = _linked(study)
    if analysed is not None:
        rows = rows.filter(pk__in=analysed)
    rows = rows.order_by("id").values_list("id", "design", "pair_id", "pair_role", "condition", "variant",
                                           "original_id", "attributes", "link_kind")
    frame = pd.DataFrame.from_records(list(rows), columns=LINK_COLUMNS)
    frame["original_item_id"] = frame["original_item_id"].astype("Int64")
    return frame.astype({"item_id": "int64"}) if frame.empty else frame


def linked_designs(study) -> tuple[set[str], bool, bool]:
    """The designs of the study's paired items, whether it has perturbed copies (PERTURBED_LINKS) and
    whether it has linked items at all, by query: which paired sections a report has does not depend on
    which items were answered."""
    rows = _linked(study)
    designs = set(rows.exclude(pair_id="").order_by().values_list("design", flat=True).distinct())
    return designs, rows.filter(link_kind__in=PERTURBED_LINKS).exists(), rows.exists()


def with_link_kinds(items: pd.DataFrame) -> pd.DataFrame:
    """`items` with a link_kind column: as stored, or (a frame made without one) by LinkKind.of's rule from
    the item's original, condition and pair (an item of a multiple-choice design: its `kind` column, else
    its pair role rot1–rot3)."""
    if "link_kind" in items and items["link_kind"].notna().all():
        return items
    from experiments.models import LinkKind

    kinds = items["kind"] if "kind" in items else pd.Series(
        ["multiple_choice" if str(r).startswith("rot") else "yes_no" for r in items["pair_role"]], index=items.index)
    filled = [LinkKind.of(original=not pd.isna(o), condition=c, kind=k, pair_id=p or "")
              for o, c, k, p in zip(items["original_item_id"], items["condition"], kinds, items["pair_id"])]
    return items.assign(link_kind=filled)


def perturbed(items: pd.DataFrame) -> pd.Series:
    """Which of `items` are perturbed copies of their original (PERTURBED_LINKS)."""
    return with_link_kinds(items)["link_kind"].isin(PERTURBED_LINKS)


def probes_frame(study, run_ids: list[int] | None = None) -> pd.DataFrame:
    """The answers of the probe runs `run_ids` (None: those analysis.runs' rule uses)."""
    try:
        from inference.models import ProbeScore
    except ImportError:
        return pd.DataFrame(columns=PROBE_COLUMNS)
    if run_ids is None:
        from analysis import runs

        run_ids = runs.used_ids(runs.select_runs(study), kinds=[runs.PROBE])
    rows = (ProbeScore.objects.filter(run_id__in=list(run_ids), run__study=study).order_by("run_id", "probe_key")
            .values_list("run__language_model__name", "run_id", "probe_key", "target", "p_target", "top_token", "known"))
    return pd.DataFrame.from_records(list(rows), columns=PROBE_COLUMNS)


def inputs(study, probe_run_ids: list[int] | None = None, analysed=None) -> PairedInputs:
    from experiments.models import HumanArm

    arm = HumanArm.objects.filter(study=study).first()
    return PairedInputs(items=items_frame(study, analysed),
                        linked=linked_designs(study) if analysed is not None else None,
                        probes=probes_frame(study, probe_run_ids),
                        options=report_options(study.settings),
                        presentation=arm.paired_presentation if arm else "across",
                        factors=_factors((study.settings or {}).get(SETTING)))


def _factors(value) -> list[str]:
    """study.settings["factors"] read as analysis.factors reads it (a column name or a list of them; none:
    the tables are overall only)."""
    try:
        return normalise(value)
    except ValueError:
        raise ValueError(f"study setting factors must be a list of column names, not {value!r}") from None
