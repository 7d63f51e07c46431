"""Generation mode's prompts: paper 004's two-shot chain of thought, checked against the paper's
own wording (/work/shared/seeds/004_019f4a4b16a65910.txt, quoted here), for every Table 9 template."""
from __future__ import annotations

import pytest

from experiments import design_registry as registry
from designs.paired import dual_sided
from designs.paired import prompting as ds_prompting
from logic import prompting
from logic.pairs import PromptVariant

# 004 Table 11, the Answer-Explain prompt, as printed:
TABLE_11 = "True or False? Please predict whether the input rule is very likely to be true, and also explain why."
# 004 Table 10, the dual-side example, as printed:
TABLE_10_ORIGINAL = ("If Person X is allergic to Substance Z and Food Y contains Substance Z, then Person X cannot eat "
                     "Food Y.")
TABLE_10_FLIPPED = "If Person X is allergic to Substance Z and Food Y contains Substance Z, then Person X can eat Food Y."


def _item(number: int) -> prompting.ItemText:
    rule = dual_sided.DualSidedRule(row=0, rule_id="r1", premise="Tool Y is sharp", conclusion="Person X can cut with "
                                    "Tool Y", flipped_conclusion="Person X cannot cut with Tool Y")
    item = dual_sided.dual_sided_items([rule], templates=[number])[0]
    variant: PromptVariant = item.variants[0]
    return prompting.ItemText(prompt=variant.text, variant=variant.variant_id,
                              answer_words={"yes": variant.positive, "no": variant.negative})


def test_the_dual_sided_designs_paper_setting_is_004s_two_shot_cot():
    generation = registry.get("dual-sided").generation
    assert generation.paper_prompt == "two-shot-cot"
    assert generation.prompt("paper") is ds_prompting.DUAL_SIDED_TWO_SHOT_COT


def test_template_1_asks_with_table_11s_answer_explain_wording_and_two_demonstrations_of_table_10():
    turns = ds_prompting.DUAL_SIDED_TWO_SHOT_COT.turns(_item(1))
    assert [t.role for t in turns] == ["user", "assistant", "user", "assistant", "user"]
    questions = [t.text for t in turns if t.role == "user"]
    assert all(q.startswith(TABLE_11 + "\n") for q in questions)
    assert TABLE_10_ORIGINAL in questions[0] and TABLE_10_FLIPPED in questions[1]
    # "one correct rule and one incorrect rule in the two demonstrations" (004 §3.1), answer first (Answer-Explain)
    assert turns[1].text.startswith("True. ") and turns[3].text.startswith("False. ")
    # 004 Table 12: "… and also explain why. Rule: If Person X has a job A …" (the rule line read "Input rule:")
    assert questions[2] == TABLE_11 + "\nRule: If Tool Y is sharp, then Person X can cut with Tool Y."


@pytest.mark.parametrize("number", [1, 2, 3, 4, 5])
def test_every_template_gets_the_request_once_and_its_own_answer_words(number):
    item = _item(number)
    turns = ds_prompting.DUAL_SIDED_TWO_SHOT_COT.turns(item)
    for turn in turns:
        if turn.role == "user":
            assert turn.text.count(", and also explain why.") == 1
    positive, negative = dual_sided.TEMPLATES[number][1:]
    assert turns[1].text.split(".")[0] == positive and turns[3].text.split(".")[0] == negative
    # the item's own wording is kept: only the instruction's full stop becomes the request, and the answer
    # cue Duet adds for scoring by log-probability goes (004 prints none: the model writes answer, then why)
    assert item.prompt.endswith("\n" + dual_sided.ANSWER_CUE)
    assert turns[-1].text.replace(", and also explain why.", ".") == item.prompt[: -len(dual_sided.ANSWER_CUE) - 1]
    assert not any(dual_sided.ANSWER_CUE in turn.text for turn in turns)


def test_the_raw_prompt_puts_each_answer_after_its_question_and_ends_ready_for_the_answer():
    raw = prompting.render_raw(ds_prompting.DUAL_SIDED_TWO_SHOT_COT.turns(_item(3)))
    assert raw.count("Yes or No? Please predict whether the premise entails the conclusion, and also explain why.") == 3
    assert "\nYes. Food Y contains" in raw and "\nNo. Food Y contains" in raw
    assert raw.endswith("then Person X can cut with Tool Y.\n")


def test_a_prompt_without_the_templates_instruction_is_refused():
    with pytest.raises(ValueError, match="instruction"):
        ds_prompting.with_cot_request("Is this rule right?", 1)
