"""A study's declared factors: what its items vary by, and so what Table 1 and the humans-vs-models
model are by (issue 25 item 2). `declared_factors(study)` is the one reader.

Where they come from, first found:
1. `study.settings["factors"]`: names a researcher gave at import (`import_items … --factors a b`, the
   admin's upload form) or in the study's settings editor;
2. the design registry (designs/<family>/design.py): each design a study's items come from
   declares its factors (paper 003's designs: modality and argument form).

A factor is an item field (modality, argument form, condition, …: a column of the report's frames)
or one of a CSV bank's descriptive columns (kept in Item.attributes). Names are checked against the
study's items with a message that lists what exists; nothing is stored when one is wrong.

It sits in the experiments app, below analysis, because the app's CSV import and the study's settings
editor check factors too (no import runs upward; issue 29 item 4); analysis/factors.py re-exports it
beside what the report does with factors (the values frame, the join, R names). No pandas here.
"""
from __future__ import annotations

import re

from . import design_registry as registry
from . import schema
from .design_registry import CATCH_ITEMS

SETTING = "factors"
# Item fields a study may name as factors: the name a researcher writes → the frames' column.
FIELDS = {"modality": "modality", "argument_form": "argform", "argform": "argform", "condition": "condition",
          "form_id": "form_id", "pair_role": "pair_role", "variant": "variant", "design": "design"}
FIELD_SOURCES = {"modality": "modality", "argform": "argument_form", "condition": "condition", "form_id": "form_id",
                 "pair_role": "pair_role", "variant": "variant", "design": "design"}
# The frames' own columns and the model's: a descriptive column named so cannot be a factor as is.
RESERVED = ({c.name for c in (*schema.ITEM, *schema.TRIAL, *schema.SCORE)} | {"agent", "item", "participant"}
            ) - set(FIELDS)


def normalise(names) -> list[str]:
    """Names as given (a list, or text separated by spaces or commas): stripped, empties and repeats dropped."""
    if names is None:
        return []
    if isinstance(names, str):
        names = re.split(r"[\s,]+", names)
    if not isinstance(names, (list, tuple)) or not all(isinstance(n, str) for n in names):
        raise ValueError("factors must be a list of column names")
    return list(dict.fromkeys(n.strip() for n in names if n and n.strip()))


def check(names, attributes) -> list[str]:
    """The factors `names` in canonical form (item fields as the frames' columns; descriptive columns
    as the items store them, matched regardless of case), or ValueError naming each unknown one and
    listing the columns the items have. Pure: `attributes` is the set of the items' descriptive columns."""
    names = normalise(names)
    attributes = set(attributes)
    lower = {a.lower(): a for a in sorted(attributes)}
    found, unknown = [], []
    for name in names:
        if name in FIELDS:
            found.append(FIELDS[name])
        elif name in attributes:
            found.append(name)
        elif name.lower() in lower:
            found.append(lower[name.lower()])
        else:
            unknown.append(name)
    clash = [n for n in found if n in RESERVED]
    if unknown or clash:
        described = ", ".join(sorted(attributes - RESERVED)) or "none"
        parts = []
        if unknown:
            parts.append(f"no column named {', '.join(repr(n) for n in unknown)} among the items")
        if clash:
            parts.append(f"{', '.join(repr(n) for n in clash)} is a column Duet's frames already use; rename it in "
                         "the CSV")
        raise ValueError(f"Factors: {'; '.join(parts)}. The items' factor columns are the fields "
                         f"{', '.join(sorted(k for k in FIELDS if k != 'argform'))} and their descriptive columns "
                         f"({described}).")
    return list(dict.fromkeys(found))


def attribute_keys(study) -> set[str]:
    """Every descriptive column any of the study's items has."""
    keys: set[str] = set()
    for attributes in study.items.exclude(attributes={}).values_list("attributes", flat=True).iterator():
        keys.update((attributes or {}).keys())
    return keys


def validate(study, names) -> list[str]:
    """`names` checked against `study`'s items (ValueError with the message of `check`)."""
    names = normalise(names)
    attributes = attribute_keys(study) if any(n not in FIELDS for n in names) else set()
    return check(names, attributes)


def for_designs(designs) -> list[str]:
    """The factors the registry declares for these designs, in the registry's order, each once."""
    found: list[str] = []
    for name in sorted(set(designs)):
        try:
            found += registry.get(name).factors
        except ValueError:  # the catch items, or a design no longer registered
            continue
    return list(dict.fromkeys(found))


def study_designs(study) -> list[str]:
    """The designs the study's items come from (its catch items left out)."""
    return sorted(set(study.items.exclude(design=CATCH_ITEMS).order_by().values_list("design", flat=True).distinct()))


def declared_factors(study, *, designs=None) -> list[str]:
    """The study's factors: its settings' when it names some, else its designs' (see the module);
    `designs`: the study's designs where the caller has them (its item summary), else read here."""
    given = normalise((study.settings or {}).get(SETTING))
    if given:
        return check(given, attribute_keys(study) if any(n not in FIELDS for n in given) else set())
    return for_designs(study_designs(study) if designs is None else designs)


# Participant factors (issue 47 item 2): questionnaire questions whose answers the report splits people by
# (analysis/participant_factors.py), named by their keys in study.settings["participant_factors"]. A
# multiple-choice or Likert question of the study's questionnaires; its key must not be a column the frames use.
PARTICIPANT_SETTING = "participant_factors"
PARTICIPANT_KINDS = ("choice", "likert")


def check_participant(names, questions: dict[str, str], columns=frozenset()) -> list[str]:
    """`names` checked against `questions` (key → kind, the study's questions): the keys in order, or ValueError
    naming each unknown or unusable one and listing the questions that can be factors. A key that is also one of
    `columns` (the study's items' own columns, attribute_keys) is refused: joined into the people's frames by that
    name, the answer would replace the items' column. Pure."""
    names = normalise(names)
    clash = [n for n in names if n in columns]
    if clash:
        raise ValueError(f"Participant factors: {', '.join(repr(n) for n in clash)} "
                         f"{'is' if len(clash) == 1 else 'are'} also a column of the study's items, so the answers "
                         "would replace that column in the people's data: give the question another key.")
    usable = sorted(k for k, kind in questions.items() if kind in PARTICIPANT_KINDS and k not in RESERVED
                    and k not in FIELDS)
    wrong = [n for n in names if n not in usable]
    if wrong:
        raise ValueError(f"Participant factors: {', '.join(repr(n) for n in wrong)} "
                         f"{'is' if len(wrong) == 1 else 'are'} not a multiple-choice or Likert question of the "
                         f"study's questionnaires (by its key). The questions that can be: {', '.join(usable) or 'none'}.")
    return names


def question_kinds(study) -> dict[str, str]:
    from .models import Question

    return dict(Question.objects.filter(questionnaire__arm__study=study).values_list("key", "kind"))


def participant_factors(study) -> list[str]:
    """The study's participant factors as stored, checked against its questions (ValueError when one is gone)."""
    given = normalise((study.settings or {}).get(PARTICIPANT_SETTING))
    return check_participant(given, question_kinds(study), attribute_keys(study)) if given else []
