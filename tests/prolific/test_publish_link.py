"""Publishing a working link (issue 43 item 5): the public origin is a setting, shown on the launch panel and
used by the admin and the command; an origin participants on the internet cannot open is refused with the
reason before anything is sent; the missing token is said when the page opens; the form starts from the
panel's suggestions and keeps what was typed; the link stays on the panel once the study is open."""
from __future__ import annotations

import html

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command

from experiments.models import StudyStatus
from experiments.participation.launch import suggestion
from experiments.services import study_transition
from prolific import services
from prolific.client import NO_TOKEN
from prolific.models import ProlificStudy

pytestmark = pytest.mark.django_db
ORIGIN = "https://duet.example.org"


@pytest.fixture
def owner(client):
    client.force_login(get_user_model().objects.create_superuser("owner", password="x-" * 8))
    return client


def _text(response) -> str:
    return html.unescape(response.content.decode())


@pytest.mark.parametrize("origin,words", [
    ("http://127.0.0.1:8000", "is not https"),
    ("https://127.0.0.1:8000", "is a loopback address"),
    ("https://[::1]", "is a loopback address"),
    ("https://10.1.2.3", "is a private address"),
    ("https://192.168.0.7", "is a private address"),
    ("https://169.254.169.254", "is a link-local address"),
    ("https://100.64.0.1", "address"),  # CGNAT: not public
    ("https://0.0.0.0", "address"),
    ("https://198.51.100.7", "address"),  # a documentation block: not global
    ("https://localhost:8000", "with no domain"),
    ("https://testserver", "with no domain"),
    ("https://duet.internal", "local-only name"),
    ("https://lab.local", "local-only name"),
    ("https://duet.localhost", "local-only name"),
    ("", "No public origin is set"),
])
def test_an_origin_participants_cannot_open_is_refused_with_the_reason_and_nothing_is_sent(
        standin, ready_study, origin, words):
    with pytest.raises(services.ProlificRefused, match=words) as refused:
        services.prolific_publish(study=ready_study, origin=origin, reward_cents=150, places=4, minutes=8)
    assert "DUET_PUBLIC_ORIGIN" in str(refused.value)
    assert not standin.state.calls and not ProlificStudy.objects.exists()


@pytest.mark.parametrize("origin", ["https://duet.example.org", "https://duet.example.org:8443",
                                    "https://8.8.8.8"])
def test_public_origins_are_accepted(standin, ready_study, origin):
    link = services.prolific_publish(study=ready_study, origin=origin, reward_cents=150, places=4, minutes=8)
    sent = standin.state.studies[link.prolific_id]["external_study_url"]
    assert sent.startswith(f"{origin}/s/{ready_study.slug}/?PROLIFIC_PID=")


def test_the_admin_refuses_a_loopback_origin_and_says_so_when_the_page_opens(standin, ready_study, owner, settings):
    settings.DUET_PUBLIC_ORIGIN = "http://127.0.0.1:8000"
    url = f"/admin/prolific/{ready_study.pk}/"
    page = _text(owner.get(url))
    assert 'id="prolific-blocked"' in page and "The public origin http://127.0.0.1:8000 is not https" in page
    panel = _text(owner.get(f"/admin/experiments/study/{ready_study.pk}/change/"))
    assert 'id="launch-origin" class="launch-missing"' in panel and "is not https" in panel
    answer = _text(owner.post(url, {"do": "publish", "reward": "150", "places": "4", "minutes": "8"}))
    assert "is not https" in answer and not standin.state.calls and not ProlificStudy.objects.exists()
    with pytest.raises(CommandError, match="loopback address"):
        call_command("prolific", "publish", ready_study.slug, "--reward", "150", "--places", "4", "--minutes", "8",
                     "--origin", "https://127.0.0.1:8000")
    settings.DUET_PUBLIC_ORIGIN = ""
    with pytest.raises(CommandError, match="No public origin is set"):  # the command's default is the setting
        call_command("prolific", "publish", ready_study.slug, "--reward", "150", "--places", "4", "--minutes", "8")
    assert not standin.state.calls


