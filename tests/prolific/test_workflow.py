"""Publish, sync, review and bonuses (issue 38 items 2-5) through `manage.py prolific`, against the stand-in
Prolific server: a study published once, submissions joined to Duet's participants, review by the study's
rule with nothing transitioned twice, 003's wage bonus equal to a hand computation and paid exactly once."""
from __future__ import annotations

import io
import re

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from experiments.models import ParticipantStatus
from prolific import services
from prolific.models import ApiCall, Bonus, BonusState, ProlificStudy, ReviewAction, Submission
from tests.factories import ParticipantFactory, TrialFactory
from tests.prolific.standin import pid as P

pytestmark = pytest.mark.django_db
ORIGIN = "https://duet.example.org"


def publish(study, *extra):
    call_command("prolific", "publish", study.slug, "--reward", "150", "--places", "10", "--minutes", "8",
                 "--origin", ORIGIN, *extra)
    return ProlificStudy.objects.get(study=study)


def person(study, pid, *, status=ParticipantStatus.COMPLETED, answers=2, wrong_checks=0, session=""):
    p = ParticipantFactory(study=study, prolific_pid=pid, status=status, attention_failures=wrong_checks,
                           prolific_session_id=session, consented_at=timezone.now())
    items = list(study.items.all()[:answers])
    for n, item in enumerate(items):
        TrialFactory(participant=p, item=item, index=n)
    return p


def test_publishing_creates_the_study_with_the_link_and_codes_once(standin, ready_study, capsys):
    link = publish(ready_study)
    assert link.state == "published" and link.prolific_id in standin.state.studies
    made = standin.state.studies[link.prolific_id]
    assert made["status"] == "ACTIVE" and made["reward"] == 150 and made["estimated_completion_time"] == 8
    assert made["external_study_url"] == (f"{ORIGIN}/s/{ready_study.slug}/?PROLIFIC_PID={{{{%PROLIFIC_PID%}}}}"
                                          "&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}")
    assert {(c["code"], c["code_type"]) for c in made["completion_codes"]} == {
        ("C0MPLETE", "COMPLETED"), ("FAILEDAC", "FAILED_ATTENTION_CHECK")}
    assert made["prolific_id_option"] == "url_parameters" and made["total_available_places"] == 10
    publish(ready_study)  # twice: nothing new
    assert len(standin.state.studies) == 1
    assert sum(1 for c in standin.state.calls if c.method == "POST" and c.path == "/api/v1/studies/") == 1
    calls = list(ApiCall.objects.filter(study=ready_study).values_list("method", "path", "status"))
    assert ("POST", "/api/v1/studies/", 201) in calls
    assert ("POST", f"/api/v1/studies/{link.prolific_id}/transition/", 200) in calls


def test_a_creation_whose_answer_was_lost_is_found_again_not_repeated(standin, ready_study):
    standin.fail("POST /api/v1/studies/", 502, after=True)  # created on Prolific; Duet sees a failure
    with pytest.raises(CommandError, match="answered HTTP 502"):
        publish(ready_study)
    assert len(standin.state.studies) == 1 and ProlificStudy.objects.get(study=ready_study).prolific_id == ""
    link = publish(ready_study)
    assert len(standin.state.studies) == 1 and link.prolific_id in standin.state.studies
    assert standin.state.studies[link.prolific_id]["status"] == "ACTIVE"


def test_a_reward_under_prolifics_minimum_or_an_unready_study_is_refused_with_the_numbers(standin, ready_study):
    with pytest.raises(CommandError) as caught:
        call_command("prolific", "publish", ready_study.slug, "--reward", "100", "--places", "5", "--minutes",
                     "8", "--origin", ORIGIN)
    assert "100 cents for 8 minutes is 7.50 GBP/hour, under Prolific's minimum of 9.00 GBP/hour: give at least " \
           "120 cents" in str(caught.value)
    arm = services.arm_of(ready_study)
    arm.completion_code = ""
    arm.save()
    with pytest.raises(CommandError, match="completion code set is not done"):
        publish(ready_study)
    assert not standin.state.calls and not ProlificStudy.objects.exists()


