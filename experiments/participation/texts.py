"""The researcher's texts (issue 47 item 1): consent, instructions, debrief and end page, written per study on
the human arm (HumanArm.consent_text, instructions_text, debrief_text, end_text; blank = the defaults in
experiments/models/human_arm.py, the pages' wording before they were editable), and how participants answer
(HumanArm.answer_input, issue 47 item 3) as the instructions say it.

Checks (`text_problems`): what participants read never holds a model's answer instruction ("Answer Yes or No
only."; design_registry.model_instruction_in, the one check item wording also passes), and names only the
{placeholders} the flow fills (human_arm.TEXT_PLACEHOLDERS). The admin's form refuses such a text with the
message, nothing saved; a study whose stored texts fail a check cannot open (readiness.open_problems).

The texts and the answer input are part of the consent review's fingerprint (consent.consent_digest,
consent.texts_digest_part): a change after the review — after the study opened — needs a new review before the
study takes new participants, exactly as a change to the consent text does.
"""
from __future__ import annotations

from collections.abc import Mapping
from types import SimpleNamespace

from ..design_registry import model_instruction_in
from ..models import AnswerInput
from ..models.human_arm import (
    DEFAULT_DEBRIEF, DEFAULT_END, DEFAULT_INSTRUCTIONS, TEXT_PLACEHOLDERS, placeholders_problem,
)
from .consent import attention_told, expected_minutes, planned_questions

TEXT_FIELDS = tuple(TEXT_PLACEHOLDERS)  # consent_text, instructions_text, debrief_text, end_text
LABELS = {"consent_text": "consent", "instructions_text": "instructions", "debrief_text": "debrief",
          "end_text": "end page"}


def text_problems(values: Mapping[str, str]) -> dict[str, str]:
    """Field → why that text cannot be shown to participants (for each of TEXT_FIELDS in `values`)."""
    problems = {}
    for field in TEXT_FIELDS:
        value = values.get(field) or ""
        shown = model_instruction_in(value)
        if shown:
            problems[field] = (f"Participants must not read a model's answer instruction, and this text contains "
                               f"{shown!r} (the model prompt's words). Participants answer with the keys or buttons "
                               "the instructions page names: remove it.")
            continue
        problem = placeholders_problem(field, value)
        if problem:
            problems[field] = problem
    return problems


def texts_problem(arm) -> str | None:
    """Why the arm's stored texts cannot be shown (a study with one cannot open), or None."""
    problems = text_problems({field: getattr(arm, field) for field in TEXT_FIELDS})
    if not problems:
        return None
    return "; ".join(f"its {LABELS[field]} text: {problem}" for field, problem in problems.items())


def keys_for(mapping: Mapping[str, str]) -> dict[str, str]:
    """'yes' / 'no' → the key ("F", "J") that means it under `mapping` (key letter → answer)."""
    return {answer: letter.upper() for letter, answer in mapping.items()}


def answer_how(arm, mapping: Mapping[str, str], option_keys=None) -> str:
    """How to answer, as the default instructions say it, for the arm's answer input and the participant's
    key mapping (`mapping`: "f"/"j" → "yes"/"no"); a four-option study's keys (`option_keys`, choice.runner_keys)
    answer its options, left to right."""
    if option_keys:
        said = [f'"{k["label"]}" for {k["letter"]}' for k in option_keys]
        return "by pressing " + ", ".join(said[:-1]) + f" and {said[-1]}"
    pressing = f'by pressing "F" for {mapping["f"].capitalize()}, and "J" for {mapping["j"].capitalize()}'
    mode = arm.input_mode()
    if mode == AnswerInput.KEYS:
        return pressing
    if mode == AnswerInput.KEYS_BUTTONS:
        return f"{pressing}, or by clicking the Yes or No button on the screen"
    return f"by tapping or clicking the Yes or No button on the screen (or, on a keyboard, {pressing})"


def fill(text: str, values: Mapping[str, object]) -> str:
    for name, value in values.items():
        text = text.replace("{" + name + "}", str(value))
    return text


def instructions(arm, *, mapping: Mapping[str, str], overview, option_keys=None) -> str | None:
    """The instructions' text as the participant reads it, placeholders filled from their overview
    (overview.session_overview) and key mapping; None for a four-option study (`option_keys`) without a text of
    its own (its page keeps the default four-option wording)."""
    if option_keys and not arm.instructions_text:
        return None
    keys = keys_for(mapping)
    return fill(arm.instructions_text or DEFAULT_INSTRUCTIONS, {
        "statements": overview.statements,
        "statement_word": "statement" if overview.single_statement else "statements",
        "answer_how": answer_how(arm, mapping, option_keys), "yes_key": keys["yes"], "no_key": keys["no"],
        "questions": overview.questions, "minutes": overview.minutes, "attention": overview.attention,
    })


def end_text(arm) -> str:
    return arm.end_text or DEFAULT_END


def debrief(arm) -> str:
    return arm.debrief_text or DEFAULT_DEBRIEF


def as_written(arm) -> dict[str, str]:
    """The texts participants read, defaults filled in (placeholders left as written), and the answer input:
    what a report records as having gone in (analysis/services.report_provenance)."""
    return {"consent": arm.consent(), "instructions": arm.instructions_text or DEFAULT_INSTRUCTIONS,
            "debrief": debrief(arm), "end": end_text(arm), "answer_input": arm.answer_input}


def preview(arm) -> dict:
    """The texts as a participant reads them, for the admin's preview of the arm: placeholders filled for a
    participant with F = Yes, two-statement questions and a list of the arm's planned length."""
    questions = planned_questions(arm)
    overview = SimpleNamespace(
        statements="two statements", single_statement=False, questions=questions, attention=attention_told(arm),
        minutes=expected_minutes(questions=questions, practice=len(arm.practice or []),
                                 seconds_per_question=arm.seconds_per_question))
    return {"instructions": instructions(arm, mapping={"f": "yes", "j": "no"}, overview=overview),
            "end": end_text(arm), "debrief": debrief(arm), "answer_input": arm.input_mode().label}
