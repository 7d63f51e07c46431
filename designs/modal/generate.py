"""Paper 003's items: interpretations × templates (forms.py), gold answers from the model checker.

Pure functions over frozen dataclasses; the same (design, n, seed, system, nonsense) always gives
the same items in the same order.
"""
from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache

from logic import wording
from logic.checker import Consequence, System, entails
from logic.formula import to_unicode
from logic.wording import Proposition

from .forms import Template, templates_for
from .lexicon import nonsense_phrases, real_lexicon


@dataclass(frozen=True)
class InterpretationSpec:
    index: int
    condition: str  # "real" or "nonsense"
    p: Proposition
    q: Proposition

    def meaning(self) -> dict[str, Proposition]:
        return {"p": self.p, "q": self.q}


@dataclass(frozen=True)
class FormVerdict:
    """What the checker says of one template under one system, under the relation that keys it
    (`consequence`) and under the other one (`gold_other`)."""

    template: Template
    system: str
    gold_answer: str  # "yes" / "no"
    logical_form: str
    consequence: str = Consequence.LOCAL.value
    gold_other: str = ""  # the answer under the other consequence relation

    @property
    def disagrees(self) -> bool:
        return self.template_valid != (self.gold_answer == "yes")

    @property
    def template_valid(self) -> bool:
        return self.template.template_valid


@dataclass(frozen=True)
class GeneratedItem:
    code: str
    design: str
    form_id: str
    modality: str
    argument_form: str
    rule: str
    logical_form: str
    template_valid: bool
    gold_answer: str
    logic_system: str
    consequence: str
    gold_other: str
    checker_disagrees: bool
    premises: tuple[str, ...]
    question: str
    prompt: str
    interpretation_index: int
    condition: str
    original_code: str | None  # for a nonsense item, the real item it mirrors


def sequent_text(template: Template) -> str:
    premises = ", ".join(to_unicode(p) for p in template.premises)
    return f"{premises} ⊢ {to_unicode(template.conclusion)}"


CONSEQUENCES = ("paper", "local", "global")  # "paper": each form's paper_consequence


def keying(template: Template, consequence: str = "paper") -> Consequence:
    """The relation that keys `template`: the paper's for that form, or the one asked for."""
    if consequence not in CONSEQUENCES:
        raise ValueError(f"unknown consequence {consequence!r}; choose one of {', '.join(CONSEQUENCES)}")
    return Consequence.parse(template.paper_consequence if consequence == "paper" else consequence)


@lru_cache(maxsize=None)
def verdicts(design: str, system: str = "S5", consequence: str = "paper") -> tuple[FormVerdict, ...]:
    """The checker's answer for every template of a design (cached: forms are few), under the
    relation that keys it and under the other."""
    parsed = System.parse(system)
    out = []
    for template in templates_for(design):
        used = keying(template, consequence)
        other = Consequence.GLOBAL if used is Consequence.LOCAL else Consequence.LOCAL
        answer = {c: entails(template.premises, template.conclusion, parsed, c).valid for c in (used, other)}
        out.append(
            FormVerdict(
                template=template,
                system=str(parsed.value),
                gold_answer="yes" if answer[used] else "no",
                logical_form=sequent_text(template),
                consequence=used.value,
                gold_other="yes" if answer[other] else "no",
            )
        )
    return tuple(out)


