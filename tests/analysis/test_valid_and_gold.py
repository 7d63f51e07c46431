"""`valid` is the logical validity of an item's form under the study's system and `gold` the answer
expected; they differ for RULEBREAKERS, where a rulebreaker's form (MT or DS) is valid and its gold
answer is no (issue 25 item 5). Each design's registry entry says which rule its items follow; the
trial export, the analysis frames and the codebook read it."""
from __future__ import annotations

from io import StringIO

import pandas as pd
import pytest
from django.core.management import call_command

from analysis import codebook, frames
from experiments import schema
from experiments import design_registry as registry
from experiments.models import Item, ItemKind, Study
from experiments.participation.selectors import EXPORT_COLUMNS, trial_records, trials_for_export
from inference import services
from inference.models import RunStatus
from tests.factories import ItemFactory, TrialFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def mixed_study():
    """A rulebreakers study (2 pairs, one phrasing) with a modal syllogism, a dual-sided rule, a
    multiple-choice question and a catch item beside it, scored by the fake scorer."""
    call_command("generate_items", "rulebreakers", "vg", "--pairs", "2", "--variants", "follow/yes-no",
                 stdout=StringIO())
    study = Study.objects.get(slug="vg")
    ItemFactory(study=study, code="ms-valid", design="modal-syllogisms", gold_answer="yes")
    ItemFactory(study=study, code="ms-fallacy", design="modal-syllogisms", gold_answer="no")
    ItemFactory(study=study, code="ds-flipped", design="dual-sided", gold_answer="no", pair_role="flipped")
    ItemFactory(study=study, code="catch", design=registry.CATCH_ITEMS, gold_answer="yes")
    ItemFactory(study=study, code="mc", design="multiple-choice", kind=ItemKind.MULTIPLE_CHOICE, gold_answer="C",
                options=["a", "b", "c", "d"])
    model = services.language_model_create(name="fake-vg", source="test/vg", device="cpu", backend="fake")
    for kind in ("items", "multiple_choice"):
        run = services.model_run_create(study=study, language_model=model, kind=kind, scope="all")  # every item
        assert services.model_run_execute(run_id=run.pk).status == RunStatus.DONE
    return study


EXPECTED = {  # (gold, valid) by item: valid is the form's validity, gold the answer expected
    "rulebreaker": ("no", True), "non-rulebreaker": ("yes", True),
    "ms-valid": ("yes", True), "ms-fallacy": ("no", False),
    "ds-flipped": ("no", None), "catch": ("yes", None), "mc": ("C", None),
}


def _key(item_code: str, role: str) -> str:
    return role if role in ("rulebreaker", "non-rulebreaker") else item_code


def test_the_scores_frame_keeps_validity_apart_from_gold(mixed_study):
    scores = frames.scores_frame(mixed_study)
    assert len(scores) == Item.objects.filter(study=mixed_study).count() == 9
    assert str(scores["valid"].dtype) == "boolean"
    for row in scores.itertuples():
        gold, valid = EXPECTED[_key(row.item_code, row.pair_role)]
        assert row.gold == gold, row.item_code
        assert (None if pd.isna(row.valid) else bool(row.valid)) is valid, row.item_code
    breakers = scores[scores["pair_role"] == "rulebreaker"]
    assert len(breakers) == 2 and breakers["valid"].all() and set(breakers["gold"]) == {"no"}


def test_the_trial_export_says_the_same(mixed_study):
    for item in Item.objects.filter(study=mixed_study).order_by("pk"):
        TrialFactory(participant__study=mixed_study, item=item, answer="yes", correct=item.gold_answer == "yes")
    records = [dict(zip(EXPORT_COLUMNS, r)) for r in trial_records(trials_for_export(study=mixed_study))]
    assert len(records) == 9
    for record in records:
        assert (record["gold"], record["valid"]) == EXPECTED[_key(record["item_code"], record["pair_role"])]
    trials = frames.trials_frame(mixed_study)
    breaker = trials[trials["pair_role"] == "rulebreaker"]
    assert breaker["valid"].tolist() == [True, True] and breaker["gold"].tolist() == ["no", "no"]
    assert trials.loc[trials["item_code"] == "catch", "valid"].isna().all()


def test_the_codebook_says_what_valid_and_gold_mean_for_each_design(tmp_path):
    path = tmp_path / "trials.csv"
    valid = codebook.entry("data/trials.csv", "valid", path)["description"]
    gold = codebook.entry("data/scores.csv", "gold", path)["description"]
    assert valid.startswith("logical validity of the item's form under the study's system")
    assert "a rulebreaker's gold answer is still no" in valid
    assert "rulebreakers: TRUE for every item: its logical form is valid, whatever the gold answer" in valid
    assert "modal-syllogisms: TRUE exactly when the gold answer is yes" in valid
    assert "dual-sided: blank: the items have no logical form" in valid
    assert gold.startswith("the expected answer")
    assert "rulebreakers: by the item's role (000 §3.2): no for a rulebreaker" in gold
    for design in registry.all_designs():  # every design is described, in both
        assert f"{design.name}: " in valid and f"{design.name}: {design.gold}" in gold
    assert "gold answer yes)" not in schema.descriptions(schema.ITEM)["valid"]  # the old, wrong reading
    rule = codebook.entry("data/scores.csv", "decision_rule", path)["description"]
    assert rule.endswith("dual-sided: top_token; modal-distribution: relative; modal-syllogisms: relative; "
                         "multiple-choice: relative; necessitation: relative; rulebreakers: top_token")
