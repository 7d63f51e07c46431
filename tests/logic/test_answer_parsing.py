"""The answer parsers of generation mode (logic/answer_parsing.py): examples, properties
(hypothesis; derandomised in CI by tests/conftest.py's profile) and the Wilson interval against R."""
from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from logic.answer_parsing import (
    ANSWER_LINE, FIRST_WORD, JSON, LETTER, OTHER, PARSERS, Tally, normalise, parse, split_thinking, vocabulary, wilson,
)

YES_NO = vocabulary({"yes": ("Yes", "True", "Right"), "no": ("No", "False", "Wrong")})
LETTERS = vocabulary({x: (x,) for x in "ABCD"})


@pytest.mark.parametrize("parser,text,expected", [
    (FIRST_WORD, "True. Because Food Y contains Substance Z.", "yes"),
    (FIRST_WORD, "  **False**, the rule is wrong", "no"),
    (FIRST_WORD, "Answer: Right", "yes"),
    (FIRST_WORD, "I think the answer is yes", OTHER),
    (FIRST_WORD, "", OTHER),
    (ANSWER_LINE, "Let me think.\nThe premise holds.\nAnswer: No", "no"),
    (ANSWER_LINE, "Answer: Yes\nWait.\n**Final answer:** No.", "no"),
    (ANSWER_LINE, "Yes", OTHER),
    (JSON, 'Sure: {"reason": "x", "answer": "True"}', "yes"),
    (JSON, '```json\n{"answer": "no"}\n```', "no"),
    (JSON, '{"answer": "maybe"}', OTHER),
    (JSON, '{"answer": "yes"', OTHER),
    (JSON, '{"Answer": false}', "no"),
    (LETTER, "(C) because the others fail", "C"),
    (LETTER, "Reasoning…\nAnswer: B", "B"),
    (LETTER, "a dog is not an option", OTHER),
    (LETTER, "E.", OTHER),
])
def test_parsers_read_these_answers(parser, text, expected):
    words = LETTERS if parser == LETTER else YES_NO
    assert parse(parser, text, words) == expected


def test_an_unknown_parser_is_refused_with_the_known_ones():
    with pytest.raises(ValueError, match="first_word"):
        parse("regex", "yes", YES_NO)


def test_a_word_for_two_labels_is_refused():
    with pytest.raises(ValueError, match="both"):
        vocabulary({"yes": ("yes",), "no": ("Yes",)})


@pytest.mark.parametrize("text,thinking,answer", [
    ("<think>is it valid? yes</think>\nYes.", "is it valid? yes", "Yes."),
    ("the template opened it</think> No", "the template opened it", "No"),
    ("<think>ran out of tok", "ran out of tok", ""),
    ("No thinking here", "", "No thinking here"),
])
def test_thinking_is_kept_apart_from_the_answer(text, thinking, answer):
    assert split_thinking(text) == (thinking, answer)


# ------------------------------------------------------------------------------------ properties
words_st = st.sampled_from(["Yes", "No", "True", "False", "Right", "Wrong", "yes", "NO"])
noise = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=60)
label_of = {"yes": "yes", "true": "yes", "right": "yes", "no": "no", "false": "no", "wrong": "no"}


@given(st.text(max_size=200), st.sampled_from(sorted(PARSERS)))
def test_every_parser_gives_a_known_label_or_other_and_never_raises(text, parser):
    words = LETTERS if parser == LETTER else YES_NO
    assert parse(parser, text, words) in {*words.values(), OTHER}


@given(words_st, st.sampled_from([".", ",", "!", "", " —", ":"]), noise)
def test_first_word_reads_the_leading_answer_word_whatever_follows(word, punct, rest):
    text = f"{word}{punct} {rest}"
    assert parse(FIRST_WORD, text, YES_NO) == label_of[word.lower()]


@given(noise.filter(lambda t: "answer" not in t.lower()), words_st, noise.filter(lambda t: "\n" not in t))
def test_answer_line_reads_the_last_answer_line_after_any_reasoning(reasoning, word, tail):
    text = f"{reasoning}\nAnswer: {word} {tail}"
    assert parse(ANSWER_LINE, text, YES_NO) == label_of[word.lower()]


@given(st.dictionaries(st.text(max_size=8).filter(lambda k: k.casefold() != "answer"), st.text(max_size=8),
                       max_size=3), words_st, noise.filter(lambda t: "{" not in t))
def test_json_reads_the_answer_key_of_any_object(extra, word, prefix):
    text = prefix + json.dumps({**extra, "answer": word})
    assert parse(JSON, text, YES_NO) == label_of[word.lower()]


@given(st.sampled_from("ABCD"), st.sampled_from(["({})", "{}.", "{})", "{}", "**{}**"]), noise)
def test_letter_reads_a_leading_option_letter(letter, shape, rest):
    text = shape.format(letter) + " " + rest
    if "answer" in rest.lower() and ":" in rest:
        return  # a later "Answer:" line wins; covered by the examples
    assert parse(LETTER, text, LETTERS) == letter


@given(noise, noise)
def test_thinking_never_reaches_the_answer(thought, answer):
    thought = thought.replace("<think>", "").replace("</think>", "")
    answer = answer.replace("<think>", "").replace("</think>", "")
    assert split_thinking(f"<think>{thought}</think>{answer}") == (thought.strip(), answer.strip())


@given(st.lists(st.sampled_from(["yes", "no", OTHER]), min_size=1, max_size=50))
def test_a_tally_shares_sum_to_one_and_its_decision_is_a_most_frequent_answer(answers):
    tally = Tally(tuple(answers))
    assert sum(tally.share(x) for x in ("yes", "no", OTHER)) == pytest.approx(1.0)
    assert tally.count(tally.decision) == max(tally.count(x) for x in answers)
    low, high = tally.interval("yes")
    assert 0.0 <= low <= tally.share("yes") <= high <= 1.0


@given(st.text(max_size=20))
def test_normalise_is_idempotent(word):
    assert normalise(normalise(word)) == normalise(word)


# R: prop.test(x, n, correct = FALSE)$conf.int (the values of tests/analysis/test_paired_golden.py)
WILSON_R = [
    (8, 10, 0.49016247153664183, 0.94331784854562473),
    (3, 17, 0.061911266376209959, 0.41029458568834115),
    (0, 12, 0.0, 0.24249400665524079),
    (12, 12, 0.75750599334475921, 1.0),
    (1, 40, 0.0044268315026813922, 0.12881368963474088),
]


@pytest.mark.parametrize("k,n,low,high", WILSON_R)
def test_wilson_matches_r(k, n, low, high):
    assert wilson(k, n) == (pytest.approx(low, abs=1e-12), pytest.approx(high, abs=1e-12))


def test_the_decision_among_ties_is_the_first_sampled():
    assert Tally(("no", "yes", "yes", "no")).decision == "no"