@pytest.fixture
def running(standin, ready_study):
    """A published study with five participants in Duet and six submissions on Prolific."""
    link = publish(ready_study)
    sid = link.prolific_id
    subs = {
        "good1": standin.add_submission(sid, P("good1"), time_taken=600, study_code="C0MPLETE"),
        "good2": standin.add_submission(sid, P("good2"), time_taken=720, study_code="C0MPLETE"),
        "failed2": standin.add_submission(sid, P("failed2"), time_taken=500, study_code="FAILEDAC"),
        "failed1": standin.add_submission(sid, P("failed1"), time_taken=550, study_code="C0MPLETE"),
        "empty": standin.add_submission(sid, P("empty"), time_taken=60),
        "stranger": standin.add_submission(sid, P("stranger"), time_taken=400, study_code="C0MPLETE"),
    }
    person(ready_study, P("good1"), session=subs["good1"])
    person(ready_study, P("good2"))
    person(ready_study, P("failed2"), status=ParticipantStatus.FAILED_ATTENTION, wrong_checks=2)
    person(ready_study, P("failed1"), wrong_checks=1)
    person(ready_study, P("empty"), status=ParticipantStatus.NO_CONSENT, answers=0)
    person(ready_study, P("not-on-prolific"), status=ParticipantStatus.STARTED, answers=1)
    return ready_study, subs


def test_sync_joins_submissions_to_participants_and_flags_the_odd_ones(standin, running, capsys):
    study, subs = running
    call_command("prolific", "sync", study.slug)
    out = capsys.readouterr().out
    rows = {r.prolific_pid: r for r in services.sync_rows(study=study)}
    assert rows[P("good1")].participant and rows[P("good1")].answers == 2 and rows[P("good1")].time_taken == 600
    assert rows[P("stranger")].flag == "no record in Duet"
    assert rows[P("not-on-prolific")].flag == "not listed by Prolific"
    assert rows[P("failed1")].failed_attention and not rows[P("good2")].failed_attention
    assert Submission.objects.filter(study=study).count() == 6 and "Synced: 7 rows, 2 flagged." in out
    # the list gives no time taken: each finished submission's own page is read once, not at every sync
    call_command("prolific", "sync", study.slug)
    pages = [c.path for c in standin.state.calls if c.path.rstrip("/").rsplit("/", 1)[-1] in subs.values()]
    assert sorted(pages) == sorted(f"/api/v1/submissions/{sid}/" for sid in subs.values())


def test_review_dry_run_changes_nothing_and_apply_twice_transitions_each_once(standin, running, capsys):
    study, subs = running
    call_command("prolific", "review", study.slug)
    out = capsys.readouterr().out
    assert "Dry run" in out and not standin.state.transitions and not standin.state.returns
    assert not ReviewAction.objects.exists()
    call_command("prolific", "review", study.slug, "--apply")
    call_command("prolific", "review", study.slug, "--apply")
    assert sorted(standin.state.transitions) == sorted([(subs["good1"], "APPROVE"), (subs["good2"], "APPROVE"),
                                                        (subs["failed2"], "REJECT")])
    assert standin.state.returns == [subs["empty"]]
    status = {s["participant_id"]: s["status"] for s in standin.state.submissions.values()}
    # one wrong check in an 8-minute study: Prolific's policy needs two to reject; a stranger is never approved
    assert status[P("failed1")] == status[P("stranger")] == "AWAITING REVIEW"
    reject = next(c for c in standin.state.calls if c.body.get("action") == "REJECT")
    assert len(reject.body["message"]) >= 100 and reject.body["rejection_category"] == "FAILED_CHECK"
    assert f'"{study.human_arm.attention_rule().told()}"' in reject.body["message"]
    assert ReviewAction.objects.filter(done_at__isnull=False).count() == 4


