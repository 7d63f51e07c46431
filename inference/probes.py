"""The knowledge probe of seed 000 §4.1: does the model know the facts a RULEBREAKERS pair rests on?

A knowledge-probe run (ModelRun.kind = knowledge_probe) asks, once per distinct city or instance
of the study's rulebreakers items, "Complete the sentence: [city] is in" ("[instance] is a type of")
and reads the next-token distribution after the prompt:

* ``p_target``: the probability of the first token of the expected country or type — summed over
  the distinct first tokens of its accepted spellings (with and without a leading "the", and the
  country's other names), each with a leading space for raw prompts and without one after a chat
  template, the way the model would continue;
* ``known``: the likeliest next token is one of those first tokens.

The report can then drop the pairs about places or instances the model does not know (000 §4.1).
A probe run goes through the one run loop (services.model_run_execute) with the probe strategy
(strategies.ProbeStrategy) and the same scorer as item runs; this module only says what is probed.
"""
from __future__ import annotations

from dataclasses import dataclass

from experiments.logic import rulebreakers
from experiments.logic.rulebreakers_data import alternative_cities, capitals
from experiments.models import Item, Study


@dataclass(frozen=True)
class Probe:
    key: str  # "<entity kind>:<city or instance>"
    prompt: str
    target: str  # the country or type as the items write it
    accepted: tuple[str, ...]


def study_probes(study: Study) -> list[Probe]:
    """One probe per distinct (entity kind, city or instance) among the study's rulebreakers items."""
    aliases = {p.city: p.aliases for p in (*capitals(), *alternative_cities())}
    seen: dict[str, Probe] = {}
    rows = (Item.objects.filter(study=study, design=rulebreakers.DESIGN).order_by("id")
            .values_list("attributes", flat=True))
    for attrs in rows:
        kind, part, whole = attrs.get("entity_kind"), attrs.get("part"), attrs.get("true_whole")
        if not (kind and part and whole):
            continue
        key = f"{kind}:{part}"
        if key not in seen:
            probe = rulebreakers.knowledge_probe(kind, whole, part, aliases.get(part, ()))
            seen[key] = Probe(key=key, prompt=probe.prompt, target=probe.expected, accepted=probe.accepted)
    return list(seen.values())
