"""Four-option trials (issue 7, seed 001) in the participant flow: keys, lists, answers, runner data.

The option order a participant sees is the circular mutant's (Item.options); the keys answer the
positions left to right (D F J K or 1 2 3 4 → A B C D), the same for every participant and trial.
Counterbalancing comes from the mutants: lists are a Latin square over questions × rotations, so a
participant answers at most one mutant of a question, each rotation equally often, and consecutive
participants cover every mutant of every question — unless the study asks for all mutants
(study.settings["multiple_choice"]["all_mutants"]), when a list holds every mutant of its questions.
"""
from __future__ import annotations

from django.core.exceptions import ValidationError

from ..design_registry import CATCH_ITEMS
from ..models import Item, ItemKind, Study
from . import lists
from .arm import MC_LETTERS, McSettings, mc_settings
from .payload import KEYS, PayloadError, TrialPayload


def is_mc_study(study: Study) -> bool:
    return study.items.filter(kind=ItemKind.MULTIPLE_CHOICE).exclude(design=CATCH_ITEMS).exists()


def settings_for(study: Study) -> McSettings | None:
    return mc_settings(study) if is_mc_study(study) else None


def _settings_or_refuse(study: Study) -> McSettings:
    """For a trial being saved: bad settings (changed after the participant started) refuse it clearly."""
    try:
        return mc_settings(study)
    except ValidationError as exc:
        raise PayloadError(f"This study is not set up correctly: {' '.join(exc.messages)}") from exc


def accepted_keys(study: Study) -> dict[str, str]:
    """e.code → key name for every key that can answer a trial of this study (payload validation)."""
    if not is_mc_study(study):
        return KEYS
    settings = _settings_or_refuse(study)
    return {**KEYS, **{k["code"]: k["label"].lower() for k in settings.key_labels()}}


def mc_grid(pool) -> lists.Grid:
    """Rows are questions (pair ids), forms their rotations (rot0..rot3)."""
    rows = pool.filter(kind=ItemKind.MULTIPLE_CHOICE).order_by("id").values_list("id", "pair_id", "pair_role")
    return lists.Grid.from_cells(
        (lists.Cell(item_id=pk, form=role or "rot0", row=pair or ("item", pk)) for pk, pair, role in rows),
        words=lists.QUESTION_WORDS,
    )


def all_mutants(study: Study) -> bool:
    settings = settings_for(study)
    return settings is not None and settings.all_mutants


def option_answer(study: Study, payload: TrialPayload) -> str:
    """The option letter a key press chose (its position), or PayloadError for another key."""
    settings = _settings_or_refuse(study)
    letter = settings.key_codes().get(payload.code)
    if letter is None:
        keys = ", ".join(k["label"] for k in settings.key_labels())
        raise PayloadError(f"A four-option question is answered with the keys {keys} (got {payload.code}).")
    return letter


def trial_fields(item: Item) -> dict:
    """What the browser needs beyond premises and question to show a four-option trial."""
    if item.kind != ItemKind.MULTIPLE_CHOICE:
        return {}
    return {"kind": ItemKind.MULTIPLE_CHOICE, "options": list(item.options)}


def runner_keys(study: Study) -> list[dict[str, str]] | None:
    """The key of each option position, left to right, for the page (None for yes/no studies)."""
    settings = settings_for(study)
    return settings.key_labels() if settings is not None else None


__all__ = ["MC_LETTERS", "accepted_keys", "all_mutants", "is_mc_study", "mc_grid", "option_answer",
           "runner_keys", "settings_for", "trial_fields"]
