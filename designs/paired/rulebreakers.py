"""The RULEBREAKERS design (seed 000): rulebreakers paired with non-rulebreakers. Pure Python.

Four templates (Table 1): modus tollens (MT) and disjunctive syllogism (DS) × geographical
(country, city) and categorical (type, instance) entity pairs, filled with the verbs of §3.1 and
given names with pronouns. A rulebreaker's conclusion follows by the rule's form but contradicts
the premises given what everyone knows (Stockholm is in Sweden): gold "no". Its non-rulebreaker
counterpart (§3.2) swaps the country or type for another one, in the premises and the conclusion
alike; the conclusion then follows and fits the facts: gold "yes". The pair differs only there.

Every item carries the ten phrasings of §4.2 (five questions × Yes/No or True/False) as prompt
variants in the format of Appendix G; models are scored on every variant, humans see one.
The full design is 2 rules × (cities × 6 verbs + 91 instances × 2 verbs) × 5 names pairs, as in
§3.3 (12,800 rulebreakers with the paper's 183 capitals); ``pairs`` draws a subset of that.
"""
from __future__ import annotations

import random
from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass, replace

from logic.pairs import PairedItem, PromptVariant, register_kind
from .rulebreakers_data import Category, GivenName, Place, alternative_cities, capitals, categories, given_names

DESIGN = "rulebreakers"
RULES = ("MT", "DS")
ENTITY_KINDS = ("geographical", "categorical")
ROLES = ("rulebreaker", "non-rulebreaker")
GOLD = ("no", "yes")  # §3.2: reject the rulebreaker's conclusion, accept its counterpart's
register_kind(DESIGN, ROLES, GOLD)
NAMES_PER_COMBINATION = 5  # §3.1: five names and pronouns per entity pair + verb
LOGICAL_FORMS = {"MT": "P → ¬Q, Q ⊢ ¬P", "DS": "P ∨ Q, ¬Q ⊢ P"}  # Table 1's premise-conclusion structures

QUESTIONS = (
    ("follow", "Does the Conclusion follow from the Premises?"),
    ("entail", "Do the Premises entail the Conclusion?"),
    ("inferred", "Can the Conclusion be inferred from the Premises?"),
    ("deduced", "Can the Conclusion be deduced from the Premises?"),
    ("support", "Do the Premises support the Conclusion?"),
)
ANSWER_OPTIONS = (
    ("yes-no", "Answer Yes or No only.", "Yes", "No"),
    ("true-false", "Answer True or False only.", "True", "False"),
)


@dataclass(frozen=True)
class Verb:
    """A verb phrase with its affirmed and denied forms (third person singular, any tense)."""

    key: str
    affirmed: str
    denied: str
    instance_article: str = "none"  # categorical: "definite" (the trumpet), "indefinite" (a goose), "none"


GEOGRAPHICAL_VERBS = (
    Verb("is in", "is in", "is not in"),
    Verb("was born in", "was born in", "was not born in"),
    Verb("died in", "died in", "did not die in"),
    Verb("will be visiting", "will be visiting", "will not be visiting"),
    Verb("had studied in", "had studied in", "had not studied in"),
    Verb("has been to", "has been to", "has not been to"),
)
_ANIMAL = (Verb("saw", "saw", "did not see", "indefinite"), Verb("caught", "caught", "did not catch", "indefinite"))
_INSTRUMENT = (Verb("plays", "plays", "does not play", "definite"), Verb("owns", "owns", "does not own", "indefinite"))
_SKILL = (Verb("is good at", "is good at", "is not good at"), Verb("is competing in", "is competing in", "is not competing in"))
CATEGORICAL_VERBS = {
    "bird": _ANIMAL, "fish": _ANIMAL, "insect": _ANIMAL,
    "stringed instrument": _INSTRUMENT, "brass instrument": _INSTRUMENT, "woodwind instrument": _INSTRUMENT,
    "martial art": _SKILL, "racket sport": _SKILL,
}
VERBS = {verb.key: verb for verb in (*GEOGRAPHICAL_VERBS, *_ANIMAL, *_INSTRUMENT, *_SKILL)}


def swappable_types(type_: str) -> tuple[str, ...]:
    """Types a non-rulebreaker may use instead of ``type_``: the others that share its verbs."""
    group = CATEGORICAL_VERBS[type_]
    return tuple(t for t, verbs in CATEGORICAL_VERBS.items() if verbs is group and t != type_)


@dataclass(frozen=True)
class RulebreakerSpec:
    """Everything that decides one pair; rendering it gives the rulebreaker and its counterpart."""

    index: int
    rule: str  # MT / DS
    entity_kind: str  # geographical / categorical
    verb: str  # a key of VERBS
    name: str
    pronoun: str
    whole: str  # the true country or type ("Sweden", "brass instrument")
    part: str  # the city or instance ("Stockholm", "trumpet")
    article: str  # the instance's indefinite article ("a"/"an"; "" for activities and cities)
    swapped: str  # the other country or type used by the non-rulebreaker
    condition: str = "real"  # "real", or a perturbation's label
    original_index: int | None = None  # for a perturbed spec, the index of the spec it perturbs

    @property
    def pair_id(self) -> str:
        return pair_id(self.condition, self.index)


