"""RULEBREAKERS pairs stored as written (imported from the published file or a paired bank) perturbed by names or
entities (seed 002), their published wording and ids kept: the new tokens are decided as for generated pairs
(perturb_specs.py), then replaced in each member's written premises and conclusion (logic/perturb_written.py,
which also applies a custom mapping to any paired design). Pure Python."""
from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from logic import perturb
from logic.pairs import PairedItem
from logic.perturb_written import perturb_written_pairs, require_tokens, rewrite

from . import perturb_specs, rulebreakers
from .rulebreakers import RulebreakerSpec
from .rulebreakers_data import given_names

ARTICLE = re.compile(r"^(a|an|the) ", re.IGNORECASE)


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
    render = render or rulebreakers.phrasings
    label = perturb.check_label(label, kind)
    if kind == "mapping":
        return perturb_written_pairs([m for pair in pairs for m in pair], mapping=mapping, label=label, render=render)
    perturb.real_only(tuple(pairs), lambda p: p[0].condition)
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
            for s in perturb_specs.perturb_rulebreakers(group, kind="names", seed=seed, names=names, label=label):
                new_specs[s.original_index] = s
        new = [new_specs[s.index] for s in specs]
    else:
        new = list(perturb_specs.perturb_rulebreakers(specs, kind=kind, seed=seed, label=label))
    out = []
    for (rb, nrb), old, changed in zip(pairs, specs, new):
        for member, old_whole, new_whole in ((rb, old.whole, changed.whole), (nrb, old.swapped, changed.swapped)):
            written = _written_part(member.attributes, old.part)
            new_written = _new_written_part(written, changed)
            table = perturb.TokenMapping.of({o: n for o, n in ((old.name, changed.name), (written, new_written),
                                                                (old_whole, new_whole)) if o != n})
            require_tokens(member, table)
            attributes = {"name": changed.name, "part": changed.part, "whole": new_whole,
                          "true_whole": changed.whole}
            if "entity_b" in member.attributes:
                attributes["entity_b"] = new_written
            out.append(rewrite(member, table, label, render, attributes))
    return tuple(out)
