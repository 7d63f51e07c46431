"""Multiple-choice banks (seed 001): CSV validation, circular mutants, the prompt, the import command."""
from __future__ import annotations

import pytest
from django.core.management import CommandError, call_command

from designs.multiple_choice import questions as mc
from logic.csv_table import CsvImportError
from experiments.models import Item, Study

# The passage and options of 001 Appendix H (the error-case illustration), answer A there.
CONTEXT = ("Once large crowd of people waits in line at a bus terminal or beck's first contribution will appear "
           "Monday evening, james and Ella had killed her.")
QUESTION = "Given the information provided, which conclusion is least likely to be accurate?"
OPTIONS = ["People form a line, waiting for the bus.",
           "A man doesn't play an instrument inside is a sufficient condition for the case that large crowd of "
           "people doesn't wait in line at a bus terminal.",
           "A man plays saxophone in a temple-like setting.",
           "If people form a line, waiting for the bus, it can be concluded that someone arrived at a conclusion."]


def bank(*rows: str, header: str = "id,context,question,option_a,option_b,option_c,option_d,answer,type,source") -> str:
    return "\n".join([header, *rows]) + "\n"


def row(qid="q1", answer="A", qtype="3c1e", options=OPTIONS, context=CONTEXT, extra="polished") -> str:
    quoted = ",".join(f'"{o}"' for o in options)
    return f'{qid},"{context}","{QUESTION}",{quoted},{answer},{qtype},{extra}'


def test_a_row_gives_a_question_with_its_gold_position_type_and_attributes():
    [q] = mc.parse_mc_csv(bank(row(answer="C", qtype="Missing Premise")))
    assert (q.question_id, q.row, q.gold_index, q.gold_letter, q.qtype) == ("q1", 2, 2, "C", "missing")
    assert q.options == tuple(OPTIONS) and q.context == CONTEXT and q.question == QUESTION
    assert q.attributes == {"source": "polished"}


def test_the_answer_may_be_the_correct_options_text_and_options_one_column():
    data = bank(f'q9,"{CONTEXT}","{QUESTION}","w | x | y | z",y,3e1c',
                header="item_id,passage,question,options,answer,type")
    [q] = mc.parse_mc_csv(data)
    assert q.options == ("w", "x", "y", "z") and q.gold_letter == "C" and q.qtype == "3e1c"
    [q] = mc.parse_mc_csv(bank(row(answer=f'"{OPTIONS[3]}"')))
    assert q.gold_letter == "D"


def test_circular_mutants_follow_the_papers_footnote_and_carry_the_gold_letter():
    """001 §2.2, footnote 1: (o1,o2,o3,o4), (o2,o3,o4,o1), (o3,o4,o1,o2), (o4,o1,o2,o3)."""
    q = mc.Question(row=2, question_id="q", context="c", question="?", options=("o1", "o2", "o3", "o4"), gold_index=0)
    mutants = mc.mutants(q)
    assert [m.options for m in mutants] == [("o1", "o2", "o3", "o4"), ("o2", "o3", "o4", "o1"),
                                            ("o3", "o4", "o1", "o2"), ("o4", "o1", "o2", "o3")]
    # o1 correct: at A, then D, C, B
    assert [m.gold_letter for m in mutants] == ["A", "D", "C", "B"]
    assert [m.role for m in mutants] == ["rot0", "rot1", "rot2", "rot3"]
    for m in mutants:  # the gold letter always points at the correct option's text
        assert m.options["ABCD".index(m.gold_letter)] == "o1"
        assert [m.original_index(letter) for letter in "ABCD"] == [(i + m.shift) % 4 for i in range(4)]


def test_the_prompt_is_appendix_is_instruction_then_content_question_and_lettered_options():
    prompt = mc.build_prompt(CONTEXT, QUESTION, OPTIONS)
    assert prompt.splitlines() == [
        "You need to answer in the form of 'Answer: <A/B/C/D>' without explanation.",  # 001 Appendix I
        CONTEXT, QUESTION, f"A. {OPTIONS[0]}", f"B. {OPTIONS[1]}", f"C. {OPTIONS[2]}", f"D. {OPTIONS[3]}", "Answer:",
    ]


