"""The flow over HTTP, as a browser and as a bot would walk it (CSRF enforced throughout)."""
from __future__ import annotations

import html
import json

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse

from experiments.models import Participant, ParticipantStatus, Trial

from .conftest import code_for, trial_data
from tests.factories import join_default_team

pytestmark = pytest.mark.django_db

DESKTOP = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36"
PHONE = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 Mobile/15E148"


@pytest.fixture
def browser():
    return Client(enforce_csrf_checks=True, HTTP_USER_AGENT=DESKTOP)


def entry(client, study, pid="5f1a2b3c4d5e6f7a8b9c0d1e", session="sess-1"):
    return client.get(f"/s/{study.slug}/", {"PROLIFIC_PID": pid, "STUDY_ID": "prolific-study", "SESSION_ID": session})


def csrf(client):
    return client.cookies["csrftoken"].value


def post_form(client, url, data=None):
    return client.post(url, {**(data or {}), "csrfmiddlewaretoken": csrf(client)})


def post_json(client, url, body, token=None):
    return client.post(url, json.dumps(body), content_type="application/json",
                       HTTP_X_CSRFTOKEN=csrf(client) if token is None else token)


def walk_to_trials(client, study):
    response = entry(client, study)
    assert response.status_code == 302
    session_url = response["Location"]
    page = client.get(session_url)
    assert b"id=\"consent-text\"" in page.content
    post_form(client, session_url + "consent", {"agree": "yes"})
    page = client.get(session_url)
    assert b"id=\"instructions-text\"" in page.content
    post_form(client, session_url + "instructions")
    participant = Participant.objects.get(token=session_url.rstrip("/").split("/")[-1])
    return session_url, participant


def test_missing_or_malformed_parameters_get_a_clear_page(client, open_study):
    study = open_study()
    response = client.get(f"/s/{study.slug}/", {"PROLIFIC_PID": "abc"})
    assert response.status_code == 400 and b"STUDY_ID, SESSION_ID" in response.content
    response = client.get(f"/s/{study.slug}/", {"PROLIFIC_PID": "<script>", "STUDY_ID": "s", "SESSION_ID": "x"})
    assert response.status_code == 400 and b"PROLIFIC_PID" in response.content
    assert client.get("/s/no-such-study/").status_code == 404
    assert not Participant.objects.exists()


def test_parameter_names_are_per_study(client, open_study):
    study = open_study(pid_param="pid", study_param="sid", session_param="ses")
    response = client.get(f"/s/{study.slug}/", {"pid": "p1", "sid": "s1", "ses": "x1"})
    assert response.status_code == 302 and Participant.objects.get().prolific_pid == "p1"


def test_phones_get_the_incompatible_device_code(open_study):
    study = open_study()
    phone = Client(HTTP_USER_AGENT=PHONE)
    response = entry(phone, study)
    assert response.status_code == 302 and response["Location"].endswith("/incompatible/")
    page = phone.get(response["Location"])
    assert b"NODEVICE" in page.content and b"cc=NODEVICE" in page.content
    assert not Participant.objects.exists()


def test_the_phone_page_leads_back_to_prolific_with_its_code_or_without_one(open_study):
    """Issue 29: the phone page built its link only from a code; with none set it was a dead end."""
    study = open_study()
    phone = Client(HTTP_USER_AGENT=PHONE)
    page = phone.get(entry(phone, study)["Location"]).content.decode()
    assert 'id="redirect" href="https://app.prolific.com/submissions/complete?cc=NODEVICE"' in page
    assert 'id="code">NODEVICE<' in page and "Go back to Prolific (with the code NODEVICE)" in page
    bare = open_study(incompatible_device_code="")
    page = phone.get(entry(phone, bare)["Location"]).content.decode()
    assert 'id="redirect" href="https://app.prolific.com/">Go back to Prolific</a>' in page
    assert "choose “Return” for this study there" in page and "cc=" not in page
    assert not Participant.objects.exists()


