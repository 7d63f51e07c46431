"""experiments/models/ is a package (issue 36 item 2, Zulip's zerver/models/): every table of the app is
declared in it and named by `experiments.models`, Django loads them from there (no import_models of its
own), and the rules that need a higher layer are applied there (a mapping preset's, by the admin's form)."""
from __future__ import annotations

import pytest
from django.apps import AppConfig, apps

import experiments.models
from experiments.admin import MappingPresetForm
from experiments.apps import ExperimentsConfig
from experiments.models import MappingPreset


def test_every_table_of_the_app_is_declared_in_the_package_and_named_by_it():
    tables = apps.get_app_config("experiments").get_models()
    assert {t.__name__ for t in tables} >= {"Study", "Item", "Participant", "Trial", "HumanArm", "Pilot",
                                            "MappingPreset", "Team", "Interpretation"}
    for table in tables:
        assert table.__module__.startswith("experiments.models."), table
        assert getattr(experiments.models, table.__name__) is table
        assert table.__name__ in experiments.models.__all__
    assert ExperimentsConfig.import_models is AppConfig.import_models


@pytest.mark.django_db
def test_the_admin_form_applies_the_preset_rule():
    form = MappingPresetForm(data={"name": "lab", "design": "modal-syllogisms", "mapping": '{"item_id": "id"}'})
    assert not form.is_valid()
    assert "takes no uploaded bank" in form.errors["design"][0]
    form = MappingPresetForm(data={"name": "lab", "design": "csv-import", "mapping": '{"no_such_field": "x"}'})
    assert not form.is_valid() and "no_such_field" in form.errors["mapping"][0]
    assert not MappingPreset.objects.exists()
    form = MappingPresetForm(data={"name": "lab", "design": "csv-import", "mapping": '{"item_id": "ID"}'})
    assert form.is_valid(), form.errors
    assert form.save().mapping == {"item_id": "ID"}
