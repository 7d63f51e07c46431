"""Prompts for generation mode (issue 28): few-shot demonstrations and chain-of-thought templates,
declared per design (designs/<family>/design.py). Pure Python, no Django.

A prompt setting turns an item into the turns a model reads: demonstrations (a question and the
answer a model should give, as user and assistant turns) then the item's own question. A chat
model reads the turns through its chat template; a raw prompt joins them (`render_raw`), each
question followed by its answer. The item's own wording is the item's prompt, as stored: a setting
adds demonstrations and a chain-of-thought request around it, never rewords it.

A design with prompt settings of its own declares them in its folder (004's two-shot chain of thought:
designs/paired/prompting.py) and names them in its registry entry (`Generation.prompts`).
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Turn:
    role: str  # "user" or "assistant"
    text: str


@dataclass(frozen=True)
class ItemText:
    """What a prompt setting reads of an item."""

    prompt: str
    variant: str = ""  # the item's phrasing, e.g. "template-3" (dual-sided)
    answer_words: Mapping[str, str] = field(default_factory=dict)  # {"yes": "True", "no": "False"}


@dataclass(frozen=True)
class PromptSetting:
    name: str
    title: str
    source: str  # where it comes from (the paper's section), shown with the run
    build: Callable[[ItemText], tuple[Turn, ...]]

    def turns(self, item: ItemText) -> tuple[Turn, ...]:
        turns = self.build(item)
        if not turns or turns[-1].role != "user":
            raise ValueError(f"prompt setting {self.name!r} must end with the item's question (a user turn)")
        return turns


def _separator(question: str, *, last: bool) -> str:
    """A question ending in a cue ("Answer:") is answered on its line: after a space in a demonstration,
    and with nothing added after the item's own (the model writes the space, " Yes", as a scored
    variant does); any other question is answered on the next line."""
    if question.rstrip().endswith(":"):
        return "" if last else " "
    return "\n"


def render_raw(turns: tuple[Turn, ...]) -> str:
    """The turns as one raw prompt: each demonstration's question, its answer, a blank line; then
    the item's question, ready for the model's answer."""
    parts: list[str] = []
    for n, turn in enumerate(turns):
        if turn.role == "user":
            parts.append(turn.text.rstrip() + _separator(turn.text, last=n == len(turns) - 1))
        else:
            parts.append(turn.text.strip() + "\n\n")
    return "".join(parts)


ZERO_SHOT = PromptSetting(
    name="zero-shot", title="zero-shot: the item's prompt alone", source="the item's own prompt",
    build=lambda item: (Turn("user", item.prompt),),
)
