"""The participant flow's rules, service by service."""
from __future__ import annotations

from collections import Counter
from datetime import timedelta

import pytest
from django.core.exceptions import ValidationError
from django.utils import timezone

from experiments import services as study_services
from experiments.models import HumanArm, Item, KeyMapping, Participant, ParticipantStatus, StudyStatus, Trial
from experiments.participation import trials
from experiments.participation import services
from experiments.participation.payload import PayloadError, parse_trial

from .conftest import code_for, trial_data

pytestmark = pytest.mark.django_db


def start(study, n: int, *, consent: bool = True, **kw):
    """A participant arrives (and, unless consent=False, agrees: only consented participants hold a
    place and count for list and key balance)."""
    participant, created = services.participant_start(
        study=study, prolific_pid=f"pid{n:021d}", prolific_study_id="st", prolific_session_id=f"sess{n}", **kw
    )
    if consent and participant.status == ParticipantStatus.STARTED:
        participant = services.participant_consent(participant=participant, agree=True)
    return participant, created


def ready(participant):
    services.participant_consent(participant=participant, agree=True)
    services.participant_instructions_done(participant=participant)
    services.participant_practice_done(participant=participant)
    participant.refresh_from_db()
    return participant


def record(participant, index, **kw):
    payload = parse_trial(trial_data(participant, index, **kw))
    return trials.trial_record(participant=participant, payload=payload, user_agent="pytest")


def test_lists_follow_the_latin_square_and_keys_stay_balanced(open_study):
    study = open_study(interpretations=24, attention_checks=[])
    participants = [start(study, n)[0] for n in range(48)]
    items = {i.pk: i for i in study.items.all()}
    assert [p.list_number for p in participants[:24]] == list(range(24))
    for p in participants:
        shown = [items[pk] for pk in p.plan]
        assert len(shown) == 24
        assert Counter(i.form_id for i in shown) == Counter({f: 1 for f in {i.form_id for i in items.values()}})
        assert len({i.interpretation_id for i in shown}) == 24
    # 24 lists cover each of the 24 × 24 form × interpretation cells exactly once; the next 24 again
    first = Counter(pk for p in participants[:24] for pk in p.plan)
    assert len(first) == 576 and set(first.values()) == {1}
    mappings = Counter(p.key_mapping for p in participants)
    assert mappings[KeyMapping.F_YES] == mappings[KeyMapping.J_YES] == 24
    assert len({p.list_seed for p in participants}) == 48
    assert participants[0].plan != sorted(participants[0].plan)  # shuffled, from the recorded seed


def test_key_balance_counts_sessions_in_progress_not_only_completed(open_study):
    study = open_study(interpretations=24)
    first, _ = start(study, 1)
    second, _ = start(study, 2, consent=False)
    assert {first.key_mapping, second.key_mapping} == set(KeyMapping.values)
    services.participant_consent(participant=second, agree=False)  # declined: its side stays free
    third, _ = start(study, 3)
    assert third.key_mapping == second.key_mapping


def test_attention_checks_are_items_spread_through_the_list(open_study):
    study = open_study(interpretations=24)
    participant, _ = start(study, 1)
    checks = list(Item.objects.filter(study=study, design=services.ATTENTION_DESIGN).order_by("code"))
    assert len(checks) == 2 and [c.gold_answer for c in checks] == ["yes", "no"]
    assert len(participant.plan) == 26 and {c.pk for c in checks} <= set(participant.plan)
    assert participant.plan[0] not in {c.pk for c in checks}
    again, _ = start(study, 2)  # the catch items are made once per study
    assert Item.objects.filter(study=study, design=services.ATTENTION_DESIGN).count() == 2
    assert {c.pk for c in checks} <= set(again.plan)


def test_one_participation_per_pid_and_per_session(open_study):
    study = open_study(interpretations=24)
    participant, created = start(study, 1)
    again, created_again = start(study, 1)
    assert created and not created_again and again.pk == participant.pk
    with pytest.raises(services.FlowError, match="already been used by another participant"):
        services.participant_start(study=study, prolific_pid="someone-else", prolific_session_id="sess1")
    assert Participant.objects.filter(study=study).count() == 1


