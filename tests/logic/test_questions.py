"""A questionnaire question's rules (logic/questions.py): what each kind accepts, and the refusals' words."""
from __future__ import annotations

import pytest

from logic import questions as q
from logic.questions import AnswerError, QuestionRule, answer_value


def test_choice_takes_one_of_its_choices_only():
    rule = QuestionRule(kind=q.CHOICE, choices=("Yes", "No", q.PREFER_NOT))
    assert answer_value(rule, " Prefer  not to say ") == q.PREFER_NOT
    with pytest.raises(AnswerError, match="choose one of the answers"):
        answer_value(rule, "Maybe")


def test_likert_takes_a_point_of_its_scale():
    rule = QuestionRule(kind=q.LIKERT, points=7, start=1)
    assert answer_value(rule, "7") == "7" and answer_value(rule, 4) == "4"
    for bad in ("0", "8", "3.5", "x", "1e1"):
        with pytest.raises(AnswerError, match="1 to 7"):
            answer_value(rule, bad)
    assert QuestionRule(kind=q.LIKERT, points=11, start=0).scale() == tuple(range(11))


def test_number_within_its_bounds():
    rule = QuestionRule(kind=q.NUMBER, minimum=18, maximum=120)
    assert answer_value(rule, "42") == "42" and answer_value(rule, "42.0") == "42"
    with pytest.raises(AnswerError, match="from 18 to 120"):
        answer_value(rule, "121")
    with pytest.raises(AnswerError, match="whole number"):
        answer_value(rule, "30.5")
    for bad in ("nan", "inf", "abc", "1" * 50):
        with pytest.raises(AnswerError, match="number"):
            answer_value(rule, bad)
    assert answer_value(QuestionRule(kind=q.NUMBER, whole=False, minimum=0), "2,5") == "2.5"


def test_text_is_capped_and_stripped():
    short = QuestionRule(kind=q.SHORT_TEXT, max_length=11)
    assert answer_value(short, "  hello \n there ") == "hello there"
    with pytest.raises(AnswerError, match="at most 11 characters"):
        answer_value(short, "x" * 12)
    long = QuestionRule(kind=q.LONG_TEXT)
    assert long.cap() == q.DEFAULT_MAX_LENGTH[q.LONG_TEXT]
    assert answer_value(long, "line one\nline two") == "line one\nline two"
    with pytest.raises(AnswerError, match="cannot be stored"):
        answer_value(long, "a\x00b")


def test_required_needs_an_answer_and_optional_may_be_blank():
    assert answer_value(QuestionRule(kind=q.SHORT_TEXT), "   ") == ""
    with pytest.raises(AnswerError, match="needs an answer"):
        answer_value(QuestionRule(kind=q.CHOICE, required=True, choices=("a", "b")), "")
    with pytest.raises(AnswerError, match="text or a number"):
        answer_value(QuestionRule(kind=q.SHORT_TEXT), ["a"])


def test_set_up_problems_are_named():
    assert QuestionRule(kind=q.CHOICE, choices=("only",)).problems()
    assert QuestionRule(kind=q.LIKERT, points=1).problems()
    assert QuestionRule(kind=q.NUMBER, minimum=5, maximum=1).problems()
    assert not QuestionRule(kind=q.LIKERT, points=5).problems()
    assert q.parse_choices("a\n\n b \na") == ("a", "b")


def test_the_defaults_are_optional_demographics_and_the_aid_use_question_after_the_items():
    before, after = q.DEFAULT_QUESTIONNAIRES
    assert before["placement"] == "before" and after["placement"] == "after"
    assert all(not question["required"] and q.PREFER_NOT in question["choices"] for question in before["questions"])
    (aid,) = after["questions"]
    assert aid["key"] == q.AID_USE_KEY and "ChatGPT" in aid["text"]
    assert q.parse_choices(aid["choices"]) == ("Yes", "No", q.PREFER_NOT)