def sample_interpretations(n: int, seed: int, lexicon_size: str = "full") -> tuple[InterpretationSpec, ...]:
    """n distinct interpretations: two different names with two different verb phrases each, drawn
    from the lexicon of that size ("full", or "paper": 003 §3.4's 200 names and 204 verb phrases)."""
    lexicon = real_lexicon(lexicon_size)
    names, phrases = lexicon.names, lexicon.verb_phrases
    capacity = len(names) * (len(names) - 1) * len(phrases) * (len(phrases) - 1)
    if n < 1:
        raise ValueError("the number of interpretations must be at least 1")
    if n > capacity // 2:
        raise ValueError(f"at most {capacity // 2} distinct interpretations can be drawn")
    rng = random.Random(seed)
    seen: set[tuple[int, int, int, int]] = set()
    out: list[InterpretationSpec] = []
    while len(out) < n:
        name_p, name_q = rng.sample(range(len(names)), 2)
        phrase_p, phrase_q = rng.sample(range(len(phrases)), 2)
        key = (name_p, phrase_p, name_q, phrase_q)
        if key in seen:
            continue
        seen.add(key)
        out.append(
            InterpretationSpec(
                index=len(out),
                condition="real",
                p=Proposition(names[name_p], phrases[phrase_p]),
                q=Proposition(names[name_q], phrases[phrase_q]),
            )
        )
    return tuple(out)


def nonsense_mirror(specs: Sequence[InterpretationSpec]) -> tuple[InterpretationSpec, ...]:
    """003 §4.2.2: the same names, each real verb phrase replaced by its own non-word phrase."""
    phrases = real_lexicon().verb_phrases
    mirror = dict(zip(phrases, nonsense_phrases(), strict=True))
    return tuple(
        InterpretationSpec(
            index=spec.index,
            condition="nonsense",
            p=Proposition(spec.p.subject, mirror[spec.p.predicate]),
            q=Proposition(spec.q.subject, mirror[spec.q.predicate]),
        )
        for spec in specs
    )


def item_code(design: str, condition: str, index: int, form_id: str) -> str:
    return f"{design}:{condition}:{index:05d}:{form_id}"


def render_item(verdict: FormVerdict, spec: InterpretationSpec) -> GeneratedItem:
    template = verdict.template
    meaning = spec.meaning()
    premises = tuple(wording.sentence(p, meaning) for p in template.premises)
    conclusion = wording.clause(template.conclusion, meaning)
    original = None
    if spec.condition != "real":
        original = item_code(template.design, "real", spec.index, template.form_id)
    return GeneratedItem(
        code=item_code(template.design, spec.condition, spec.index, template.form_id),
        design=template.design,
        form_id=template.form_id,
        modality=template.modality,
        argument_form=template.argument_form,
        rule=template.rule,
        logical_form=verdict.logical_form,
        template_valid=template.template_valid,
        gold_answer=verdict.gold_answer,
        logic_system=verdict.system,
        consequence=verdict.consequence,
        gold_other=verdict.gold_other,
        checker_disagrees=verdict.disagrees,
        premises=premises,
        question=wording.question(template.conclusion, meaning),
        prompt=wording.prompt_from_text(premises, conclusion),
        interpretation_index=spec.index,
        condition=spec.condition,
        original_code=original,
    )


def generate(
    design: str,
    interpretations: Sequence[InterpretationSpec],
    *,
    system: str = "S5",
    consequence: str = "paper",
) -> Iterator[GeneratedItem]:
    """Every template of the design under every interpretation, interpretation-major."""
    forms = verdicts(design, system, consequence)
    for spec in interpretations:
        for verdict in forms:
            yield render_item(verdict, spec)


def sample(
    design: str,
    *,
    interpretations: int = 1000,
    seed: int = 0,
    nonsense: bool = False,
    system: str = "S5",
    consequence: str = "paper",
    paper_lexicon: bool = False,
) -> list[GeneratedItem]:
    """The items `make` writes with these options (items.items_generate, a new study's S5 and paper consequence),
    made without a database: the real interpretations' items, then their nonsense mirror's (the registry's
    `Design.sample`, which the benchmarks read)."""
    specs = sample_interpretations(interpretations, seed, "paper" if paper_lexicon else "full")
    conditions = [specs, nonsense_mirror(specs)] if nonsense else [specs]
    return [item for condition in conditions for item in generate(design, condition, system=system,
                                                                   consequence=consequence)]
