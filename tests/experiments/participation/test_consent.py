"""The consent page is true for what is stored (issue 16), states the duration and a contact, stays
editable, and a study opens only once a researcher has reviewed it as it stands."""
from __future__ import annotations

import re

import pytest
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.test import Client
from django.urls import reverse

from designs.modal.items import items_generate
from experiments import services as study_services
from experiments.models import Participant, StudyStatus, Trial
from experiments.participation import consent
from experiments.participation import services as flow
from tests.factories import StudyFactory, review_consent

from .test_views import DESKTOP, entry

pytestmark = pytest.mark.django_db


def model_fields() -> set[str]:
    return {f"{model.__name__}.{field.name}" for model in (Participant, Trial) for field in model._meta.concrete_fields}


def kinds_the_models_store() -> set[str]:
    """The kinds of data behind the Participant and Trial columns, derived from the columns."""
    kind_of = {name: kind.key for kind in consent.STORED_DATA for name in kind.fields}
    return {kind_of[name] for name in model_fields() if name not in consent.NOT_ABOUT_THE_PARTICIPANT}


def test_every_participant_and_trial_column_is_declared_once():
    declared = [name for kind in consent.STORED_DATA for name in kind.fields]
    assert len(declared) == len(set(declared))  # each column in one kind
    assert not set(declared) & set(consent.NOT_ABOUT_THE_PARTICIPANT)
    fields = model_fields()
    missing = fields - set(declared) - set(consent.NOT_ABOUT_THE_PARTICIPANT)
    assert not missing, f"columns the consent page does not mention: {sorted(missing)} (add them to consent.STORED_DATA)"
    assert not (set(declared) | set(consent.NOT_ABOUT_THE_PARTICIPANT)) - fields  # no stale names


def test_the_consent_a_participant_sees_names_every_kind_of_data_stored(open_study):
    study = open_study()
    browser = Client(HTTP_USER_AGENT=DESKTOP)
    page = browser.get(entry(browser, study)["Location"]).content.decode()
    shown = re.findall(r'<li data-item="([a-z_]+)">', page)
    held_elsewhere = {kind.key for kind in consent.STORED_DATA if not kind.fields}  # the server's log
    # the questionnaires' kind only where the study shows a questionnaire (test_questionnaires.py)
    assert sorted(shown) == sorted(kinds_the_models_store() - {consent.QUESTIONNAIRES} | held_elsewhere)
    text = " ".join(page.split()).lower()
    for words in ("Prolific ID", "IDs of this Prolific study and of your session", "user agent",
                  "size of your browser window", "switched to another window or tab", "how long you took",
                  "your answer to each question", "which key meant which answer", "when you started"):
        assert words.lower() in text
    assert "the only information we will have" not in text and "no way for us to identify you" not in text


def test_the_page_states_the_duration_from_the_lists_length_and_the_contact(open_study):
    study = open_study(items_per_participant=24, practice=[{"premises": ["a."], "question": "b?", "answer": "yes"}] * 2,
                       seconds_per_question=12)
    arm = study.human_arm
    arm.contact = "Dr Ada Example, ada@example.org"
    arm.save()
    review_consent(study)
    browser = Client(HTTP_USER_AGENT=DESKTOP)
    session = entry(browser, study)["Location"]
    participant = Participant.objects.get()
    assert len(participant.plan) == 26  # 24 items and the 2 default catch items
    page = " ".join(browser.get(session).content.decode().split())
    # (26 questions + 2 practice) × 12 s + 120 s = 456 s → 8 minutes
    assert "The study takes about 8 minutes: 26 questions, after 2 practice questions." in page
    assert 'Questions about this study: Dr Ada Example, <a href="mailto:ada@example.org">ada@example.org</a>' in page


def test_expected_minutes_round_up():
    assert consent.expected_minutes(questions=26, practice=2, seconds_per_question=12) == 8
    assert consent.expected_minutes(questions=0, practice=0, seconds_per_question=12) == 2
    assert consent.expected_minutes(questions=1, practice=0, seconds_per_question=1) == 3  # 121 s


def test_the_text_stays_editable_per_study(open_study):
    study = open_study(consent_text="Our own words, at {institution}.", institution="Example University")
    browser = Client(HTTP_USER_AGENT=DESKTOP)
    page = browser.get(entry(browser, study)["Location"]).content.decode()
    assert "Our own words, at Example University." in page
    assert 'data-item="user_agent"' in page  # the stored data are listed whatever the text says


def test_a_study_does_not_open_before_its_consent_is_reviewed():
    study = StudyFactory()
    items_generate(study=study, design="modal-syllogisms", interpretations=24, seed=0)
    with pytest.raises(ValidationError, match="cannot open. Its consent page names no contact"):
        study_services.study_transition(study=study, to=StudyStatus.OPEN)
    arm = flow.human_arm_ensure(study=study)
    arm.contact = "ada@example.org"
    arm.save()
    with pytest.raises(ValidationError, match="Nobody has reviewed its consent text yet"):
        study_services.study_transition(study=study, to=StudyStatus.OPEN)
    study.refresh_from_db()
    assert study.status == StudyStatus.DRAFT
    researcher = get_user_model().objects.create_user("ada", password="p-" * 8)
    consent.consent_review(arm=arm, by=researcher)
    with pytest.raises(ValidationError, match="It has no completion code"):  # nobody could be paid
        study_services.study_transition(study=study, to=StudyStatus.OPEN)
    arm.completion_code = "C0MPLETE"
    arm.save()
    consent.consent_review(arm=arm, by=researcher)
    study_services.study_transition(study=study, to=StudyStatus.OPEN)
    assert study.status == StudyStatus.OPEN