@pytest.mark.parametrize(("data", "expected"), [
    (bank(row(answer="E")), "row 2, column 'answer': 'E' is neither a letter A–D nor the exact text"),
    (bank(row(answer="")), "row 2, column 'answer': is empty"),
    (bank(row(context="")), "row 2, column 'context': is empty"),
    (bank(row(options=["a", "b", "", "d"])), "row 2, column 'option_c': is empty"),
    (bank(row(options=["a", "b", "A", "d"])), "row 2, column 'option_a': two options have the same text"),
    (bank(row(), row()), "row 3, column 'id': 'q1' repeats row 2"),
    (bank(row(qid="")), "row 2, column 'id': is empty"),
    (bank(row(qid="has space")), "row 2, column 'id': 'has space' contains white space"),
    (bank(row(), header="id,context,question,option_a,option_b,option_c,answer,type,source"),
     "row 1, column 'option_d': need the columns option_a"),
    (bank(row(), header="id,text,question,option_a,option_b,option_c,option_d,answer,type,source"),
     "row 1, column 'context': required column is missing"),
    (bank(f'q9,"{CONTEXT}","{QUESTION}","w | x | y",w,3e1c', header="id,context,question,options,answer,type"),
     "row 2, column 'options': needs exactly four non-empty options"),
])
def test_each_error_names_its_row_and_column(data, expected):
    with pytest.raises(CsvImportError) as info:
        mc.parse_mc_csv(data)
    assert any(str(e).startswith(expected) for e in info.value.errors), info.value.errors


def test_all_errors_are_collected_and_nothing_is_returned():
    with pytest.raises(CsvImportError) as info:
        mc.parse_mc_csv(bank(row(qid="a", answer="X"), row(qid="b"), row(qid="c", context="")))
    assert [(e.row, e.column) for e in info.value.errors] == [(2, "answer"), (4, "context")]
    with pytest.raises(CsvImportError, match="already exists in this study"):
        mc.parse_mc_csv(bank(row(qid="old")), existing_ids=frozenset({"old"}))


@pytest.mark.django_db
def test_the_command_stores_each_question_with_its_four_linked_mutants(tmp_path, capsys):
    path = tmp_path / "bank.csv"
    path.write_text(bank(row(qid="q1", answer="B"), row(qid="q2", answer="D", qtype="3e1c")), encoding="utf-8")
    call_command("import_items", "multiple-choice", str(path), "mc-study")
    assert "Imported 2 multiple-choice questions into 'mc-study': 8 items" in capsys.readouterr().out
    study = Study.objects.get(slug="mc-study")
    assert study.design == "multiple-choice"
    items = {i.code: i for i in Item.objects.filter(study=study)}
    assert sorted(items) == [f"q{n}.rot{k}" for n in (1, 2) for k in range(4)]
    original = items["q1.rot0"]
    assert original.kind == "multiple_choice" and original.original_id is None
    assert original.options == OPTIONS and original.gold_answer == "B" and original.premises == [CONTEXT]
    assert original.form_id == "3c1e" and original.attributes["source"] == "polished"
    assert original.prompt == mc.build_prompt(CONTEXT, QUESTION, OPTIONS)
    for k in range(1, 4):
        mutant = items[f"q1.rot{k}"]
        assert (mutant.pair_id, mutant.pair_role, mutant.original_id) == ("q1", f"rot{k}", original.pk)
        assert mutant.options == OPTIONS[k:] + OPTIONS[:k]
        assert mutant.options["ABCD".index(mutant.gold_answer)] == OPTIONS[1]
        assert f"A. {mutant.options[0]}" in mutant.prompt
    assert [items[f"q2.rot{k}"].gold_answer for k in range(4)] == ["D", "C", "B", "A"]
    arm = study.human_arm  # a new multiple-choice study gets four-option practice and checks
    assert all(len(q["options"]) == 4 for q in [*arm.practice, *arm.attention_checks])


@pytest.mark.django_db
def test_a_bad_bank_imports_nothing_and_a_repeated_question_is_refused(tmp_path):
    path = tmp_path / "bank.csv"
    path.write_text(bank(row(qid="q1"), row(qid="q2", answer="Z")), encoding="utf-8")
    with pytest.raises(CommandError, match=r"row 3, column 'answer'"):
        call_command("import_items", "multiple-choice", str(path), "mc-bad")
    assert not Study.objects.filter(slug="mc-bad").exists() and not Item.objects.exists()
    path.write_text(bank(row(qid="q1")), encoding="utf-8")
    call_command("import_items", "multiple-choice", str(path), "mc-again")
    with pytest.raises(CommandError, match="'q1' already exists in this study"):
        call_command("import_items", "multiple-choice", str(path), "mc-again")
    assert Item.objects.filter(study__slug="mc-again").count() == 4