def _approve(standin, *names):
    for s in standin.state.submissions.values():
        if s["participant_id"] in {P(name) for name in names}:
            s["status"] = "APPROVED"


def paid(standin) -> dict[str, int]:
    """standin.paid() by the names the tests give participants."""
    names = {P(n): n for n in ("good1", "good2", "failed1", "failed2", "empty", "stranger")}
    return {names[p]: n for p, n in standin.paid().items()}


def pay(study, *rule):
    """What a researcher does: a dry run, then --apply confirming the total the dry run printed."""
    out = io.StringIO()
    call_command("prolific", "bonus", study.slug, *rule, stdout=out)
    total = re.search(r"To pay by this run: (\d+\.\d\d)", out.getvalue()).group(1)
    call_command("prolific", "bonus", study.slug, *rule, "--apply", "--confirm-total", total, stdout=out)
    return total


def test_the_wage_bonus_equals_the_hand_computation_and_is_paid_once_over_two_runs(standin, running, capsys):
    study, subs = running
    _approve(standin, "good1", "good2", "failed1")  # times 600, 720, 550 s: median 600 s = 10 min
    call_command("prolific", "bonus", study.slug, "--hourly-wage", "12.00")
    out = capsys.readouterr().out
    # by hand: 12.00/hour × 10 min = 2.00; minus the 1.50 reward = 0.50 each, three participants: 1.50
    assert f"{P('good1')}\t0.50\tnot paid" in out and "3 bonuses, total 1.50." in out and "Dry run" in out
    assert "To pay by this run: 1.50 (3 participants)" in out
    assert not standin.state.payments and not Bonus.objects.exists()
    pay(study, "--hourly-wage", "12.00")
    pay(study, "--hourly-wage", "12.00")
    assert paid(standin) == {"good1": 1, "good2": 1, "failed1": 1}
    assert sorted(c for _, c in standin.state.payments) == [50, 50, 50]
    assert set(Bonus.objects.values_list("state", flat=True)) == {BonusState.PAID}


def test_a_crash_between_set_up_and_pay_then_a_retry_pays_once(standin, running, monkeypatch):
    """Failures injected where they happen, the ledger never edited by hand: (1) Prolific sets the bulk
    payment up and the connection drops before its answer (the run dies between set-up and pay, knowing no
    bulk id); (2) the pay reaches Prolific and the connection drops before its answer; (3) the process
    raises inside the pay call before sending it. A retry pays each participant once, never twice."""
    from tests.prolific.standin import DROP

    study, subs = running
    _approve(standin, "good1", "good2")
    standin.fail("bonus-payments/", DROP, after=True)  # (1) the set-up made on Prolific, its answer lost
    with pytest.raises(CommandError):
        pay(study, "--amount", "0.75")
    assert len(standin.state.bulks) == 1 and not standin.state.payments  # set up there, paid nowhere
    assert set(Bonus.objects.values_list("state", flat=True)) == {BonusState.PLANNED}
    lost = next(iter(standin.state.bulks))
    pay(study, "--amount", "0.75")
    pay(study, "--amount", "0.75")
    assert paid(standin) == {"good1": 1, "good2": 1} and len(standin.state.bulks) == 2
    assert not any(lost in c.path for c in standin.state.calls if c.path.endswith("/pay/"))  # never paid
    assert set(Bonus.objects.values_list("state", flat=True)) == {BonusState.PAID}

    _approve(standin, "failed1")  # (2) paid on Prolific, the pay's answer lost on the way back
    standin.fail("/pay/", DROP, after=True)
    with pytest.raises(CommandError):
        pay(study, "--amount", "0.75")
    assert Bonus.objects.get(prolific_pid=P("failed1")).state == BonusState.PAYING
    pay(study, "--amount", "0.75")
    pay(study, "--amount", "0.75")
    assert paid(standin) == {"good1": 1, "good2": 1, "failed1": 1}
    assert Bonus.objects.get(prolific_pid=P("failed1")).state == BonusState.PAID  # found on the submission

    _approve(standin, "failed2")  # (3) the process dies in the pay call, before anything is sent
    with monkeypatch.context() as m, pytest.raises(SystemExit):
        m.setattr("prolific.client.Client.bonus_pay", _killed)
        pay(study, "--amount", "0.75")
    pay(study, "--amount", "0.75")
    # nothing on Prolific says it was paid, but a pay may be on its way (Prolific answers 202): never sent
    # again by Duet, the row left UNKNOWN for the researcher
    assert Bonus.objects.get(prolific_pid=P("failed2")).state == BonusState.UNKNOWN
    assert paid(standin) == {"good1": 1, "good2": 1, "failed1": 1}


