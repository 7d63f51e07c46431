"""The study's settings are edited as fields in the admin (issue 18 item 3), checked by the code that
reads them later (the report's exclusions and paired options, the four-option keys, the human
variant): a bad value is refused on its field and nothing is saved; what generation recorded is kept;
what participants see is fixed once the study has responses."""
from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.urls import reverse

from designs.paired.frames import report_options
from analysis.services import exclusions_for
from experiments.models import Study
from tests.admin_form import change_form
from tests.factories import ParticipantFactory, StudyFactory, TrialFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def researcher(client):
    user = get_user_model().objects.create_user("settings", password="x-" * 8, is_staff=True, is_superuser=True)
    client.force_login(user)
    return client


def _form(client, study):
    return change_form(client, reverse("admin:experiments_study_change", args=[study.pk]))


def test_settings_are_fields_and_an_untouched_form_stores_nothing_new(researcher):
    study = StudyFactory(design="modal-syllogisms", settings={"lexicon": "full"})
    url, page, data = _form(researcher, study)
    assert 'name="settings"' not in page  # no JSON box
    assert data["exclude_rt_min_ms"] == "200.0" and data["exclude_rt_log_sd"] == "3.0"
    assert data["exclude_preview"] == "on" and data["paired_alternative"] == "n12>n21"
    assert "human_variant" not in data  # no paired variants: the field is disabled
    assert researcher.post(url, data).status_code == 302
    study.refresh_from_db()
    assert study.settings == {"lexicon": "full"}  # defaults are not written; generation's record is kept


def test_edited_settings_are_stored_in_full_and_read_by_the_report(researcher):
    study = StudyFactory(design="modal-syllogisms", settings={"lexicon": "full"})
    url, page, data = _form(researcher, study)
    data.update(exclude_rt_min_ms="", exclude_rt_log_sd="2.5", paired_alternative="two-sided", paired_alpha="0.01")
    data.pop("exclude_incomplete", None)  # unticked
    assert researcher.post(url, data).status_code == 302
    study.refresh_from_db()
    assert study.settings["analysis_exclusions"] == {
        "drop_preview": True, "drop_failed_attention": True, "completed_only": False,
        "rt_min_ms": None, "rt_log_sd": 2.5}
    rules = exclusions_for(study=study)
    assert rules.rt_min_ms is None and rules.rt_log_sd == 2.5 and not rules.completed_only
    assert report_options(study.settings) == {"alternative": "two-sided", "alpha": 0.01, "exact_max": 10,
                                              "drop_unknown_pairs": False}
    assert "multiple_choice" not in study.settings and study.settings["lexicon"] == "full"


@pytest.mark.parametrize("field, value, message", [
    ("paired_alpha", "1.5", "less than or equal to 0.5"),
    ("exclude_rt_log_sd", "0.5", "greater than or equal to 1"),
    ("paired_exact_max", "-1", "greater than or equal to 0"),
    ("mc_keys", "asdf", "Select a valid choice"),
    ("exclude_rt_min_ms", "fast", "Enter a number"),
])
def test_a_bad_value_is_refused_on_its_field_and_nothing_is_saved(researcher, field, value, message):
    study = StudyFactory(design="multiple-choice", settings={"multiple_choice": {"keys": "1234", "all_mutants": True}})
    before = Study.objects.get(pk=study.pk)
    url, page, data = _form(researcher, study)
    assert data["mc_keys"] == "1234" and data["mc_all_mutants"] == "on"
    data.update({field: value, "title": "A new title"})
    response = researcher.post(url, data)
    assert response.status_code == 200
    errors = response.context["adminform"].form.errors
    assert field in errors and message in " ".join(errors[field])
    after = Study.objects.get(pk=study.pk)
    assert (after.settings, after.title) == (before.settings, before.title)


def test_what_participants_see_is_fixed_once_the_study_has_responses(researcher):
    study = StudyFactory(design="multiple-choice", settings={"multiple_choice": {"keys": "dfjk", "all_mutants": False}})
    TrialFactory(participant=ParticipantFactory(study=study))
    url, page, data = _form(researcher, study)
    assert "mc_keys" not in data and "Fixed: the study has responses." in page
    data.update(mc_keys="1234", mc_all_mutants="on", paired_alpha="0.1")  # as a forged post would
    assert researcher.post(url, data).status_code == 302
    study.refresh_from_db()
    assert study.settings["multiple_choice"] == {"keys": "dfjk", "all_mutants": False}
    assert study.settings["paired_report"]["alpha"] == 0.1  # the analysis options stay editable


def test_the_human_variant_is_one_of_the_study_s_yes_no_phrasings(researcher):
    call_command("generate_items", "rulebreakers", "rb-settings", "--pairs", "4", "--seed", "3")
    study = Study.objects.get(slug="rb-settings")
    worded = study.items.exclude(answer_words={}).values_list("variant", flat=True).first()
    assert worded and study.settings["human_variant"] == "follow/yes-no"
    url, page, data = _form(researcher, study)
    assert data["human_variant"] == "follow/yes-no"
    data["human_variant"] = worded
    response = researcher.post(url, data)
    assert response.status_code == 200
    assert "participants answer with the Yes/No keys" in " ".join(response.context["adminform"].form.errors["human_variant"])
    data["human_variant"] = "entail/yes-no"
    assert researcher.post(url, data).status_code == 302
    study.refresh_from_db()
    assert study.settings["human_variant"] == "entail/yes-no" and study.settings["paired_designs"]["rulebreakers"]


def test_unreadable_stored_settings_are_named_and_replaced_by_what_the_form_shows(researcher):
    study = StudyFactory(design="modal-syllogisms", settings={"analysis_exclusions": {"rt_min": 100}})
    url, page, data = _form(researcher, study)
    assert "unknown analysis_exclusions setting(s) [&#x27;rt_min&#x27;]" in page
    assert researcher.post(url, data).status_code == 302
    study.refresh_from_db()
    assert study.settings["analysis_exclusions"]["rt_min_ms"] == 200.0 and "rt_min" not in study.settings["analysis_exclusions"]
    assert exclusions_for(study=study).rt_min_ms == 200.0
