"""003's interpretations perturbed (seed 002), pure Python: other names (each interpretation's names → other given
names), the nonsense mirror, or a custom mapping of whole words in names and verb phrases. Rendering the result
(generate.generate(design, result)) gives items whose ``original_code`` is the real item of the same interpretation
and form. The machinery every perturbation shares (labels, token mappings) is logic/perturb.py's."""
from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import replace

from logic.lexicon.given_names import given_names
from logic.perturb import TokenMapping, changed_only, check_label, real_only
from logic.wording import Proposition

from . import generate
from .generate import InterpretationSpec


def perturb_interpretations(
    specs: Sequence[InterpretationSpec],
    *,
    kind: str,
    seed: int = 0,
    names: Sequence[str] | None = None,
    mapping: TokenMapping | Mapping[str, str] | None = None,
    label: str | None = None,
) -> tuple[InterpretationSpec, ...]:
    """Perturbed interpretations; ``generate.generate(design, result)`` renders items whose
    ``original_code`` is the real item of the same interpretation and form."""
    label = check_label(label, kind)
    specs = tuple(specs)
    real_only(specs, lambda s: s.condition)
    if kind == "nonsense":
        if label != "nonsense":
            raise ValueError("the nonsense mirror always has the label 'nonsense'")
        return generate.nonsense_mirror(specs)
    if kind == "names":
        pool = list(dict.fromkeys(names if names is not None else (n.name for n in given_names(alternate=True))))
        rng = random.Random(f"perturb:names:{seed}")
        out = []
        for spec in specs:
            old = list(dict.fromkeys((spec.p.subject, spec.q.subject)))
            choices = [n for n in pool if n not in old]
            if len(choices) < len(old):
                raise ValueError(f"the name list needs at least {len(old)} names besides {old}")
            new = dict(zip(old, rng.sample(choices, len(old))))
            out.append(replace(spec, condition=label, p=replace(spec.p, subject=new[spec.p.subject]),
                               q=replace(spec.q, subject=new[spec.q.subject])))
        return tuple(out)
    if kind == "mapping":
        table = mapping if isinstance(mapping, TokenMapping) else TokenMapping.of(mapping or {})
        pairs = []
        for spec in specs:
            texts = table.apply_unit((spec.p.subject, spec.p.predicate, spec.q.subject, spec.q.predicate),
                                     f"interpretation {spec.index}")
            new = replace(spec, condition=label, p=Proposition(texts[0], texts[1]), q=Proposition(texts[2], texts[3]))
            pairs.append((spec, new))
        return changed_only(pairs, label)
    raise ValueError("003 interpretations take the perturbations names, nonsense and mapping")
