"""Matched-pair perturbations (seed 002) of pairs stored as written: imported RULEBREAKERS pairs, or any
paired import, whose sentences are the publisher's and not rendered from a spec. Pure Python. A custom
mapping applies to any paired design here; RULEBREAKERS' names and entities are designs/paired/perturb_written.py's.

The perturbation decides the new tokens exactly as for generated pairs (logic/perturb.py: a name of the
same pronoun, another city of a known country or instance of the same type, a custom mapping) and then
replaces the old tokens in each member's written premises and conclusion, so the copy keeps the published
wording and the published id: the copy of pair ``rulebreakers:real:RULEBREAKER_0000246`` is
``rulebreakers:<label>:RULEBREAKER_0000246``, each member naming its original (``original_code``).
A token the written text does not contain refuses the perturbation (ValueError): replacing the name but
not the city would change the logic.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from . import perturb
from .pairs import PairedItem


def copy_id(pair_id: str, label: str) -> str:
    """The copy's pair id: the original's with its condition part replaced (<design>:<label>:<published id>)."""
    design, _, rest = pair_id.partition(":")
    _, _, published = rest.partition(":")
    return f"{design}:{label}:{published or rest}"


def rewrite(item: PairedItem, table: perturb.TokenMapping, label: str, render, attributes: Mapping) -> PairedItem:
    texts = table.apply_unit((*item.premises, item.conclusion), f"pair {item.pair_id}")
    premises, conclusion = tuple(texts[:-1]), texts[-1]
    variants = render(premises, conclusion)
    pair = copy_id(item.pair_id, label)
    return replace(item, code=f"{pair}:{item.role}", pair_id=pair, premises=premises, conclusion=conclusion,
                   question=variants[0].question, prompt=variants[0].text, variants=variants, condition=label,
                   original_code=item.code, attributes={**item.attributes, **attributes})


def require_tokens(item: PairedItem, table: perturb.TokenMapping) -> None:
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
    perturb.real_only(tuple(items), lambda i: i.condition)
    table = mapping if isinstance(mapping, perturb.TokenMapping) else perturb.TokenMapping.of(mapping or {})
    touched = {i.pair_id for i in items
               if table.apply_unit((*i.premises, i.conclusion), f"pair {i.pair_id}") != (*i.premises, i.conclusion)}
    if not touched:
        raise ValueError("the perturbation changes no item (does the mapping name any word they use?)")
    return tuple(rewrite(i, table, label, render, {}) for i in items if i.pair_id in touched)
