"""Study state machine and item immutability once a study has responses."""
from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction

from designs.modal.items import items_generate

from experiments import services
from experiments.models import HumanArm, Item, ItemsLocked, StudyStatus
from tests.factories import ItemFactory, StudyFactory, TrialFactory, review_consent

pytestmark = pytest.mark.django_db


def test_study_moves_only_along_its_state_machine():
    study = StudyFactory()
    with pytest.raises(ValidationError, match="no items yet"):
        services.study_transition(study=study, to=StudyStatus.OPEN)
    ItemFactory(study=study)
    review_consent(study)
    HumanArm.objects.filter(study=study).update(items_per_participant=1)
    services.study_transition(study=study, to=StudyStatus.OPEN)
    services.study_transition(study=study, to=StudyStatus.PAUSED)
    services.study_transition(study=study, to=StudyStatus.OPEN)
    services.study_transition(study=study, to=StudyStatus.CLOSED)
    study.refresh_from_db()
    assert study.status == StudyStatus.CLOSED
    with pytest.raises(ValidationError, match="cannot go from closed to open"):
        services.study_transition(study=study, to=StudyStatus.OPEN)
    with pytest.raises(ValidationError, match="not a study status"):
        services.study_transition(study=study, to="running")
    study.refresh_from_db()
    assert study.status == StudyStatus.CLOSED


def test_items_are_editable_before_any_response():
    item = ItemFactory()
    services.item_update(item=item, question="Can we infer that Ann is baking a cake?")
    item.refresh_from_db()
    assert item.question == "Can we infer that Ann is baking a cake?"
    with pytest.raises(ValidationError, match="Cannot edit gold_answer"):
        services.item_update(item=item, gold_answer="no")


def test_items_are_immutable_once_the_study_has_a_response():
    trial = TrialFactory()
    item = trial.item
    other = ItemFactory(study=item.study)
    original_question = other.question
    with pytest.raises(ItemsLocked, match="already has responses"):
        services.item_update(item=other, question="changed?")
    other.question = "changed?"
    with pytest.raises(ItemsLocked, match="cannot be edited"):
        other.save()
    with pytest.raises(ItemsLocked, match="cannot be deleted"):
        other.delete()
    with pytest.raises(ItemsLocked, match="Cannot update items"):
        Item.objects.filter(study=item.study).update(question="bulk")
    with pytest.raises(ItemsLocked, match="Cannot delete items"):
        Item.objects.filter(study=item.study).delete()
    with pytest.raises(ItemsLocked):
        items_generate(study=item.study, design="necessitation", interpretations=1)
    assert Item.objects.get(pk=other.pk).question == original_question
    assert Item.objects.filter(study=item.study).count() == 2


def test_items_of_other_studies_stay_editable():
    TrialFactory()
    free = ItemFactory()
    services.item_update(item=free, question="still editable?")
    assert Item.objects.get(pk=free.pk).question == "still editable?"


def test_a_trial_index_is_saved_once_per_participant():
    trial = TrialFactory()
    with pytest.raises(IntegrityError), transaction.atomic():
        TrialFactory(participant=trial.participant, item=trial.item, index=trial.index)


def test_item_codes_are_unique_within_a_study():
    item = ItemFactory()
    with pytest.raises(IntegrityError), transaction.atomic():
        ItemFactory(study=item.study, code=item.code)
    ItemFactory(code=item.code)  # another study may reuse it


def test_a_model_score_also_locks_the_items():
    from inference.models import LanguageModel, ModelRun, ModelScore

    item = ItemFactory()
    other = ItemFactory(study=item.study)
    run = ModelRun.objects.create(
        study=item.study, language_model=LanguageModel.objects.create(name="m", source="/models/m")
    )
    ModelScore.objects.create(
        run=run, item=item, logprobs={" Yes": -1.0}, token_ids={" Yes": 1}, p_yes=0.37, p_no=0.2,
        relative_p_yes=0.65, soft_accuracy=0.65, decision="yes", perplexity=9.8, prompt_tokens=30,
        answer_mass=0.57,
    )
    with pytest.raises(ItemsLocked, match="model scores"):
        services.item_update(item=other, question="changed?")
    with pytest.raises(ItemsLocked):
        items_generate(study=item.study, design="necessitation", interpretations=1)
    with pytest.raises(ItemsLocked):
        Item.objects.filter(study=item.study).delete()
    assert Item.objects.filter(study=item.study).count() == 2
