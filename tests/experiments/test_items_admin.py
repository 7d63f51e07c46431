"""Items in the admin: generate any registered design with its options; upload a CSV bank through
the importers' own validation, with its errors (row and column, nothing written) or a preview of
exactly what would be written, and only then the write."""
from __future__ import annotations

import io

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from experiments.models import Item
from tests.factories import StudyFactory, TrialFactory

from .test_csv_import import GOOD, HEADER

pytestmark = pytest.mark.django_db

BAD_ROW = "a3,Ann is baking a cake.,,Can we infer that Ann is baking a cake?,maybe,,none,food\n"


@pytest.fixture
def researcher(client):
    user = get_user_model().objects.create_user("items-researcher", password="x-" * 8, is_staff=True,
                                                is_superuser=True)
    client.force_login(user)
    return client


def _upload(client, study, text, follow=False, **extra):
    url = reverse("admin:experiments_study_upload", args=[study.pk])
    data = {"design": "csv-import", **extra}
    if text is not None:
        data["o-csv_file"] = io.BytesIO(text.encode("utf-8"))
        data["o-csv_file"].name = "bank.csv"
    return client.post(url, data, follow=follow)


def test_the_study_page_links_to_generate_and_upload(researcher):
    study = StudyFactory(design="modal-syllogisms")
    page = researcher.get(reverse("admin:experiments_study_change", args=[study.pk])).content.decode()
    assert "0 items" in page and "Generate items…" in page and "Upload a bank (CSV, JSON, Parquet)…" in page


def test_a_design_is_generated_from_the_admin_with_its_own_options(researcher):
    study = StudyFactory(design="modal-syllogisms")
    url = reverse("admin:experiments_study_generate", args=[study.pk])
    form = researcher.get(url, {"design": "rulebreakers"}).content.decode()
    assert 'name="o-names_per_combination"' in form and 'name="o-interpretations"' not in form
    form = researcher.get(url).content.decode()  # the study's own design by default
    assert 'name="o-interpretations"' in form and 'name="o-paper_lexicon"' in form
    refused = researcher.post(url, {"design": "modal-syllogisms", "o-interpretations": "0"})
    assert refused.status_code == 200 and not study.items.exists()
    done = researcher.post(url, {"design": "modal-syllogisms", "o-interpretations": "4", "o-seed": "3",
                                 "o-nonsense": "on"}, follow=True)
    assert "Generated 192 items (4 interpretations + nonsense mirror) of &#x27;modal-syllogisms&#x27;" in done.content.decode()
    assert study.items.count() == 192
    again = researcher.post(url, {"design": "modal-syllogisms", "o-interpretations": "4"})
    assert "already has 192 items of design" in again.content.decode() and study.items.count() == 192


def test_an_upload_with_a_bad_row_writes_nothing_then_the_fixed_file_is_previewed_and_written(researcher):
    study = StudyFactory(design="csv-import")
    bad = _upload(researcher, study, HEADER + GOOD + BAD_ROW).content.decode()
    assert "Nothing was written." in bad and "row 4" in bad and "gold_answer" in bad
    assert not Item.objects.filter(study=study).exists()
    preview = _upload(researcher, study, HEADER + GOOD).content.decode()
    assert "Preview: 2 items would be written" in preview and "Can we infer that Bo is painting a fence?" in preview
    assert 'value="Write these 2 items"' in preview and not Item.objects.filter(study=study).exists()
    token = preview.split('name="upload" value="')[1].split('"')[0]
    written = _upload(researcher, study, None, upload=token, write="yes", follow=True)
    assert "Imported 2 items into" in written.content.decode()
    assert sorted(Item.objects.filter(study=study).values_list("code", flat=True)) == ["a1", "a2"]


def test_a_study_with_responses_offers_no_item_changes_and_refuses_them(researcher):
    study = StudyFactory(design="csv-import")
    _upload(researcher, study, HEADER + GOOD, write="yes")
    TrialFactory(participant__study=study, item=study.items.first())
    page = researcher.get(reverse("admin:experiments_study_change", args=[study.pk])).content.decode()
    assert "(locked: the study has responses)" in page and "Upload a bank (CSV, JSON, Parquet)…" not in page
    refused = _upload(researcher, study, HEADER.replace("a1", "b1") + GOOD.replace("a1", "b1").replace("a2", "b2"))
    assert "already has responses" in refused.content.decode() and study.items.count() == 2


def test_a_view_only_user_cannot_generate_or_upload(client):
    from django.contrib.auth.models import Permission

    user = get_user_model().objects.create_user("viewer", password="x-" * 8, is_staff=True)
    user.user_permissions.add(Permission.objects.get(codename="view_study"))
    client.force_login(user)
    study = StudyFactory(design="modal-syllogisms")
    assert client.post(reverse("admin:experiments_study_generate", args=[study.pk]),
                       {"design": "modal-syllogisms", "o-interpretations": "4"}).status_code == 403
    assert _upload(client, study, HEADER + GOOD, write="yes").status_code == 403
    assert not study.items.exists()


def test_the_generate_form_names_the_studys_own_system_and_consequence(researcher):
    """A K study's form says K is the default (it said "the study's, S5"); left empty, K keys the items."""
    study = StudyFactory(design="modal-syllogisms", logic_system="K", consequence="global")
    url = reverse("admin:experiments_study_generate", args=[study.pk])
    form = researcher.get(url).content.decode()
    assert "S5)" not in form.replace('value="S5">S5<', "")
    assert "<option value=\"\" selected>(the study&#x27;s: K)</option>" in form
    assert "modal logic for the checker (default: this study's, K)" in form  # help text is rendered as HTML
    assert "(the study&#x27;s: global)" in form
    researcher.post(url, {"design": "modal-syllogisms", "o-interpretations": "1", "o-seed": "0"})
    assert set(study.items.values_list("logic_system", flat=True)) == {"K"}


def test_the_upload_help_says_what_comes_next_in_a_whole_sentence(researcher):
    study = StudyFactory(design="csv-import")
    page = researcher.get(reverse("admin:experiments_study_upload", args=[study.pk])).content.decode()
    assert ("or Parquet. On the next page its columns are mapped onto the design's fields, with its first "
            "rows shown; nothing is written before you confirm the preview.") in page
    assert 'href="/docs/designs.md"' in page  # the columns' documentation is a page