def test_closed_and_full_studies_take_nobody_new(open_study):
    study = open_study(interpretations=24, target_sample_size=2)
    start(study, 1)
    start(study, 2)
    with pytest.raises(services.FlowError, match="This study is full") as full:
        start(study, 3)
    assert full.value.status == 403
    start(study, 1)  # those already in may come back
    study_services.study_transition(study=study, to=StudyStatus.PAUSED)
    Participant.objects.filter(prolific_pid__endswith="2").update(status=ParticipantStatus.RETURNED)
    with pytest.raises(services.FlowError, match="not accepting participants"):
        start(study, 4)
    assert Participant.objects.filter(study=study).count() == 2


def test_silent_sessions_expire_and_free_their_place(open_study):
    study = open_study(interpretations=24, target_sample_size=1)
    first, _ = start(study, 1)
    with pytest.raises(services.FlowError, match="full"):
        start(study, 2)
    Participant.objects.filter(pk=first.pk).update(last_seen_at=timezone.now() - timedelta(hours=2))
    second, _ = start(study, 2)
    first.refresh_from_db()
    assert first.status == ParticipantStatus.RETURNED and second.status == ParticipantStatus.STARTED
    assert second.list_number == 0  # the returned participant's list is given out again


def test_preview_sessions_never_count(open_study):
    study = open_study(interpretations=24, target_sample_size=1)
    for _ in range(3):
        preview, _ = services.participant_start(study=study, prolific_pid="preview-1", preview=True)
        assert preview.is_preview
    real, _ = start(study, 1)
    assert real.status == ParticipantStatus.STARTED


def test_trials_are_saved_once_with_answer_from_the_mapping(open_study):
    study = open_study(interpretations=24, attention_checks=[])
    participant = ready(start(study, 1)[0])
    participant.key_mapping = KeyMapping.J_YES
    participant.save()
    receipt = record(participant, 0, code="KeyF", key_id="retry-key-0000000001")
    trial = receipt.trial
    assert receipt.created and trial.answer == "no" and trial.key == "f" and trial.key_code == "KeyF"
    assert trial.correct == (trial.item.gold_answer == "no") and trial.rt_ms == pytest.approx(850.0)
    assert trial.user_agent == "pytest" and trial.viewport_width == 1280
    again = record(participant, 0, code="KeyF", key_id="retry-key-0000000001")
    assert not again.created and again.trial.pk == trial.pk
    with pytest.raises(services.FlowError, match="already been answered"):
        record(participant, 0, code="KeyJ")
    with pytest.raises(PayloadError, match="already used for another trial"):
        record(participant, 1, key_id="retry-key-0000000001")
    assert Trial.objects.filter(participant=participant).count() == 1


def test_items_off_the_list_and_steps_out_of_order_are_refused(open_study):
    study = open_study(interpretations=24, attention_checks=[])
    participant, _ = start(study, 1)
    with pytest.raises(services.FlowError, match="after the consent"):
        record(participant, 0)
    services.participant_consent(participant=participant, agree=True)
    services.participant_instructions_done(participant=participant)
    with pytest.raises(services.FlowError, match="instructions and practice pages"):  # practice skipped
        record(participant, 0)
    participant = ready(participant)
    other = Item.objects.filter(study=study).exclude(pk__in=participant.plan).first()
    with pytest.raises(PayloadError, match="is not trial 0"):
        trials.trial_record(participant=participant, payload=parse_trial({**trial_data(participant, 0), "item": other.pk}))
    with pytest.raises(PayloadError, match="is not trial 24"):
        trials.trial_record(participant=participant, payload=parse_trial({**trial_data(participant, 0), "index": 24}))
    assert not Trial.objects.exists()


def test_instructions_need_consent_first(open_study):
    participant, _ = start(open_study(interpretations=24), 1, consent=False)
    with pytest.raises(services.FlowError, match="previous page"):
        services.participant_instructions_done(participant=participant)


