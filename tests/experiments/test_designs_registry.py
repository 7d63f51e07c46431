"""The designs registry: every design declared once, and the commands and the admin read it."""
from __future__ import annotations

import inspect
import io

import pytest
from django.core.management import CommandError, call_command

from experiments import design_registry as registry
from experiments.models import Study
from tests.factories import StudyFactory

from .test_admin import staff_client  # noqa: F401  (fixture)


def test_every_design_of_the_papers_is_registered_with_its_source_and_answers():
    names = {d.name: d for d in registry.all_designs()}
    assert set(names) == {"modal-syllogisms", "necessitation", "modal-distribution", "rulebreakers", "dual-sided",
                          "multiple-choice", "csv-import"}
    assert {d.name for d in registry.generated()} == {"modal-syllogisms", "necessitation", "modal-distribution",
                                                    "rulebreakers"}
    assert names["multiple-choice"].answers == ("A", "B", "C", "D") and names["rulebreakers"].answers == ("yes", "no")
    assert [n for n, d in names.items() if d.generic] == ["csv-import"]
    assert set(registry.perturbable()) == {"modal-syllogisms", "necessitation", "modal-distribution", "rulebreakers",
                                          "dual-sided"}
    with pytest.raises(ValueError, match="Unknown design 'syllogisms'; choose one of: csv-import, dual-sided"):
        registry.get("syllogisms")
    with pytest.raises(ValueError, match="registered twice"):
        registry.register(names["rulebreakers"])


@pytest.mark.django_db
@pytest.mark.parametrize("design", registry.generated(), ids=lambda d: d.name)
def test_each_generated_design_makes_items_from_its_declared_options(design):
    study = StudyFactory(design=design.name)
    report = design.make(study=study, **design.option_values({"interpretations": 4, "pairs": 2}))
    assert report.items == study.items.count() > 0
    assert set(study.items.values_list("gold_answer", flat=True)) <= set(design.answers)
    assert design.describe(report).startswith("Generated ")


@pytest.mark.parametrize("design", registry.imported(), ids=lambda d: d.name)
def test_each_imported_designs_options_are_what_its_importer_takes(design):
    taken = set(inspect.signature(design.make).parameters)
    assert {"study", "data"} <= taken and {o.name for o in design.options} <= taken


@pytest.mark.django_db
def test_the_command_takes_each_designs_own_options_and_refuses_another_designs():
    out = io.StringIO()
    call_command("generate_items", "rulebreakers", "rb", "--pairs", "4", "--names-per-combination", "2",
                 "--variants", "follow/yes-no", stdout=out)
    assert "Generated 4 pairs of 'rulebreakers' into 'rb'" in out.getvalue()
    with pytest.raises(CommandError, match="modal-syllogisms takes no --pairs"):
        call_command("generate_items", "modal-syllogisms", "ms", "--interpretations", "4", "--pairs", "3")
    assert not Study.objects.filter(slug="ms").exists()  # refused before anything was written
    call_command("generate_items", "necessitation", "nec", "--interpretations", "4", stdout=out)
    assert Study.objects.get(slug="nec").items.count() > 0


@pytest.mark.django_db
def test_the_admin_offers_the_registrys_designs_not_free_text(staff_client):  # noqa: F811
    page = staff_client.get("/admin/experiments/study/add/").content.decode()
    assert '<select name="design"' in page and '<option value="rulebreakers">Rulebreakers (rulebreakers, seed 000)' in page
    bad = staff_client.post("/admin/experiments/study/add/", {
        "slug": "free-text", "title": "t", "design": "my own design", "logic_system": "S5", "consequence": "paper",
        "settings": "{}", "human_arm-TOTAL_FORMS": "0", "human_arm-INITIAL_FORMS": "0"})
    assert bad.status_code == 200 and "Select a valid choice" in bad.content.decode()
    assert not Study.objects.filter(slug="free-text").exists()


def test_a_level_is_coded_by_its_value_or_an_alias_and_a_factor_spoken_as_its_design_declares():
    """Issue 46: a factor's codes, other spellings and spoken name are its design's declaration (Factor, Level),
    read through the registry by the schema's coded columns, a bank's import and the report."""
    from experiments import item_csv, schema

    assert registry.level_code("modality", "□") == registry.level_code("modality", "box") == "box"
    assert registry.level_code("argform", "∨⊢") == "DS" and registry.level_code("argform", "DS") == "DS"
    assert registry.level_code("pair_role", "rulebreaker") == "rulebreaker"  # no declared levels: its own code
    assert registry.spoken("argform") == "argument form" and registry.spoken("pair_role") == "pair_role"
    assert schema.code_of("modality")("◇") == "dia" and schema.code_of("argform")("→ᴸ⊢") == "MP"
    assert schema.code_of("argform")(None) == "" and schema.code_of("argform")("made-up") == "made-up"
    assert item_csv.modalities() == {"": "", "none": "none", "box": "box", "dia": "dia", "∅": "none", "□": "box",
                                     "◇": "dia"}
