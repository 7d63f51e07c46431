"""Matched-pair perturbations (seed 002) of pairs stored as written: imported RULEBREAKERS pairs, or any
paired import, whose sentences are the publisher's and not rendered from a spec. Pure Python.

The perturbation decides the new tokens exactly as for generated pairs (logic/perturb.py: a name of the
same pronoun, another city of a known country or instance of the same type, a custom mapping) and then
replaces the old tokens in each member's written premises and conclusion, so the copy keeps the published
wording and the published id: the copy of pair ``rulebreakers:real:RULEBREAKER_0000246`` is
``rulebreakers:<label>:RULEBREAKER_0000246``, each member naming its original (``original_code``).
A token the written text does not contain refuses the perturbation (ValueError): replacing the name but
not the city would change the logic.
"""
from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import replace

from . import perturb
from .pairs import PairedItem
from .rulebreakers import RulebreakerSpec
from .rulebreakers_data import given_names

ARTICLE = re.compile(r"^(a|an|the) ", re.IGNORECASE)


def copy_id(pair_id: str, label: str) -> str:
    """The copy's pair id: the original's with its condition part replaced (<design>:<label>:<published id>)."""
    design, _, rest = pair_id.partition(":")
    _, _, published = rest.partition(":")
    return f"{design}:{label}:{published or rest}"


def _rewrite(item: PairedItem, table: perturb.TokenMapping, label: str, render, attributes: Mapping) -> PairedItem:
    texts = table.apply_unit((*item.premises, item.conclusion), f"pair {item.pair_id}")
    premises, conclusion = tuple(texts[:-1]), texts[-1]
    variants = render(premises, conclusion)
    pair = copy_id(item.pair_id, label)
    return replace(item, code=f"{pair}:{item.role}", pair_id=pair, premises=premises, conclusion=conclusion,
                   question=variants[0].question, prompt=variants[0].text, variants=variants, condition=label,
                   original_code=item.code, attributes={**item.attributes, **attributes})


def _require(item: PairedItem, table: perturb.TokenMapping) -> None:
    texts = (*item.premises, item.conclusion)
    for old, _ in table.pairs:
        if not any(perturb._has_word(text, old) for text in texts):
            raise ValueError(f"pair {item.pair_id} ({item.role}): its written text does not contain {old!r}, so "
                             "the perturbation would change some of its tokens and not others")


def perturb_written_pairs(items: Sequence[PairedItem], *, mapping, label: str, render) -> tuple[PairedItem, ...]:
    """A custom mapping applied to the written premises and conclusion of every member (any paired design);
    the pairs it does not touch are left out, both members together. `render(premises, conclusion)` gives
    the design's phrasings."""
    label = perturb.check_label(label, "mapping")
    perturb._real_only(tuple(items), lambda i: i.condition)
    table = mapping if isinstance(mapping, perturb.TokenMapping) else perturb.TokenMapping.of(mapping or {})
    touched = {i.pair_id for i in items
               if table.apply_unit((*i.premises, i.conclusion), f"pair {i.pair_id}") != (*i.premises, i.conclusion)}
    if not touched:
        raise ValueError("the perturbation changes no item (does the mapping name any word they use?)")
    return tuple(_rewrite(i, table, label, render, {}) for i in items if i.pair_id in touched)


def _written_part(attributes: Mapping, part: str) -> str:
    """The city or instance as the text writes it (an instance with its article: 'a trumpet')."""
    return attributes.get("entity_b") or part


def _new_written_part(old_written: str, new: RulebreakerSpec) -> str:
    found = ARTICLE.match(old_written)
    if not found or new.entity_kind == "geographical":
        return new.part
    article = found.group(1)
    if article.lower() == "the":
        return f"{article} {new.part}"
    return f"{new.article} {new.part}" if new.article else new.part


def perturb_written_rulebreakers(pairs: Sequence[tuple[PairedItem, PairedItem]], *, kind: str, seed: int = 0,
                                 mapping=None, label: str | None = None, render=None) -> tuple[PairedItem, ...]:
    """Written RULEBREAKERS pairs (rulebreaker, non-rulebreaker) perturbed by `kind` (names, entities,
    mapping), their published wording kept. A name is replaced by one of the same pronoun (the written
    sentences use the pronoun, which stays)."""
    from . import rulebreakers

    render = render or rulebreakers.phrasings
    label = perturb.check_label(label, kind)
    if kind == "mapping":
        return perturb_written_pairs([m for pair in pairs for m in pair], mapping=mapping, label=label, render=render)
    perturb._real_only(tuple(pairs), lambda p: p[0].condition)
    specs = []
    for k, (rb, nrb) in enumerate(pairs):
        a = rb.attributes
        missing = [c for c in ("name", "pronoun", "part", "whole", "entity_kind") if not a.get(c)]
        if missing:
            raise ValueError(f"pair {rb.pair_id} has no {', '.join(missing)} (a bank without them takes only a "
                             "custom mapping: mapping:FILE.csv)")
        article = ARTICLE.match(_written_part(a, a["part"]))
        specs.append(RulebreakerSpec(
            index=k, rule=rb.rule, entity_kind=a["entity_kind"], verb=a.get("verb", ""), name=a["name"],
            pronoun=a["pronoun"], whole=a.get("true_whole") or a["whole"], part=a["part"],
            article=article.group(1).lower() if article and article.group(1).lower() != "the" else "",
            swapped=nrb.attributes.get("whole", "")))
    if kind == "names":
        new_specs = {}
        for pronoun in sorted({s.pronoun for s in specs}):
            group = [s for s in specs if s.pronoun == pronoun]
            names = [n for n in given_names(alternate=True) if n.pronoun == pronoun]
            for s in perturb.perturb_rulebreakers(group, kind="names", seed=seed, names=names, label=label):
                new_specs[s.original_index] = s
        new = [new_specs[s.index] for s in specs]
    else:
        new = list(perturb.perturb_rulebreakers(specs, kind=kind, seed=seed, label=label))
    out = []
    for (rb, nrb), old, changed in zip(pairs, specs, new):
        for member, old_whole, new_whole in ((rb, old.whole, changed.whole), (nrb, old.swapped, changed.swapped)):
            written = _written_part(member.attributes, old.part)
            new_written = _new_written_part(written, changed)
            table = perturb.TokenMapping.of({o: n for o, n in ((old.name, changed.name), (written, new_written),
                                                                (old_whole, new_whole)) if o != n})
            _require(member, table)
            attributes = {"name": changed.name, "part": changed.part, "whole": new_whole,
                          "true_whole": changed.whole}
            if "entity_b" in member.attributes:
                attributes["entity_b"] = new_written
            out.append(_rewrite(member, table, label, render, attributes))
    return tuple(out)