def test_failed_attention_checks_end_the_participation_early(open_study):
    study = open_study(interpretations=24, attention_fail_after=1, attention_end_session=True)
    participant = ready(start(study, 1)[0])
    check_index = next(i for i, pk in enumerate(participant.plan) if Item.objects.get(pk=pk).design == services.ATTENTION_DESIGN)
    check = Item.objects.get(pk=participant.plan[check_index])
    wrong = "no" if check.gold_answer == "yes" else "yes"
    receipt = record(participant, check_index, code=code_for(participant, wrong))
    assert receipt.trial.is_attention_check and not receipt.trial.correct
    assert receipt.participant.status == ParticipantStatus.FAILED_ATTENTION
    with pytest.raises(services.FlowError, match="has ended"):
        record(participant, 0 if check_index else 1)


def test_completion_only_once_every_answer_is_saved(open_study):
    study = open_study(interpretations=24, items_per_participant=4, attention_checks=[])
    participant = ready(start(study, 1)[0])
    for index in range(3):
        record(participant, index)
    with pytest.raises(services.FlowError, match="1 answer\\(s\\) not saved yet \\(trials \\[3\\]\\)"):
        services.participant_finish(participant=participant)
    record(participant, 3)
    done = services.participant_finish(participant=participant)
    assert done.status == ParticipantStatus.COMPLETED and done.finished_at is not None
    assert services.participant_finish(participant=participant).status == ParticipantStatus.COMPLETED
    assert services.participant_exclude(participant=participant).status == ParticipantStatus.EXCLUDED
    with pytest.raises(services.FlowError, match="cannot go from excluded"):
        services.participant_exclude(participant=participant)


def test_a_misconfigured_arm_gives_a_clear_refusal(open_study):
    with pytest.raises(ValidationError, match="cannot open. Participants' lists cannot be drawn: Items per participant"):
        open_study(interpretations=24, items_per_participant=25)
    study = open_study(interpretations=24)
    HumanArm.objects.filter(study=study).update(items_per_participant=25)  # changed after opening
    with pytest.raises(services.FlowError, match="exceeds the 24 interpretations") as error:
        start(study, 1)
    assert error.value.status == 503 and not Participant.objects.exists()


def test_a_timed_out_trial_is_recorded_as_unanswered_and_wrong(open_study):
    study = open_study(interpretations=24, attention_checks=[], time_limit_ms=2000)
    participant = ready(start(study, 1)[0])
    data = trial_data(participant, 0, rt=2004.0, timed_out=True, key="", code="")
    trial = trials.trial_record(participant=participant, payload=parse_trial(data)).trial
    assert trial.timed_out and trial.answer == "" and trial.correct is False and trial.key_code == ""


def test_a_participant_erased_while_a_request_is_on_its_way_gets_a_clear_410(open_study):
    """The view read the participant, then an erasure deleted it before the service locked the row."""
    from experiments.participation.erasure import participant_erase

    study = open_study(interpretations=24, attention_checks=[])
    participant = ready(start(study, 1)[0])
    payload = parse_trial(trial_data(participant, 0))
    stale = Participant.objects.get(pk=participant.pk)
    from django.contrib.auth import get_user_model

    researcher = get_user_model().objects.create_user("eraser", password="x-" * 8)
    participant_erase(participant=Participant.objects.get(pk=participant.pk), by=researcher)
    for call in (lambda: trials.trial_record(participant=stale, payload=payload, user_agent="ua"),
                 lambda: services.participant_finish(participant=stale),
                 lambda: services.participant_instructions_done(participant=stale)):
        with pytest.raises(services.FlowError) as error:
            call()
        assert (error.value.status, error.value.reason) == (410, "erased")
    assert not Participant.objects.filter(pk=participant.pk).exists() and not Trial.objects.exists()


def test_a_session_resumes_only_from_the_same_prolific_session(open_study):
    study = open_study(interpretations=24)
    first, created = services.participant_start(study=study, prolific_pid="a" * 24, prolific_session_id="sess-1")
    again, created_again = services.participant_start(study=study, prolific_pid="a" * 24, prolific_session_id="sess-1")
    assert created and not created_again and again.pk == first.pk and again.token == first.token
    with pytest.raises(services.FlowError) as error:
        services.participant_start(study=study, prolific_pid="a" * 24, prolific_session_id="sess-2")
    assert (error.value.status, error.value.reason) == (409, "other_session")
    assert "another Prolific session" in error.value.message and Participant.objects.count() == 1
