"""004's prompt setting for generation mode (issue 28): two-shot chain of thought, answer then explain (§3.1,
Table 11 "Answer-Explain"), with one correct and one incorrect rule as the two demonstrations.
`DUAL_SIDED_TWO_SHOT_COT` is that setting; the machinery (settings, turns, raw rendering) is logic/prompting.py's.
Pure Python."""
from __future__ import annotations

import re

from logic.prompting import ItemText, PromptSetting, Turn

from . import dual_sided

# 004 §3.1: "we adopt a two-shot chain of thought (CoT) prompting strategy [39] requiring the model to
# generate a rationale after presenting its answer, using "and also explain why." We include one correct
# rule and one incorrect rule in the two demonstrations to minimize label bias."
# Table 11 (Answer-Explain): "True or False? Please predict whether the input rule is very likely to be
# true, and also explain why."
COT_REQUEST = ", and also explain why."
# The two demonstrations' rules are Table 10's example, as printed: its original (True/Right/Yes) and its
# flipped conclusion (False/Wrong/No). The paper prints no rationale for them; these two sentences are
# Duet's, written in the style of Table 12's explanation.
DEMONSTRATIONS = (
    ("Person X is allergic to Substance Z and Food Y contains Substance Z", "Person X cannot eat Food Y", True,
     "Food Y contains Substance Z, which Person X is allergic to, so eating Food Y would cause an allergic "
     "reaction; Person X cannot eat it."),
    ("Person X is allergic to Substance Z and Food Y contains Substance Z", "Person X can eat Food Y", False,
     "Food Y contains Substance Z, which Person X is allergic to, so eating Food Y would cause an allergic "
     "reaction; Person X cannot eat it."),
)
_TEMPLATE = re.compile(r"template-(\d+)$")


def with_cot_request(prompt: str, number: int) -> str:
    """The item's prompt with Table 11's request: the last sentence of Table 9's instruction ends in
    ", and also explain why." instead of its full stop."""
    instruction = dual_sided.TEMPLATES[number][0]
    last = instruction.rsplit("? ", 1)[-1]  # the sentence after the question ("Please answer Yes or No.")
    if not last.endswith(".") or last not in prompt:
        raise ValueError(f"the item's prompt does not contain template {number}'s instruction {last!r}; "
                         "its chain-of-thought request has nowhere to go")
    at = prompt.rfind(last)
    return prompt[:at] + last[:-1] + COT_REQUEST + prompt[at + len(last):]


def template_number(item: ItemText) -> int:
    match = _TEMPLATE.search(item.variant or "")
    number = int(match.group(1)) if match else 1
    if number not in dual_sided.TEMPLATES:
        raise ValueError(f"variant {item.variant!r} is not one of Table 9's templates")
    return number


def dual_sided_two_shot_cot(item: ItemText) -> tuple[Turn, ...]:
    """004's two-shot CoT: two demonstrations phrased in the item's own template (Table 9), each
    asked with the CoT request and answered with the template's word and a rationale; then the item."""
    number = template_number(item)
    turns: list[Turn] = []
    for premise, conclusion, correct, why in DEMONSTRATIONS:
        shown = dual_sided._variant(number, premise, conclusion)
        word = shown.positive if correct else shown.negative
        turns += [Turn("user", with_cot_request(_without_cue(shown.text), number)),
                  Turn("assistant", f"{word}. {why}")]
    turns.append(Turn("user", with_cot_request(_without_cue(item.prompt), number)))
    return tuple(turns)


def _without_cue(prompt: str) -> str:
    """The prompt as 004 prints it (Tables 9 and 11): without the answer cue Duet adds for scoring by
    log-probability (dual_sided.ANSWER_CUE); the model writes its answer, then its rationale."""
    cue = dual_sided.ANSWER_CUE
    stripped = prompt.rstrip()
    return stripped[: -len(cue)].rstrip() if stripped.endswith(cue) else prompt


DUAL_SIDED_TWO_SHOT_COT = PromptSetting(
    name="two-shot-cot", title="two-shot chain of thought, answer then explain (004 §3.1, Table 11)",
    source="004 §3.1 and Table 11 (Answer-Explain): the answer, then 'and also explain why.'; two demonstrations, "
           "one correct and one incorrect rule (Table 10's example)",
    build=dual_sided_two_shot_cot,
)