def test_a_change_after_the_review_needs_a_new_one_before_new_participants(open_study):
    study = open_study()
    arm = study.human_arm
    started, _ = flow.participant_start(study=study, prolific_pid="before", prolific_session_id="s1")
    arm.consent_text = "A new text at {institution}."
    arm.save()
    assert "has changed since someone reviewed it" in consent.consent_problem(arm)
    with pytest.raises(flow.FlowError, match="not accepting participants") as refused:
        flow.participant_start(study=study, prolific_pid="after", prolific_session_id="s2")
    assert refused.value.reason == "consent_unreviewed"
    assert flow.participant_start(study=study, prolific_pid="before", prolific_session_id="s1")[0] == started
    study_services.study_transition(study=study, to=StudyStatus.PAUSED)
    with pytest.raises(ValidationError, match="has changed since"):
        study_services.study_transition(study=study, to=StudyStatus.OPEN)
    consent.consent_review(arm=arm)
    study_services.study_transition(study=study, to=StudyStatus.OPEN)
    assert flow.participant_start(study=study, prolific_pid="after", prolific_session_id="s2")[1]


def test_the_review_needs_a_contact():
    arm = flow.human_arm_ensure(study=StudyFactory())
    with pytest.raises(ValidationError, match="Enter a contact"):
        consent.consent_review(arm=arm)
    assert arm.consent_reviewed_at is None


@pytest.fixture
def staff(client):
    user = get_user_model().objects.create_user("researcher", password="x-" * 8, is_staff=True, is_superuser=True)
    client.force_login(user)
    return client, user


def change_form_data(response) -> dict:
    """The study change form as the admin rendered it, ready to post back."""
    data = {}

    def add(form):
        for name in form.fields:
            value = form[name].value()
            if value is True:
                data[form.add_prefix(name)] = "on"
            elif value not in (None, False):
                data[form.add_prefix(name)] = value
    add(response.context["adminform"].form)
    for inline in response.context["inline_admin_formsets"]:
        formset = inline.formset
        management = formset.management_form
        for name in management.fields:
            data[management.add_prefix(name)] = management[name].value()
        for form in formset.forms:
            add(form)
    return data


def test_the_researcher_marks_the_consent_reviewed_on_the_study_page_and_the_admin_says_why_it_cannot_open(staff):
    client, user = staff
    study = StudyFactory()
    items_generate(study=study, design="modal-syllogisms", interpretations=24, seed=0)
    changelist = reverse("admin:experiments_study_changelist")
    response = client.post(changelist, {"action": "open_studies", "_selected_action": [study.pk]}, follow=True)
    assert "cannot open. Its consent page names no contact" in response.content.decode()
    url = reverse("admin:experiments_study_change", args=[study.pk])
    page = client.get(url)
    assert 'data-item="viewport"' in page.content.decode()  # the preview of the page participants see
    data = change_form_data(page)
    prefix = next(key for key in data if key.endswith("-institution")).rsplit("-", 1)[0]
    data[f"{prefix}-mark_consent_reviewed"] = "on"
    response = client.post(url, data)
    assert response.status_code == 200 and "Enter a contact" in response.content.decode()  # the form comes back
    data[f"{prefix}-contact"] = "Dr Ada Example, ada@example.org"
    data[f"{prefix}-completion_code"] = "C0MPLETE"  # without it the study would not open
    response = client.post(url, data, follow=True)
    assert "consent marked reviewed by researcher" in response.content.decode()
    arm = flow.human_arm_ensure(study=study)
    assert arm.consent_reviewed_by == user and consent.consent_problem(arm) is None
    assert "Reviewed by researcher on" in client.get(url).content.decode()
    response = client.post(changelist, {"action": "open_studies", "_selected_action": [study.pk]}, follow=True)
    study.refresh_from_db()
    assert study.status == StudyStatus.OPEN


def test_the_consent_lists_the_server_log_as_the_production_server_writes_it():
    """Issue 26 item 11: the access log held client addresses, Prolific ids and session tokens while
    the consent said "we never store your IP address". The consent now lists the log, and the log's
    format uses only what the list says (tests/studyserver/test_logs.py reads the real log)."""
    from studyserver import gunicorn_conf

    label = {kind.key: kind.label for kind in consent.STORED_DATA}["server_log"]
    assert "no IP address" in label and "without your Prolific ID" in label and "replaced by a code" in label
    atoms = set(re.findall(r"%\((\w+)\)s", gunicorn_conf.access_log_format))
    assert atoms <= {"t", "r", "s", "b", "M"}  # time, request line (path redacted), status, bytes, duration
    assert "we never store your IP address" in consent.DEFAULT_CONSENT