def test_a_device_the_page_finds_without_a_keyboard_ends_the_session_as_returned(browser, open_study):
    """A tablet whose browser says it is a desktop passes the entry; the consent page's own check sends its
    form: the session ends as returned (it stayed "in progress" before) and the page asks for a keyboard,
    with the study's code. The instructions page carries the same form; a wrong method changes nothing."""
    study = open_study()
    session_url = entry(browser, study)["Location"]
    participant = Participant.objects.get()
    consent = browser.get(session_url).content.decode()
    url = reverse("participant:no_keyboard", kwargs={"slug": study.slug, "token": participant.token})
    assert f'<form id="no-keyboard" method="post" action="{url}" hidden>' in consent
    assert browser.get(url).status_code == 405 and browser.post(url).status_code == 403  # CSRF stays on
    response = post_form(browser, url)
    assert response.status_code == 302 and response["Location"] == f"/s/{study.slug}/incompatible/"
    page = browser.get(response["Location"]).content.decode()
    assert "A keyboard is needed" in page and 'id="code">NODEVICE<' in page
    participant.refresh_from_db()
    assert participant.status == ParticipantStatus.RETURNED and participant.finished_at is not None
    ended = browser.get(session_url).content.decode()  # the link again: the session has ended, and says why
    assert 'id="ended">This session has ended: it was returned (on a phone or tablet' in ended
    assert post_form(browser, url)["Location"] == session_url  # again: refused, the session page says it ended
    participant.refresh_from_db()
    assert participant.status == ParticipantStatus.RETURNED


def test_a_session_with_answers_is_not_screened_out(browser, open_study):
    study = open_study(interpretations=24, items_per_participant=4, attention_checks=[], practice=[])
    session_url, participant = walk_to_trials(browser, study)
    instructions_form = f'action="/s/{study.slug}/p/{participant.token}/no-keyboard"'
    assert post_json(browser, session_url + "trial", trial_data(participant, 0)).status_code == 201
    response = post_form(browser, session_url + "no-keyboard")
    assert response.status_code == 302 and response["Location"] == session_url
    participant.refresh_from_db()
    assert participant.status == ParticipantStatus.STARTED
    fresh = Client(enforce_csrf_checks=True, HTTP_USER_AGENT=DESKTOP)
    other = entry(fresh, study, pid="another-participant", session="sess-2")["Location"]
    fresh.get(other)
    post_form(fresh, other + "consent", {"agree": "yes"})
    assert instructions_form.replace(participant.token, other.rstrip("/").split("/")[-1]) in \
        fresh.get(other).content.decode()  # the instructions page checks too


def test_consent_shows_the_default_wording_with_the_institution(browser, open_study):
    study = open_study(institution="Example University")
    page = browser.get(entry(browser, study)["Location"])
    assert b"scientific research project at Example University" in page.content
    assert b"at least 18 years of age" in page.content


@pytest.mark.parametrize("sent", [{}, {"agree": ""}, {"agree": "YES"}, {"agree": "maybe"}, {"agree": "no "},
                                  # issue 26 item 12: a repeated field is no answer, whichever comes last
                                  {"agree": ["yes", "no"]}, {"agree": ["no", "yes"]}, {"agree": ["yes", "yes"]}])
def test_only_an_explicit_answer_counts_on_the_consent_page(browser, open_study, sent):
    study = open_study()
    session_url = entry(browser, study)["Location"]
    browser.get(session_url)
    response = post_form(browser, session_url + "consent", sent)
    assert response.status_code == 400 and b"one of the two buttons" in response.content
    participant = Participant.objects.get()
    assert participant.status == ParticipantStatus.STARTED and participant.consented_at is None  # nothing changed
    assert post_form(browser, session_url + "consent", {"agree": "yes"}).status_code == 302
    assert Participant.objects.get().consented_at is not None


def test_declining_ends_politely_with_the_no_consent_redirect(browser, open_study):
    study = open_study()
    session_url = entry(browser, study)["Location"]
    browser.get(session_url)
    post_form(browser, session_url + "consent", {"agree": "no"})
    page = browser.get(session_url)
    assert b"You chose not to take part" in page.content
    assert b"Please <strong>return the study on Prolific</strong>" in page.content
    assert b'enter <span class="code" id="code">NOCONSENT</span>' in page.content
    assert b"https://app.prolific.com/submissions/complete?cc=NOCONSENT" in page.content  # a link, no automatic jump
    assert b"data-redirect" not in page.content
    assert Participant.objects.get().status == ParticipantStatus.NO_CONSENT
    post_form(browser, session_url + "consent", {"agree": "yes"})  # no way back in
    assert Participant.objects.get().consented_at is None


