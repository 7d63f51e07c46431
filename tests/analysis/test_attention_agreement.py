"""One definition of a failed attention check (experiments/participation/attention.py): the study
page's count, the participants list's filter, the participants' statuses and the report's
exclusions agree on a study with failed checks. Answers go through the trial endpoint's service, so
on PostgreSQL the one-statement save counts the failures and on SQLite the locked path does."""
from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from analysis import frames, prep
from analysis.services import exclusions_for
from experiments.models import Item, Participant, ParticipantStatus
from experiments.participation import selectors, services, trials
from experiments.participation.payload import parse_trial
from experiments.models.attention import AttentionRule
from tests.experiments.participation.conftest import code_for, make_open_study, trial_data

pytestmark = pytest.mark.django_db


def _take_part(study, n: int, *, wrong_checks: int) -> Participant:
    """A participant who answers every question, the first `wrong_checks` catch items wrongly and the
    rest right, then finishes if the session is still going."""
    participant, _ = services.participant_start(
        study=study, prolific_pid=f"pid{n:021d}", prolific_study_id="st", prolific_session_id=f"sess{n}")
    services.participant_consent(participant=participant, agree=True)
    services.participant_instructions_done(participant=participant)
    services.participant_practice_done(participant=participant)
    participant.refresh_from_db()
    wrong = wrong_checks
    for index, item_id in enumerate(participant.plan):
        item = Item.objects.get(pk=item_id)
        answer = item.gold_answer
        if item.design == "attention-check" and wrong:
            answer, wrong = ("no" if answer == "yes" else "yes"), wrong - 1
        data = trial_data(participant, index, code=code_for(participant, answer))
        trials.trial_submit(slug=study.slug, token=participant.token, payload=parse_trial(data), user_agent="pytest")
        participant.refresh_from_db()
        if participant.status != ParticipantStatus.STARTED:
            return participant
    services.participant_finish(participant=participant)
    participant.refresh_from_db()
    return participant


def _admin_count(client, study, value: str) -> int:
    url = reverse("admin:experiments_participant_changelist")
    response = client.get(url, {"study__id__exact": study.pk, "attention": value})
    assert response.status_code == 200
    return response.context_data["cl"].result_count


@pytest.mark.parametrize(("fail_after", "end_session", "wrong", "statuses", "failed"), [
    # one wrong answer fails; participants go on to the end
    (1, False, [0, 1, 2, 0, 1], ["completed"] * 5, [False, True, True, False, True]),
    # two wrong answers fail and end the session there; one wrong answer is forgiven
    (2, True, [0, 1, 2, 0, 1], ["completed", "completed", "failed_attention", "completed", "completed"],
     [False, False, True, False, False]),
])
def test_study_page_participants_list_statuses_and_report_agree(client, fail_after, end_session, wrong, statuses,
                                                                failed):
    study = make_open_study(interpretations=24, items_per_participant=6, practice=[],
                            attention_fail_after=fail_after, attention_end_session=end_session)
    people = [_take_part(study, n, wrong_checks=w) for n, w in enumerate(wrong)]
    assert [p.status for p in people] == statuses
    rule = AttentionRule(fail_after=fail_after, end_session=end_session)
    assert [rule.failed(failures=p.attention_failures, status=p.status) for p in people] == failed
    expected = {f"P{p.pk}" for p, f in zip(people, failed) if f}

    progress = selectors.study_progress(study=study)
    assert progress.failed_attention == len(expected)
    assert progress.failed_attention_ended == statuses.count("failed_attention")
    assert progress.usable == len(people) - len(expected)

    staff = get_user_model().objects.create_superuser("owner", password="x-" * 8)
    client.force_login(staff)
    assert _admin_count(client, study, "failed") == len(expected)
    assert _admin_count(client, study, "passed") == len(people) - len(expected)
    page = client.get(reverse("admin:experiments_study_change", args=[study.pk])).content.decode()
    assert f"{len(expected)} ({statuses.count('failed_attention')} ended there; rule: {rule.describe()})" in page

    trials = frames.trials_frame(study)
    assert set(trials.loc[trials["failed_attention"], "participant"]) == expected
    rules = exclusions_for(study=study)
    kept, table = prep.apply_exclusions(trials, rules)
    row = table.set_index("rule").loc["failed attention check"]
    assert row["participants_affected"] == len(expected)
    assert set(kept["participant"]) == {f"P{p.pk}" for p in people} - expected
    assert rule.describe() in "; ".join(rules.describe())


def test_a_session_ended_as_failed_stays_failed_when_the_rule_is_relaxed():
    study = make_open_study(interpretations=24, items_per_participant=6, practice=[],
                            attention_fail_after=1, attention_end_session=True)
    person = _take_part(study, 1, wrong_checks=1)
    assert person.status == ParticipantStatus.FAILED_ATTENTION
    study.human_arm.attention_fail_after = 3
    study.human_arm.save()
    assert selectors.study_progress(study=study).failed_attention == 1
    trials = frames.trials_frame(study)
    assert trials["failed_attention"].all()


def test_the_rule_needs_at_least_one_wrong_answer():
    with pytest.raises(ValueError, match="at least one"):
        AttentionRule(fail_after=0)
