"""A study's declared factors (analysis/factors.py): the registry's for its designs, or the names its
settings give, checked against the items' columns with a message that lists them; edited in the admin's
settings editor and read by the report."""
from __future__ import annotations

import pandas as pd
import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from analysis import factors
from tests.admin_form import change_form
from tests.factories import ItemFactory, StudyFactory


def test_check_maps_fields_to_frame_columns_and_matches_descriptive_columns_regardless_of_case():
    assert factors.check("modality argument_form", set()) == ["modality", "argform"]
    assert factors.check(["Difficulty", "difficulty", " topic "], {"difficulty", "topic"}) == ["difficulty", "topic"]
    assert factors.check("", {"x"}) == []


def test_check_names_each_unknown_or_reserved_column_and_lists_those_there_are():
    with pytest.raises(ValueError) as info:
        factors.check(["level", "size"], {"difficulty", "topic"})
    text = str(info.value)
    assert "no column named 'level', 'size' among the items" in text and "(difficulty, topic)" in text
    assert "argument_form" in text  # the item fields are listed too
    with pytest.raises(ValueError, match="'model' is a column Duet's frames already use"):
        factors.check(["model"], {"model"})
    with pytest.raises(ValueError, match="a list of column names"):
        factors.normalise(3)


def test_join_adds_descriptive_factors_by_item_and_keeps_the_frame_otherwise():
    frame = pd.DataFrame({"item_id": [3, 1, 3], "correct": [1, 0, 1]}, index=[10, 11, 12])
    values = pd.DataFrame({"item_id": [1, 3], "difficulty": ["hard", "easy"]})
    joined = factors.join(frame, values)
    assert list(joined["difficulty"]) == ["easy", "hard", "easy"] and list(joined.index) == [10, 11, 12]
    assert factors.join(frame, pd.DataFrame(columns=["item_id"])) is frame
    assert factors.r_name("entity kind") == "entity_kind" and factors.r_name("2x") == "f_2x"


@pytest.mark.django_db
def test_declared_factors_come_from_the_settings_or_else_from_the_designs():
    study = StudyFactory(design="modal-syllogisms")
    ItemFactory(study=study, design="modal-syllogisms")
    ItemFactory(study=study, design="attention-check")
    assert factors.declared_factors(study) == ["modality", "argform"]
    bank = StudyFactory(design="csv-import", settings={"factors": ["Difficulty"]})
    item = ItemFactory(study=bank, design="csv-import", attributes={"difficulty": "easy"})
    assert factors.declared_factors(bank) == ["difficulty"]
    assert factors.values_frame(bank, ["difficulty"]).to_dict("records") == [{"item_id": item.pk,
                                                                               "difficulty": "easy"}]
    assert factors.declared_factors(StudyFactory(design="csv-import")) == []


@pytest.mark.django_db
def test_the_settings_editor_stores_checked_factors_and_refuses_unknown_ones(client):
    user = get_user_model().objects.create_user("factors", password="x-" * 8, is_staff=True, is_superuser=True)
    client.force_login(user)
    study = StudyFactory(design="csv-import")
    ItemFactory(study=study, design="csv-import", attributes={"difficulty": "easy", "topic": "food"})
    url, page, data = change_form(client, reverse("admin:experiments_study_change", args=[study.pk]))
    assert data["factors"] == "" and "The report now reads: none (Table 1 overall)." in page
    data["factors"] = "level"
    response = client.post(url, data)
    assert response.status_code == 200 and "no column named &#x27;level&#x27;" in response.content.decode()
    study.refresh_from_db()
    assert "factors" not in study.settings
    data["factors"] = "difficulty, modality"
    assert client.post(url, data).status_code == 302
    study.refresh_from_db()
    assert study.settings["factors"] == ["difficulty", "modality"]
    assert "The report now reads: difficulty, modality." in client.get(url).content.decode()
    data["factors"] = ""
    assert client.post(url, data).status_code == 302
    study.refresh_from_db()
    assert "factors" not in study.settings  # back to the designs' own


@pytest.mark.django_db
def test_analyze_names_stored_factors_the_items_lack_and_writes_nothing(tmp_path):
    from django.core.management import call_command
    from django.core.management.base import CommandError

    study = StudyFactory(design="csv-import", settings={"factors": ["difficulty"]})
    ItemFactory(study=study, design="csv-import", attributes={"topic": "food"})
    with pytest.raises(CommandError, match=r"no column named 'difficulty' among the items.*\(topic\)"):
        call_command("analyze", study.slug, "--out", str(tmp_path / "out"))
    assert not (tmp_path / "out").exists()