def test_declining_without_a_no_consent_code_still_says_to_return_the_study(browser, open_study):
    study = open_study(no_consent_code="")
    session_url = entry(browser, study)["Location"]
    browser.get(session_url)
    post_form(browser, session_url + "consent", {"agree": "no"})
    page = browser.get(session_url).content.decode()
    assert "return the study on Prolific" in page and "code" not in page.split('id="return-instruction"')[1].split("</p>")[0]
    assert "submissions/complete" not in page


def test_instructions_show_the_assigned_mapping(browser, open_study):
    study = open_study()
    session_url, participant = walk_to_trials(browser, study)
    other = Client(enforce_csrf_checks=True, HTTP_USER_AGENT=DESKTOP)
    other_url = entry(other, study, pid="second", session="sess-2")["Location"]
    other.get(other_url)
    post_form(other, other_url + "consent", {"agree": "yes"})
    page = html.unescape(other.get(other_url).content.decode())  # the instructions are a text the page escapes
    second = Participant.objects.get(prolific_pid="second")
    assert second.key_mapping != participant.key_mapping
    expected = '"F" for No, and "J" for Yes' if second.key_mapping == "j_yes" else '"F" for Yes, and "J" for No'
    assert expected in page


def test_a_bot_walk_is_refused_at_every_shortcut(browser, open_study):
    study = open_study(interpretations=24, items_per_participant=3, attention_checks=[], practice=[])
    session_url, participant = walk_to_trials(browser, study)
    trial_url = session_url + "trial"
    good = trial_data(participant, 0)
    # no CSRF token, another participant's token, unknown session: refused
    assert post_json(browser, trial_url, good, token="").status_code == 403
    assert post_json(browser, f"/s/{study.slug}/p/not-a-real-token/trial", good).status_code == 404
    # malformed bodies: clear 4xx messages
    assert browser.post(trial_url, "{not json", content_type="application/json",
                        HTTP_X_CSRFTOKEN=csrf(browser)).json()["error"] == "The body must be JSON."
    for change, message in [
        ({"item": participant.plan[1]}, "is not trial 0"),
        ({"code": "KeyA", "key": "a"}, "Only the F and J keys"),
        ({"response_ms": good["onset_ms"] - 5}, "must be positive"),
        ({"response_ms": good["onset_ms"] + 10**8}, "longer than"),
    ]:
        response = post_json(browser, trial_url, {**good, **change})
        assert response.status_code == 400 and message in response.json()["error"]
    assert not Trial.objects.exists()
    # the real answer, then the same answer re-sent (retry) and a different answer for the same trial
    assert post_json(browser, trial_url, good).status_code == 201
    assert post_json(browser, trial_url, good).json()["duplicate"] is True
    changed = post_json(browser, trial_url, trial_data(participant, 0, code="KeyJ"))
    assert changed.status_code == 409 and changed.json()["reason"] == "answered"
    assert Trial.objects.count() == 1
    # finishing early is refused; the completion code only comes once everything is saved
    early = post_json(browser, session_url + "finish", {})
    assert early.status_code == 409 and "2 answer(s) not saved" in early.json()["error"]
    for index in (1, 2):
        assert post_json(browser, trial_url, trial_data(participant, index)).status_code == 201
    done = post_json(browser, session_url + "finish", {}).json()
    assert done == {"status": "completed", "code": "C0MPLETE",
                    "redirect": "https://app.prolific.com/submissions/complete?cc=C0MPLETE"}
    late = post_json(browser, trial_url, trial_data(participant, 1, code="KeyJ"))
    assert late.status_code == 409 and late.json()["reason"] == "ended"
    assert Trial.objects.count() == 3
    # a second visit from the same Prolific session says it is complete
    again = entry(Client(), study)
    page = Client().get(again["Location"])
    assert b"You have completed this study" in page.content and b"C0MPLETE" in page.content
    # the same PID from another Prolific session does not get the session (issue 17 hole 8): a clear page
    other = entry(Client(), study, session="sess-9")
    assert other.status_code == 409 and b"another Prolific session" in other.content