def _killed(self, bulk_id):
    raise SystemExit("the process was killed")


def test_a_pay_whose_answer_is_lost_is_reconciled_never_repeated(standin, running, capsys):
    study, subs = running
    _approve(standin, "good1", "good2")
    standin.fail("/pay/", 500, after=True)  # paid on Prolific; Duet sees HTTP 500
    with pytest.raises(CommandError, match="answered HTTP 500"):
        pay(study, "--amount", "0.75")
    pay(study, "--amount", "0.75")
    assert paid(standin) == {"good1": 1, "good2": 1}
    assert set(Bonus.objects.values_list("state", flat=True)) == {BonusState.PAID}  # found on the submissions
    # a pay that never reached Prolific: not paid, and not paid again by Duet either (left for the researcher)
    _approve(standin, "failed1")
    standin.fail("/pay/", 500)
    with pytest.raises(CommandError):
        pay(study, "--amount", "0.75")
    pay(study, "--amount", "0.75")
    assert Bonus.objects.get(prolific_pid=P("failed1")).state == BonusState.UNKNOWN
    assert paid(standin) == {"good1": 1, "good2": 1}


def test_a_bulk_payment_whose_participants_are_not_all_claimed_is_never_paid(standin, running):
    """Two runs at once: a bulk set up by one run holds a participant whose row another run has set up again;
    the bulk is not paid (it would pay that participant twice), and the row is set up anew and paid once."""
    study, subs = running
    _approve(standin, "good1", "good2")
    call_command("prolific", "sync", study.slug)
    link = ProlificStudy.objects.get(study=study)
    stale = standin.handle("POST", "/api/v1/submissions/bonus-payments/", f"Token {standin.state.token}",
                           {"study_id": link.prolific_id, "csv_bonuses": f"{P('good1')},0.75\n{P('good2')},0.75\n"})[1]["id"]
    Bonus.objects.create(study=study, prolific_pid=P("good1"), submission_id=subs["good1"], amount_cents=75,
                         rule="a fixed 0.75 GBP", state=BonusState.SET_UP, bulk_id=stale, bulk_lines=2)
    Bonus.objects.create(study=study, prolific_pid=P("good2"), submission_id=subs["good2"], amount_cents=75,
                         rule="a fixed 0.75 GBP", state=BonusState.PAID)  # paid by another run's bulk
    pay(study, "--amount", "0.75")
    assert not standin.state.payments and Bonus.objects.get(prolific_pid=P("good1")).state == BonusState.PLANNED
    pay(study, "--amount", "0.75")
    assert paid(standin) == {"good1": 1}
    assert not any(c.path == f"/api/v1/bulk-bonus-payments/{stale}/pay/" for c in standin.state.calls)


def test_a_creation_sent_with_an_unknown_outcome_is_not_sent_again_unless_the_researcher_says_so(standin,
                                                                                                   ready_study):
    standin.fail("POST /api/v1/studies/", 503)  # not created; Duet cannot know that
    with pytest.raises(CommandError, match="answered HTTP 503"):
        publish(ready_study)
    with pytest.raises(CommandError, match="already sent, and Prolific does not list"):
        publish(ready_study)  # a second run (or one at the same time) does not create a second study
    assert not standin.state.studies
    link = publish(ready_study, "--create-again")
    assert list(standin.state.studies) == [link.prolific_id] and link.state == "published"
