"""A rejection states only what participants were told (issue 43 item 6): the attention rule review applies is
stated on the consent page and in the instructions a participant reads, from the same rule object
(AttentionRule.told), and the rejection message sent to Prolific quotes exactly that sentence. A participant who
agreed to a page that did not state the rule as it now stands is left to the researcher, never rejected."""
from __future__ import annotations

import html
import re
import secrets
from datetime import timedelta

import pytest
from django.test import Client

from experiments.models import Participant, ParticipantStatus
from prolific import services
from prolific.sync import prolific_sync
from tests.factories import TrialFactory, review_consent
from tests.experiments.participation.conftest import make_open_study

pytestmark = pytest.mark.django_db
ORIGIN = "https://duet.example.org"
DESKTOP = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36"


def _text(response) -> str:
    return html.unescape(re.sub(r"\s+", " ", response.content.decode()))


def _walk(study, pid: str, session: str) -> tuple[str, str, Participant]:
    """A participant's consent page and instructions page as served, having agreed in between."""
    browser = Client(enforce_csrf_checks=True, HTTP_USER_AGENT=DESKTOP)
    entry = browser.get(f"/s/{study.slug}/", {"PROLIFIC_PID": pid, "STUDY_ID": "a" * 24, "SESSION_ID": session})
    url = entry["Location"]
    consent = browser.get(url)
    browser.post(url + "consent", {"agree": "yes", "csrfmiddlewaretoken": browser.cookies["csrftoken"].value})
    instructions = browser.get(url)
    assert 'id="instructions-text"' in instructions.content.decode()
    return _text(consent), _text(instructions), Participant.objects.get(prolific_pid=pid)


def _failed(participant, wrong: int):
    for n, pk in enumerate(participant.plan[:3]):
        TrialFactory(participant=participant, item_id=pk, index=n)
    Participant.objects.filter(pk=participant.pk).update(status=ParticipantStatus.FAILED_ATTENTION,
                                                        attention_failures=wrong)


def test_the_rejection_quotes_the_sentence_the_consent_page_and_the_instructions_showed(standin):
    study = make_open_study(attention_fail_after=2, attention_end_session=True)
    link = services.prolific_publish(study=study, origin=ORIGIN, reward_cents=150, places=4, minutes=8)
    told, late = secrets.token_hex(12), secrets.token_hex(12)
    consent, instructions, person = _walk(study, "5f1a2b3c4d5e6f7a8b9c0d1e", told)
    _failed(person, 2)
    standin.add_submission(link.prolific_id, person.prolific_pid, submission_id=told, study_code="FAILEDAC")
    # one who agreed before the consent page stated the rule (before its last review): not rejected for it
    _, _, earlier = _walk(study, "6a1a2b3c4d5e6f7a8b9c0d1e", late)
    _failed(earlier, 2)
    Participant.objects.filter(pk=earlier.pk).update(
        consented_at=study.human_arm.consent_reviewed_at - timedelta(minutes=1))
    standin.add_submission(link.prolific_id, earlier.prolific_pid, submission_id=late, study_code="FAILEDAC")

    prolific_sync(study=study)
    plan = {p.row.submission_id: p.decision for p in services.prolific_review(study=study, apply=True)}
    assert plan[told].action == "reject" and plan[late].action == "leave"
    assert "did not state the attention rule as it now stands" in plan[late].why
    [reject] = [c for c in standin.state.calls if c.body.get("action") == "REJECT"]
    assert reject.path == f"/api/v1/submissions/{told}/transition/"
    quoted = re.fullmatch(r'.*said: "(.+)" For this reason.*', reject.body["message"]).group(1)
    assert quoted == study.human_arm.attention_rule().told()
    assert "if you answer two of them wrongly" in quoted and "the study ends there" in quoted
    assert quoted in consent and quoted in instructions  # shown, word for word, before the participant began


def test_changing_the_rule_changes_the_consent_page_and_needs_a_new_review_before_anyone_is_rejected(standin):
    study = make_open_study(attention_fail_after=1)
    arm = study.human_arm
    shown = arm.attention_rule().told()
    consent, _, person = _walk(study, "7a1a2b3c4d5e6f7a8b9c0d1e", secrets.token_hex(12))
    assert shown in consent and "you still go on to the end of the study" in shown
    from experiments.participation.consent import attention_rule_shown, consent_problem

    assert attention_rule_shown(arm, person)
    arm.attention_fail_after = 3
    arm.save()
    assert "attention rule" in consent_problem(arm) and "has changed since" in consent_problem(arm)
    assert not attention_rule_shown(arm, person)  # the page no longer says what this participant read
    review_consent(study)
    arm.refresh_from_db()
    assert not attention_rule_shown(arm, person)  # agreed before the page said it: still left to the researcher
    person.consented_at = arm.consent_reviewed_at + timedelta(seconds=1)
    assert attention_rule_shown(arm, person)


def test_an_arm_without_check_questions_states_no_rule(standin):
    study = make_open_study(attention_checks=[])
    consent, _, person = _walk(study, "8a1a2b3c4d5e6f7a8b9c0d1e", secrets.token_hex(12))
    assert "attention checks with one clearly correct answer" not in consent
    from experiments.participation.consent import attention_rule_shown

    assert not attention_rule_shown(study.human_arm, person)