def test_the_command_publishes_on_the_configured_origin(standin, ready_study, settings):
    settings.DUET_PUBLIC_ORIGIN = ORIGIN
    call_command("prolific", "publish", ready_study.slug, "--reward", "150", "--places", "4", "--minutes", "8")
    link = ProlificStudy.objects.get(study=ready_study)
    assert standin.state.studies[link.prolific_id]["external_study_url"].startswith(f"{ORIGIN}/s/")


def test_the_missing_token_is_said_when_the_page_opens_and_the_form_starts_from_the_panel_and_keeps_what_was_typed(
        standin, ready_study, owner, settings, monkeypatch):
    settings.DUET_PUBLIC_ORIGIN = ORIGIN
    monkeypatch.delenv("PROLIFIC_API_TOKEN")
    url = f"/admin/prolific/{ready_study.pk}/"
    opened = owner.get(url)
    page = _text(opened)
    assert NO_TOKEN in page and 'id="prolific-publish"' in page
    assert f"{ORIGIN}/s/{ready_study.slug}/?PROLIFIC_PID=" in page  # the link Prolific will get
    suggested = suggestion(ready_study)
    form = opened.context["publish_form"]
    assert (form["reward"].value(), form["places"].value(), form["minutes"].value()) == (
        suggested.reward_cents, suggested.places, suggested.minutes)
    panel = _text(owner.get(f"/admin/experiments/study/{ready_study.pk}/change/"))
    assert (f"Suggested for Prolific: {suggested.places} places (the target sample size), {suggested.minutes} min, "
            f"reward {suggested.reward_cents} cents") in panel
    # refused for want of a token: nothing written, the form shows what was typed
    answer = owner.post(url, {"do": "publish", "reward": "210", "places": "3", "minutes": "9"})
    assert NO_TOKEN in _text(answer) and not ProlificStudy.objects.exists() and not standin.state.calls
    assert (answer.context["publish_form"]["reward"].value(), answer.context["publish_form"]["places"].value()) == (
        "210", "3")
    assert 'value="210"' in _text(answer)
    # refused for a reward under Prolific's minimum: the same
    monkeypatch.setenv("PROLIFIC_API_TOKEN", standin.state.token)
    answer = _text(owner.post(url, {"do": "publish", "reward": "100", "places": "3", "minutes": "9"}))
    assert "give at least 135 cents" in answer and 'value="100"' in answer and not standin.state.calls
    # the next try is sent with what was typed then, never an earlier try's values
    owner.post(url, {"do": "publish", "reward": "180", "places": "5", "minutes": "9"})
    link = ProlificStudy.objects.get(study=ready_study)
    made = standin.state.studies[link.prolific_id]
    assert (made["reward"], made["total_available_places"], made["estimated_completion_time"]) == (180, 5, 9)


def test_a_failed_publish_does_not_keep_its_values_for_the_next(standin, ready_study):
    standin.fail("GET /api/v1/studies/", 400)  # the look-up for an earlier creation is refused: nothing created
    with pytest.raises(Exception):
        services.prolific_publish(study=ready_study, origin=ORIGIN, reward_cents=150, places=4, minutes=8)
    assert ProlificStudy.objects.get(study=ready_study).create_sent_at is None
    link = services.prolific_publish(study=ready_study, origin=ORIGIN, reward_cents=160, places=6, minutes=8)
    made = standin.state.studies[link.prolific_id]
    assert (link.reward_cents, link.places, made["reward"], made["total_available_places"]) == (160, 6, 160, 6)


def test_the_study_link_stays_on_the_launch_panel_after_launch(standin, ready_study, owner, settings):
    settings.DUET_PUBLIC_ORIGIN = ORIGIN
    services.prolific_publish(study=ready_study, origin=ORIGIN, reward_cents=150, places=4, minutes=8)
    change = f"/admin/experiments/study/{ready_study.pk}/change/"
    expected = f'<code id="launch-link">{ORIGIN}/s/{ready_study.slug}/?PROLIFIC_PID='
    assert expected in _text(owner.get(change))
    study_transition(study=ready_study, to=StudyStatus.OPEN)
    page = _text(owner.get(change))
    assert expected in page and 'id="launch-origin" class="launch-ok"' in page
    assert f"{ORIGIN}/s/{ready_study.slug}/" in _text(owner.get(f"/admin/prolific/{ready_study.pk}/"))
    study_transition(study=ready_study, to=StudyStatus.PAUSED)
    assert expected in _text(owner.get(change))
