"""A design is a package (issue 36 item 1): a toy design declared in one package (tests/designs/toy/) gets its
own report section from the report, which knows no design; a study without it does not."""
from __future__ import annotations

import pandas as pd
import pytest

from analysis.report import ReportInputs, build_report
from designs.modal import simulate
from experiments import design_registry as registry

from tests.designs import toy


@pytest.fixture
def toy_registered():
    toy.register()
    try:
        yield toy
    finally:
        toy.unregister()


@pytest.fixture(scope="module")
def toy_scores() -> pd.DataFrame:
    return simulate.scores(n_models=2, n_interpretations=1).assign(design=toy.NAME)


def test_the_registry_holds_the_toy_s_section_object_and_lets_it_go(toy_registered):
    assert registry.get(toy.NAME).report_sections == (toy.TOY_SECTION,)
    assert registry.report_parts([toy.NAME]) == [toy.TOY_SECTION]
    toy.unregister()
    assert toy.TOY_SECTION not in registry.report_parts()
    with pytest.raises(ValueError, match="Unknown design"):
        registry.get(toy.NAME)
    toy.register()  # the fixture unregisters it again


def test_a_part_for_an_unknown_design_or_a_key_twice_is_refused(toy_registered):
    with pytest.raises(ValueError, match="unknown design"):
        registry.report_part_add(toy.TOY_SECTION, designs=["no-such-design"])
    with pytest.raises(ValueError, match="registered twice"):
        registry.report_part_add(toy.TOY_SECTION, designs=[toy.NAME])


def test_the_report_gets_the_toy_s_own_section(toy_registered, toy_scores, tmp_path):
    result = build_report(ReportInputs(scores=toy_scores, trials=pd.DataFrame(), title="toy", designs=(toy.NAME,),
                                       design_inputs={toy.KEY: "the toy's own input"}), out_dir=tmp_path)
    [section] = [s for s in result.sections if s.key == toy.KEY]
    expected = toy_scores.groupby("model").agg(answers=("item_id", "size"), gold_given=("correct", "sum"))
    counts = section.tables["counts"].set_index("model")
    assert counts["answers"].to_dict() == expected["answers"].to_dict() == {"sim-model-1": 24, "sim-model-2": 24}
    assert counts["gold_given"].to_dict() == expected["gold_given"].to_dict()
    assert "Read besides the frames: the toy's own input." in section.notes
    written = pd.read_csv(tmp_path / "tables" / f"{toy.KEY}_counts.csv")
    assert written["answers"].tolist() == [24, 24]
    html = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert toy.TITLE in html
    assert not any(s.key in ("eq4", "paired", "multiple_choice") for s in result.sections)  # no other design's


def test_a_study_of_another_design_has_no_toy_section(toy_registered, toy_scores, tmp_path):
    other = toy_scores.assign(design="csv-import")
    result = build_report(ReportInputs(scores=other, trials=pd.DataFrame(), title="bank", designs=("csv-import",)),
                          out_dir=tmp_path)
    assert toy.KEY not in {s.key for s in result.sections}
    assert toy.TITLE not in (tmp_path / "report.html").read_text(encoding="utf-8")


def test_the_toy_is_one_folder_that_reaches_only_the_core():
    """A new design touches its folder and one registry line (DESIGN.md habit 20): the toy's folder imports the
    core (the registry, analysis' section types) and no design package; read as tests/test_layers.py reads
    designs/, it is a design package importing no sibling, and nothing outside it imports it."""
    import ast
    from pathlib import Path

    from tests.test_layers import design_imports, design_package

    folder = Path(toy.__file__).parent
    imported = {(n.module if isinstance(n, ast.ImportFrom) else a.name).split(".")[0]
                for path in folder.rglob("*.py") for n in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
                if isinstance(n, (ast.Import, ast.ImportFrom)) and not getattr(n, "level", 0)
                for a in n.names}
    assert imported - {"__future__", "pandas"} == {"analysis", "experiments"}
    graph = {"designs.toy": {"experiments.design_registry", "analysis.sections"}, "designs.apps": {"designs.toy"}}
    assert design_package("designs.toy") == "designs.toy" and design_imports(graph) == ([], [])