def pair_id(condition: str, index: int) -> str:
    return f"{DESIGN}:{condition}:{index:05d}"


def _instance(spec: RulebreakerSpec, verb: Verb) -> str:
    if spec.entity_kind == "geographical" or verb.instance_article == "none":
        return spec.part
    if verb.instance_article == "definite":
        return f"the {spec.part}"
    return f"{spec.article} {spec.part}"


def _end(text: str) -> str:
    return text if text.endswith(".") else text + "."  # "… Washington, D.C." takes no second stop


def sentences(spec: RulebreakerSpec, whole: str) -> tuple[tuple[str, str], str]:
    """(premise 1, premise 2), conclusion of the spec's template with ``whole`` as country/type."""
    verb = VERBS[spec.verb]
    name, pronoun, part = spec.name, spec.pronoun, _instance(spec, verb)
    if spec.entity_kind == "geographical":
        some, no = whole, whole
        either = f"either {part} or somewhere in {whole}"
    else:
        some, no = f"some kind of {whole}", f"any kind of {whole}"
        either = f"either {part} or some kind of {whole}"
    if spec.rule == "MT":
        premises = (f"If {name} {verb.affirmed} {some}, then {pronoun} {verb.denied} {part}.",
                    _end(f"{name} {verb.affirmed} {part}"))
        conclusion = f"{name} {verb.denied} {no}."
    else:
        premises = (_end(f"{name} {verb.affirmed} {either}"), f"{name} {verb.denied} {no}.")
        conclusion = _end(f"{name} {verb.affirmed} {part}")
    return premises, conclusion


# After Appendix G's user message the chat template opens the assistant's turn, so the model's next
# token is its answer. A raw prompt has no turns: the answer cue stands in for them (the chat format
# drops it again, inference/scorers/hf.py), so that in both formats the next token is the answer.
ANSWER_CUE = "Answer:"


def prompt_text(premises: Sequence[str], conclusion: str, question: str, answer: str) -> str:
    """Appendix G's user message (premises, conclusion, question and answer instruction), then the
    answer cue on its own line."""
    return f"Premises: {' '.join(premises)}\nConclusion: {conclusion}\n{question} {answer}\n{ANSWER_CUE}"


def participant_question(conclusion: str, question: str) -> str:
    """What a participant reads under the premises: the conclusion, then §4.2's question, without the
    model's answer instruction (participants answer with the Yes/No keys)."""
    return f"Conclusion: {conclusion} {question}"


def phrasings(premises: Sequence[str], conclusion: str) -> tuple[PromptVariant, ...]:
    """The ten prompt variants of §4.2, question-major ("follow/yes-no", "follow/true-false", …); a
    variant's question is the participants' (no answer instruction), its text the model's prompt."""
    out = []
    for qid, question in QUESTIONS:
        for aid, answer, positive, negative in ANSWER_OPTIONS:
            out.append(PromptVariant(f"{qid}/{aid}", participant_question(conclusion, question), positive, negative,
                                     prompt_text(premises, conclusion, question, answer)))
    return tuple(out)


def render(spec: RulebreakerSpec) -> tuple[PairedItem, PairedItem]:
    """The rulebreaker (gold "no") and its non-rulebreaker (gold "yes") of one spec."""
    out = []
    for role, whole, gold in (("rulebreaker", spec.whole, "no"), ("non-rulebreaker", spec.swapped, "yes")):
        premises, conclusion = sentences(spec, whole)
        variants = phrasings(premises, conclusion)
        original = None
        if spec.original_index is not None:
            original = f"{pair_id('real', spec.original_index)}:{role}"
        out.append(PairedItem(
            code=f"{spec.pair_id}:{role}",
            design=DESIGN,
            pair_id=spec.pair_id,
            role=role,
            form_id=f"{spec.rule}.{spec.entity_kind}",
            rule=spec.rule,
            premises=premises,
            conclusion=conclusion,
            gold_answer=gold,
            question=variants[0].question,
            prompt=variants[0].text,
            variants=variants,
            condition=spec.condition,
            original_code=original,
            attributes={
                "rule": spec.rule, "logical_form": LOGICAL_FORMS[spec.rule],
                "entity_kind": spec.entity_kind, "verb": spec.verb,
                "name": spec.name, "pronoun": spec.pronoun, "part": spec.part,
                "whole": whole, "true_whole": spec.whole,
            },
        ))
    return out[0], out[1]


def render_all(specs: Sequence[RulebreakerSpec]) -> Iterator[PairedItem]:
    for spec in specs:
        yield from render(spec)


def without_subjects(items: Sequence[PairedItem], subjects: Collection[str]) -> tuple[PairedItem, ...]:
    """Drop every item (so whole pairs) about a city or instance a model failed to place (§4.1)."""
    unknown = set(subjects)
    return tuple(item for item in items if item.attributes.get("part") not in unknown)


