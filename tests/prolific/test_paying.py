"""Paying needs its own permission, stays under a per-participant ceiling and pays only the total the researcher
confirmed; amounts are checked against their fields' ranges (issue 45 item 3)."""
from __future__ import annotations

import html

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.core.management import CommandError, call_command

from experiments.models import ParticipantStatus
from prolific.models import Bonus
from prolific.services import ProlificRefused, prolific_publish
from prolific.sync import prolific_sync
from common import env
from tests.factories import ParticipantFactory, join_default_team
from tests.prolific.standin import pid as P

pytestmark = pytest.mark.django_db
ORIGIN = "https://duet.example.org"


@pytest.fixture
def approved(standin, ready_study):
    """A published study with two approved submissions (10 and 12 minutes) of participants who completed in Duet."""
    link = prolific_publish(study=ready_study, origin=ORIGIN, reward_cents=150, places=4, minutes=8)
    for name, seconds in (("a", 600), ("b", 720)):
        standin.add_submission(link.prolific_id, P(name), status="APPROVED", time_taken=seconds)
        ParticipantFactory(study=ready_study, prolific_pid=P(name), status=ParticipantStatus.COMPLETED)
    prolific_sync(study=ready_study)
    return ready_study


def _staff(client, *perms):
    user = get_user_model().objects.create_user("researcher", password="x-" * 8, is_staff=True)
    join_default_team(user)
    for app, codename in perms:
        user.user_permissions.add(Permission.objects.get(content_type__app_label=app, codename=codename))
    client.force_login(user)
    return client


def _page(response) -> str:
    return html.unescape(response.content.decode())


def test_changing_a_study_does_not_let_anyone_pay(standin, approved, client):
    researcher = _staff(client, ("experiments", "view_study"), ("experiments", "change_study"))
    url = f"/admin/prolific/{approved.pk}/"
    opened = _page(researcher.get(url))
    assert 'id="prolific-no-pay"' in opened and 'name="apply" value="yes">Apply (pay)' not in opened
    dry = _page(researcher.post(url, {"do": "bonus", "amount": "0.50", "apply": "no"}))
    assert "Total 1.00." in dry  # a dry run needs no more than changing the study
    answer = _page(researcher.post(url, {"do": "bonus", "amount": "0.50", "apply": "yes", "confirm_total": "1.00"}))
    assert "Paying bonuses needs its own permission" in answer
    assert not standin.state.payments and not Bonus.objects.exists()
    researcher.user = get_user_model().objects.get(username="researcher")
    researcher.user.user_permissions.add(Permission.objects.get(codename="pay_bonus"))
    answer = _page(researcher.post(url, {"do": "bonus", "amount": "0.50", "apply": "yes", "confirm_total": "1.00"}))
    assert "Bonuses paid" in answer and standin.paid() == {P("a"): 1, P("b"): 1}


def test_nothing_is_paid_without_the_confirmed_total_or_with_another(standin, approved, client):
    owner = _staff(client, ("experiments", "view_study"), ("experiments", "change_study"), ("prolific", "pay_bonus"))
    url = f"/admin/prolific/{approved.pk}/"
    for confirm in ("", "0.50", "100.00"):
        answer = _page(owner.post(url, {"do": "bonus", "amount": "0.50", "apply": "yes", "confirm_total": confirm}))
        assert "This run pays 1.00 GBP in all (2 participants)" in answer and "Nothing was paid" in answer
    assert not standin.state.calls[-1].path.endswith("/pay/") and not standin.state.payments
    with pytest.raises(CommandError, match="This run pays 1.00 GBP in all"):
        call_command("prolific", "bonus", approved.slug, "--amount", "0.50", "--apply")
    with pytest.raises(CommandError, match="you confirmed 0.99 GBP"):
        call_command("prolific", "bonus", approved.slug, "--amount", "0.50", "--apply", "--confirm-total", "0.99")
    assert not standin.state.payments and not Bonus.objects.exists()


def test_a_bonus_over_the_ceiling_is_refused_dry_run_included(standin, approved, client, settings):
    settings.DUET_PROLIFIC_BONUS_CEILING_CENTS = 200
    owner = _staff(client, ("experiments", "view_study"), ("experiments", "change_study"), ("prolific", "pay_bonus"))
    url = f"/admin/prolific/{approved.pk}/"
    answer = _page(owner.post(url, {"do": "bonus", "amount": "2.01", "apply": "no"}))
    assert "Ensure this value is less than or equal to 2.00" in answer  # the form's own range
    with pytest.raises(CommandError, match=r"over the ceiling of 2.00 GBP \(DUET_PROLIFIC_BONUS_CEILING\)"):
        call_command("prolific", "bonus", approved.slug, "--amount", "2.01")
    # 003's wage rule: 100.00/hour × an 11-minute median = 18.33, minus the 1.50 reward: 16.83 a participant
    with pytest.raises(CommandError, match="would be 16.83 GBP per participant"):
        call_command("prolific", "bonus", approved.slug, "--hourly-wage", "100.00", "--apply", "--confirm-total",
                     "33.66")
    answer = _page(owner.post(url, {"do": "bonus", "hourly_wage": "100.00", "apply": "no"}))
    assert "over the ceiling of 2.00 GBP" in answer
    assert not standin.state.payments and not Bonus.objects.exists()


@pytest.mark.parametrize("amount", ["99999999999", "1e9", "NaN", "-1", "0.001", "21474836.48"])
def test_amounts_outside_their_fields_ranges_are_refused(standin, approved, client, amount):
    owner = _staff(client, ("experiments", "view_study"), ("experiments", "change_study"), ("prolific", "pay_bonus"))
    answer = owner.post(f"/admin/prolific/{approved.pk}/", {"do": "bonus", "amount": amount, "apply": "no"})
    assert answer.status_code == 200 and answer.context["bonus_form"].errors
    with pytest.raises(CommandError):
        call_command("prolific", "bonus", approved.slug, "--amount", amount)
    assert not Bonus.objects.exists()


def test_a_reward_places_or_time_past_what_is_stored_is_refused(standin, ready_study):
    for field in ("reward_cents", "places", "minutes"):
        values = {"reward_cents": 150, "places": 4, "minutes": 8, field: 2**31}
        with pytest.raises(ProlificRefused, match="must be at most 2147483647"):
            prolific_publish(study=ready_study, origin=ORIGIN, **values)
    assert not standin.state.calls


@pytest.mark.parametrize("given,cents", [("", 1000), ("2.50", 250), ("21474836.47", 2_147_483_647)])
def test_the_ceiling_setting(monkeypatch, given, cents):
    monkeypatch.setenv("DUET_PROLIFIC_BONUS_CEILING", given)
    assert env.prolific_bonus_ceiling_cents() == cents


@pytest.mark.parametrize("given", ["0", "-1", "2.505", "lots", "NaN", "Infinity", "21474836.48"])
def test_a_malformed_ceiling_stops_the_process(monkeypatch, given):
    monkeypatch.setenv("DUET_PROLIFIC_BONUS_CEILING", given)
    with pytest.raises(env.SettingsError, match="DUET_PROLIFIC_BONUS_CEILING"):
        env.prolific_bonus_ceiling_cents()
