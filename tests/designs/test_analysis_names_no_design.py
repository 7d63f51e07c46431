"""analysis/ is the generic engine (issue 36 item 1): read with `ast`, no module under analysis/ imports a design
package (designs/), writes a registered design's name, or imports a constant whose value is one (a design's
constants, which live in its folder since issue 46: designs.modal.forms.SYLLOGISMS and the like); and the report's code
names no registered report part."""
from __future__ import annotations

import ast
import importlib
import sys
import types
from pathlib import Path

from experiments import design_registry as registry

ROOT = Path(__file__).resolve().parents[2]


def problems(root: Path, names: set[str], parts: set[str]) -> list[str]:
    found = []
    for path in sorted((root / "analysis").rglob("*.py")):
        where = path.relative_to(root).as_posix()
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=where)
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                found += [f"{where}:{node.lineno} imports {a.name}" for a in node.names
                          if a.name.split(".")[0] == "designs"]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                if node.module.split(".")[0] == "designs":
                    found.append(f"{where}:{node.lineno} imports from {node.module}")
                    continue
                for alias in node.names:
                    value = _value(node.module, alias.name)
                    if isinstance(value, str) and value in names:
                        found.append(f"{where}:{node.lineno} imports {node.module}.{alias.name} = {value!r}")
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                if node.value in names:
                    found.append(f"{where}:{node.lineno} names the design {node.value!r}")
                elif where == "analysis/report.py" and node.value in parts:
                    found.append(f"{where}:{node.lineno} names the report part {node.value!r}")
    return found


def _value(module: str, name: str):
    """The imported name's value, for the project's packages below analysis (where a design's constants live)."""
    if module.split(".")[0] not in {"logic", "experiments", "studyserver", "inference"}:
        return None
    try:
        return getattr(importlib.import_module(module), name, None)
    except ImportError:
        return None


def test_no_module_under_analysis_imports_or_names_a_design():
    names = {d.name for d in registry.all_designs()}
    parts = {p.key for p in registry.report_parts()}
    assert len(names) >= 7 and {"eq4", "paired", "multiple_choice"} <= parts
    assert problems(ROOT, names, parts) == []


def test_the_check_finds_each_kind_of_naming(tmp_path, monkeypatch):
    # A module below analysis holding a design's name (none does since 003's templates left logic/, issue 46).
    holder = types.ModuleType("logic.made_up_forms")
    holder.SYLLOGISMS, holder.MODALITIES = "modal-syllogisms", ("none", "box", "dia")
    monkeypatch.setitem(sys.modules, "logic.made_up_forms", holder)
    (tmp_path / "analysis").mkdir()
    (tmp_path / "analysis" / "report.py").write_text(
        "import designs.modal\n"
        "from designs.paired import report\n"
        "from logic.made_up_forms import SYLLOGISMS, MODALITIES\n"
        "from experiments.design_registry import GENERATE\n"
        "if frame == 'dual-sided':\n    key = 'eq4'\n"
        "label = 'modal syllogisms, in words'\n", encoding="utf-8")
    names = {d.name for d in registry.all_designs()}
    assert problems(tmp_path, names, {"eq4"}) == [
        "analysis/report.py:1 imports designs.modal",
        "analysis/report.py:2 imports from designs.paired",
        "analysis/report.py:3 imports logic.made_up_forms.SYLLOGISMS = 'modal-syllogisms'",
        "analysis/report.py:5 names the design 'dual-sided'",
        "analysis/report.py:6 names the report part 'eq4'",
    ]