def _check(values: Sequence[str], allowed: Sequence[str], what: str) -> tuple[str, ...]:
    values = tuple(values)
    bad = [v for v in values if v not in allowed]
    if bad or not values:
        raise ValueError(f"{what} must be a non-empty selection of {', '.join(allowed)}; got {list(values)}")
    return tuple(v for v in allowed if v in values)


def rulebreaker_specs(
    *,
    seed: int = 0,
    names_per_combination: int = NAMES_PER_COMBINATION,
    pairs: int | None = None,
    rules: Sequence[str] = RULES,
    entity_kinds: Sequence[str] = ENTITY_KINDS,
    places: Sequence[Place] | None = None,
    instances: Sequence[Category] | None = None,
    names: Sequence[GivenName] | None = None,
) -> tuple[RulebreakerSpec, ...]:
    """The design's pairs, deterministic for a seed.

    For every entity pair and verb, ``names_per_combination`` names are drawn without
    replacement and used under each rule; each rulebreaker gets a random other country (or
    another type that takes the same verbs) for its non-rulebreaker. ``pairs`` keeps a random
    subset of that many pairs in design order; an index always names the same pair for a seed.
    """
    rules = _check(rules, RULES, "rules")
    entity_kinds = _check(entity_kinds, ENTITY_KINDS, "entity kinds")
    places = tuple(capitals() if places is None else places)
    instances = tuple(categories() if instances is None else instances)
    names = tuple(given_names() if names is None else names)
    if not 1 <= names_per_combination <= len(names):
        raise ValueError(f"names per combination must be between 1 and {len(names)}, got {names_per_combination}")
    countries = sorted({p.country for p in places})
    if "geographical" in entity_kinds and len(countries) < 2:
        raise ValueError("geographical pairs need cities in at least two countries")
    rng = random.Random(seed)
    combos: list[tuple[str, str, str, str, str]] = []  # kind, verb, whole, part, article
    if "geographical" in entity_kinds:
        combos += [("geographical", v.key, p.country, p.city, "") for p in places for v in GEOGRAPHICAL_VERBS]
    if "categorical" in entity_kinds:
        combos += [("categorical", v.key, c.type, c.instance, c.article)
                   for c in instances for v in CATEGORICAL_VERBS[c.type]]
    specs: list[RulebreakerSpec] = []
    for kind, verb, whole, part, article in combos:
        drawn = rng.sample(names, names_per_combination)
        for rule in RULES:
            for given in drawn:
                others = [c for c in countries if c != whole] if kind == "geographical" else swappable_types(whole)
                swapped = rng.choice(others)
                if rule in rules:
                    specs.append(RulebreakerSpec(len(specs), rule, kind, verb, given.name, given.pronoun,
                                                 whole, part, article, swapped))
    if pairs is not None:
        if not 1 <= pairs <= len(specs):
            raise ValueError(f"the number of pairs must be between 1 and {len(specs)}, got {pairs}")
        keep = sorted(random.Random(f"{seed}:subset").sample(range(len(specs)), pairs))
        specs = [specs[i] for i in keep]
    return tuple(specs)


def generate_rulebreakers(**options) -> tuple[PairedItem, ...]:
    """Rendered items of ``rulebreaker_specs(**options)``: rulebreaker then non-rulebreaker, pair by pair."""
    return tuple(render_all(rulebreaker_specs(**options)))


def with_condition(spec: RulebreakerSpec, condition: str, **changes) -> RulebreakerSpec:
    """A perturbed copy of a real spec, linked to it by index."""
    return replace(spec, condition=condition, original_index=spec.index, **changes)


# ----------------------------------------------------------------------------- knowledge probe


@dataclass(frozen=True)
class KnowledgeProbe:
    """§4.1: does the model know that the city lies in its country (the instance is of its type)?"""

    entity_kind: str
    subject: str  # the city or instance
    prompt: str
    expected: str  # the country or type, as written in the items
    accepted: tuple[str, ...]  # every answer that counts as knowing it (aliases, without "the")


def knowledge_probe(entity_kind: str, whole: str, part: str, aliases: Sequence[str] = ()) -> KnowledgeProbe:
    if entity_kind == "geographical":
        prompt = f"Complete the sentence: {part} is in"
    elif entity_kind == "categorical":
        prompt = f"Complete the sentence: {part} is a type of"
    else:
        raise ValueError(f"unknown entity kind {entity_kind!r}")
    bare = whole[4:] if whole.startswith("the ") else whole
    accepted = tuple(dict.fromkeys((whole, bare, *aliases)))
    return KnowledgeProbe(entity_kind, part, prompt, whole, accepted)


def knowledge_probes(specs: Sequence[RulebreakerSpec]) -> tuple[KnowledgeProbe, ...]:
    """One probe per distinct (entity kind, city or instance) in the specs, in order of appearance."""
    aliases = {p.city: p.aliases for p in (*capitals(), *alternative_cities())}
    seen: dict[tuple[str, str], KnowledgeProbe] = {}
    for spec in specs:
        key = (spec.entity_kind, spec.part)
        if key not in seen:
            seen[key] = knowledge_probe(spec.entity_kind, spec.whole, spec.part, aliases.get(spec.part, ()))
    return tuple(seen.values())
