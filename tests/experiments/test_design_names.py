"""Designs own their facts (issue 29 part 2): no code outside the design folders (designs/) branches on a
design's name. `git grep` looks for every registered design's name as a quoted string anywhere in the
repository but the design folders, the tests and the docs: the item data and their generators are in the design
folders too (issue 46: 003's templates left logic/ for designs/modal/), so nothing else may even define one."""
from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from experiments import design_registry as registry

ROOT = Path(__file__).resolve().parents[2]
OUTSIDE = [":!designs/", ":!tests/", ":!docs/", ":!*.md", ":!*/migrations/*"]


def _git_grep(names: list[str], root: Path = ROOT, *, no_index: bool = False) -> list[str]:
    if shutil.which("git") is None or not (no_index or (root / ".git").exists()):
        pytest.fail("git and the repository are needed to search the code for design names")
    pattern = "[\"'](" + "|".join(re.escape(n) for n in names) + ")[\"']"
    command = ["git", "grep", *(["--no-index"] if no_index else []), "-n", "-E", pattern, "--", ".", *OUTSIDE]
    done = subprocess.run(command, cwd=root, capture_output=True, text=True, check=False)
    assert done.returncode in (0, 1), done.stderr  # 1: nothing found
    return sorted(done.stdout.splitlines())


def hits(names: list[str], root: Path = ROOT, *, no_index: bool = False) -> list[str]:
    return _git_grep(names, root, no_index=no_index)


def test_no_code_outside_the_designs_registry_names_a_design():
    names = [d.name for d in registry.all_designs()]
    assert len(names) >= 7
    assert hits(names) == []


def test_the_search_finds_a_name_in_code_and_lets_the_exempt_places_be(tmp_path):
    """The search itself, on a tree made for it: a branch on a name is found, and so is a constant holding one
    outside the design folders; a design folder, the tests and the docs are not."""
    files = {
        "analysis/report_part.py": 'if study.design == "rulebreakers":\n    pass\n',
        "logic/forms.py": 'DESIGN = "rulebreakers"\n',
        "designs/paired/design.py": 'NAME = "rulebreakers"\n',
        "tests/test_x.py": 'design="rulebreakers"\n',
        "docs/designs.md": '"rulebreakers"\n',
        "notes.py": "# rulebreakers, in words, is no branch\n",
    }
    for path, text in files.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text, encoding="utf-8")
    assert hits(["rulebreakers"], tmp_path, no_index=True) == [
        'analysis/report_part.py:1:if study.design == "rulebreakers":',
        'logic/forms.py:1:DESIGN = "rulebreakers"',
    ]


def test_a_design_s_report_sections_are_the_parts_its_package_registers():
    """One source: a design's report sections are the part objects its package registered (designs/<family>/
    report_parts.py); every paired design has the part that reads its pairs, and 003's designs their models."""
    from analysis.sections import ModelSpec
    from designs.modal import mixed
    from designs.paired.report_parts import PAIRED

    for spec in mixed.SPECS:
        readers = registry.designs_for_section(spec.key)
        assert readers and all(spec in registry.get(name).report_sections for name in readers), spec.key
    for design in registry.all_designs():
        assert all(hasattr(part, "key") for part in design.report_sections)
        if design.pair_roles:
            assert PAIRED in design.report_sections, design.name
    humans_vs_models = [p for p in registry.report_parts() if isinstance(p, ModelSpec) and p.humans_vs_models]
    assert humans_vs_models == [mixed.AGENTS]
