"""RULEBREAKERS' prompts with the embedded SmolLM2 (raw format): the answer cue the design declares
puts the model's next-token mass on the answers (issue 27). Without it (the prompt ending at "Answer
Yes or No only.") SmolLM2 put 0.1 % of its mass on them and every decision was "other".

Measured once (2026-11-25, CPU, this code): run_model over 10 pairs × 10 phrasings (200 items, seed 0)
gave mean p(yes forms) + p(no forms) = 0.506 (Yes/No phrasings 0.452, True/False 0.560) and 6 of 200
top-token decisions "other"; 003's demo items give 0.17. The test runs a handful of items."""
from __future__ import annotations

import statistics

import pytest
from django.core.management import call_command

from experiments import design_registry as registry
from experiments.models import Item, Study
from inference import strategies
from inference.models import ModelRun, ModelScore

pytestmark = pytest.mark.django_db


def test_rulebreakers_prompts_end_in_the_cue_and_smollm2_puts_its_mass_on_the_answers():
    call_command("generate_items", "rulebreakers", "rb-smol", "--pairs", "2", "--seed", "0",
                 "--variants", "follow/yes-no", "entail/true-false")
    study = Study.objects.get(slug="rb-smol")
    cue = registry.get("rulebreakers").wording.answer_cue
    items = list(Item.objects.filter(study=study))
    assert len(items) == 8 and all(item.prompt.endswith("only.\n" + cue) for item in items)
    call_command("run_model", "rb-smol", "--model", "smollm2", "--device", "cpu", "--scope", "all", "--no-progress")
    run = ModelRun.objects.get(study=study)
    scores = list(ModelScore.objects.filter(run=run))
    assert len(scores) == 8 and {s.decision_rule for s in scores} == {"top_token"}  # 000 §4.2's rule
    with_cue = statistics.mean(s.answer_mass for s in scores)
    assert with_cue >= 0.05, with_cue

    # the same requests without the cue (the prompts as they were): the mass was not on the answers
    from inference.services import _build_scorer

    strategy = strategies.for_kind(run.kind)
    requests = strategy.requests(run, sorted(items, key=lambda i: i.pk))
    bare = [type(r)(key=r.key, text=r.text.removesuffix("\n" + cue), answers=r.answers) for r in requests]
    results = _build_scorer(run).score(bare)
    rows = strategy.rows(run, items, results)
    without = statistics.mean(row.answer_mass for row in rows)
    assert without < 0.05 < with_cue, (without, with_cue)
