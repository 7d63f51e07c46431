"""The knowledge probe of seed 000 §4.1: does the model know the facts a RULEBREAKERS pair rests on?

A knowledge-probe run (ModelRun.kind = knowledge_probe) asks, once per distinct fact among the study's items of
a design that declares a probe (registry: Design.knowledge_probe, which makes a registry.Probe from an item's
attributes; RULEBREAKERS': "Complete the sentence: [city] is in", "[instance] is a type of"), its prompt and
reads the next-token distribution after it:

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

from experiments import design_registry as registry
from experiments.design_registry import Probe  # noqa: F401  (what a design's probe hook makes; the strategy reads it)
from experiments.models import Item, Study


def probed_designs() -> str:
    """The titles of the designs a knowledge probe asks about ('Rulebreakers'), for messages."""
    return registry.probed_designs()


def study_probes(study: Study) -> list[Probe]:
    """One probe per key (a fact, such as a city's country) among the study's items of the designs that declare
    a knowledge probe, each made by its design's hook (registry: Design.knowledge_probe) from the item's
    attributes, in the items' order."""
    makers = {d.name: d.knowledge_probe for d in registry.with_probes()}
    seen: dict[str, Probe] = {}
    rows = (Item.objects.filter(study=study, design__in=list(makers)).order_by("id")
            .values_list("design", "attributes"))
    for design, attrs in rows:
        probe = makers[design](attrs or {})
        if probe is not None and probe.key not in seen:
            seen[probe.key] = probe
    return list(seen.values())