def test_reloading_resumes_at_the_first_unanswered_trial(browser, open_study):
    study = open_study(interpretations=24, items_per_participant=4, attention_checks=[], practice=[])
    session_url, participant = walk_to_trials(browser, study)
    for index in (0, 1):
        post_json(browser, session_url + "trial", trial_data(participant, index))
    config = browser.get(session_url).context["runner"]
    assert config["phase"] == "trials" and config["answered"] == [0, 1]
    assert [t["item"] for t in config["trials"]] == participant.plan
    assert all("gold" not in t and "answer" not in t for t in config["trials"])
    assert entry(browser, study)["Location"] == session_url  # reopening the link resumes too


def test_practice_comes_before_the_trials_and_records_nothing(browser, open_study):
    study = open_study()
    session_url, participant = walk_to_trials(browser, study)
    config = browser.get(session_url).context["runner"]
    assert config["phase"] == "practice" and [t["answer"] for t in config["trials"]] == ["yes", "no"]
    post_form(browser, session_url + "practice")
    assert browser.get(session_url).context["runner"]["phase"] == "trials"
    assert not Trial.objects.exists()


def test_failing_the_attention_check_redirects_with_its_code(browser, open_study):
    study = open_study(interpretations=24, items_per_participant=2, practice=[], attention_fail_after=1, attention_end_session=True)
    session_url, participant = walk_to_trials(browser, study)
    from experiments.models import Item
    index = next(i for i, pk in enumerate(participant.plan) if Item.objects.get(pk=pk).design == "attention-check")
    gold = Item.objects.get(pk=participant.plan[index]).gold_answer
    wrong = code_for(participant, "no" if gold == "yes" else "yes")
    body = post_json(browser, session_url + "trial", trial_data(participant, index, code=wrong)).json()
    assert body["status"] == "failed_attention" and body["redirect"].endswith("cc=FAILEDAC")
    assert b"ended early" in browser.get(session_url).content


def test_full_and_closed_studies_say_so(client, open_study):
    study = open_study(target_sample_size=1)
    first = entry(client, study, pid="first", session="s1")["Location"]
    client.get(first)
    assert entry(Client(), study, pid="early", session="s0").status_code == 302  # the first has not agreed yet
    post_form(client, first + "consent", {"agree": "yes"})  # a consented participant holds the one place
    response = entry(Client(), study, pid="second", session="s2")
    assert response.status_code == 403 and b"This study is full" in response.content
    from experiments import services as study_services
    study_services.study_transition(study=study, to="closed")
    response = entry(Client(), study, pid="third", session="s3")
    assert response.status_code == 403 and b"not accepting participants" in response.content
    assert entry(Client(), study, pid="first", session="s1").status_code == 302  # those in may finish


def test_heartbeat_records_last_seen(browser, open_study):
    study = open_study()
    session_url, participant = walk_to_trials(browser, study)
    Participant.objects.filter(pk=participant.pk).update(last_seen_at=None)
    body = post_json(browser, session_url + "heartbeat", {}).json()
    assert body == {"answered": [], "status": "started"}
    assert Participant.objects.get(pk=participant.pk).last_seen_at is not None


def test_staff_preview_records_nothing_as_real_data(client, open_study):
    study = open_study(target_sample_size=1)
    assert client.get(f"/s/{study.slug}/preview/").status_code == 302  # to the admin login
    staff = get_user_model().objects.create_user("researcher", password="x-" * 8, is_staff=True)
    client.force_login(join_default_team(staff))  # a member of the study's team (issue 34 item 6)
    response = client.get(reverse("participant:preview", kwargs={"slug": study.slug}))
    preview = Participant.objects.get()
    assert preview.is_preview and response["Location"].endswith(f"/p/{preview.token}/")
    assert b"Staff preview" in client.get(response["Location"]).content
    assert entry(Client(), study, pid="real", session="s1").status_code == 302  # the one real place is free


def test_participants_see_the_participant_facing_title_never_the_internal_one(browser, open_study):
    """Issue 29: participants saw the internal title (which may name the hypothesis)."""
    study = open_study()
    study.title = "Modal operators break humans (H1)"
    study.save()
    page = browser.get(entry(browser, study)["Location"]).content.decode()
    assert "<h1>A short reasoning study</h1>" in page and "<title>A short reasoning study</title>" in page
    assert "(H1)" not in page and "Modal operators" not in page  # (a random token may hold "H1")
    study.participant_title = "Reading and reasoning"
    study.save()
    page = browser.get(entry(browser, study)["Location"]).content.decode()
    assert "<h1>Reading and reasoning</h1>" in page and "Modal operators" not in page
