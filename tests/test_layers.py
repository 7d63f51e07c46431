"""Layers you can see (issue 29 item 4; DESIGN.md habit 17), checked the way farm-studio checks its
own: every import of the project's packages is read with `ast` — at the top of a module or inside a
function, for a lazy import runs all the same — and

* no import runs upward: the pure logic engine (logic) at the bottom, then the ground helpers every app
  uses (common/), then the experiments app in four layers of its own (its tables, experiments/models/; its
  items and designs; the participant flow, experiments/participation/; the app's top: admin,
  services, background jobs, commands), then inference, analysis and prolific, then the design packages,
  the demo, and the project's wiring (studyserver/: settings, urls, wsgi, celery) on top;
* importing `a.b.c` runs `a/__init__.py` and `a/b/__init__.py` first, so it is read as importing
  those packages too (an edge to each package's `__init__`), except from a module inside that
  package, which its package's `__init__` is already loading;
* no import runs in a circle among the modules;
* the logic engine imports nothing from Django (nor from any other part of the project);
* every environment read lives in common/env.py;
* a design is one folder (issue 46; DESIGN.md habit 20): nothing outside designs/ imports a design package
  (designs/<family>/) — the core reaches a design through the registry's fields and hooks, and the one place
  that imports the families is the registry's loader, designs/apps.py — and no design package imports a sibling.

An import that must break a rule is named in ALLOWED with the reason; an entry that no longer
matches anything fails the test, so the list only shrinks."""
from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("logic", "common", "experiments", "studyserver", "inference", "analysis", "prolific", "designs", "demo", "bench",
            "scripts")
LOGIC = "logic"

# The layers, bottom first: a module may import its own layer and those below it. A module belongs to the
# layer of the longest prefix naming it ("experiments.models.items" is in the tables, "experiments.admin" in
# the app's top). To add a package, add its name to PACKAGES and put it in a layer here: a new app above
# experiments (a `prolific` app, say) joins "apps above experiments"; a layer of its own (a top-level
# `designs` package of design families, say) goes in as a new entry between two others.
LAYERS = (
    ("logic engine", (LOGIC,)),
    ("the ground helpers", ("common",)),
    ("experiments' tables", ("experiments.models",)),
    ("experiments' items and designs", (
        "experiments.design_registry", "experiments.items", "experiments.schema", "experiments.factors", "experiments.item_csv",
        "experiments.item_limits", "experiments.report_rules", "experiments.selectors", "experiments.study_jobs",
        "experiments.team_scope")),
    ("experiments' participant flow", ("experiments.participation",)),
    ("experiments' top (admin, services, jobs, commands)", ("experiments", "experiments.participation.pilot_admin")),
    ("apps above experiments", ("inference", "analysis", "prolific")),
    ("the design packages", ("designs",)),
    ("the demo", ("demo",)),
    ("the project's wiring (settings, urls, wsgi, asgi, celery, gunicorn)", ("studyserver",)),
    ("the benchmarks and scripts", ("bench", "scripts")),
)

# (importer, imported) → why the import is where it is. Keep it short; every entry is a debt.
ALLOWED: dict[tuple[str, str], str] = {}
# (importer, imported) across two design packages → why. Every entry is a debt, and a stale one fails.
SIBLINGS_ALLOWED: dict[tuple[str, str], str] = {}
DESIGNS = "designs"
LOADER = ("designs", "designs.apps")  # the registry's loader: the one place that imports the families


def _module_name(path: Path, root: Path) -> str:
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules(root: Path, packages: tuple[str, ...]) -> dict[str, Path]:
    found = {}
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            found[_module_name(path, root)] = path
    return found


def _resolve(name: str, known: dict[str, Path]) -> str | None:
    """The project module `name` names: itself, or the nearest package above it that exists."""
    while name and name not in known:
        name = name.rpartition(".")[0]
    return name or None


def _packages_run(target: str, importer: str, known: dict[str, Path]) -> set[str]:
    """The packages whose `__init__` importing `target` runs first (a.b.c runs a and a.b), bar those
    `importer` lives in: its own packages are already loading when it runs."""
    parts = target.split(".")
    found = set()
    for n in range(1, len(parts)):
        package = ".".join(parts[:n])
        if package in known and not importer.startswith(package + "."):
            found.add(package)
    return found


@functools.cache
def imports() -> dict[str, set[str]]:
    """Module → the project modules it imports, anywhere in its body (the project's own tree)."""
    return read_imports(ROOT, PACKAGES)


def read_imports(root: Path, packages: tuple[str, ...]) -> dict[str, set[str]]:
    """Module → the modules of `packages` (under `root`) it imports, anywhere in its body."""
    known = _modules(root, packages)
    graph: dict[str, set[str]] = {}
    for module, path in known.items():
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        targets = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")
                    base = base[: len(base) - node.level + 1]
                    source = ".".join(base + ([node.module] if node.module else []))
                else:
                    source = node.module or ""
                # `from package import module` imports the module; `from module import name` the module
                names = [f"{source}.{alias.name}" if f"{source}.{alias.name}" in known else source
                         for alias in node.names]
            else:
                continue
            for name in names:
                if name.split(".")[0] in packages:
                    target = _resolve(name, known)
                    if target:
                        targets |= {target} | _packages_run(target, module, known)
        targets.discard(module)
        graph[module] = targets
    return graph


def layer(module: str) -> int:
    """The index in LAYERS of the most specific prefix naming `module`."""
    best, length = None, -1
    for index, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > length:
                best, length = index, len(prefix)
    assert best is not None, f"{module} belongs to no layer"
    return best


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []
    counter = [0]

    def visit(node: str) -> None:  # iterative deepening is not needed: the graph has a few hundred nodes
        index[node] = low[node] = counter[0]
        counter[0] += 1
        stack.append(node)
        on_stack.add(node)
        for succ in sorted(graph.get(node, ())):
            if succ not in index:
                visit(succ)
                low[node] = min(low[node], low[succ])
            elif succ in on_stack:
                low[node] = min(low[node], index[succ])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def _allowed(graph: dict[str, set[str]]) -> dict[str, set[str]]:  # (a copy: imports() is cached)
    return {module: {t for t in targets if (module, t) not in ALLOWED} for module, targets in graph.items()}


def upward_imports(graph: dict[str, set[str]]) -> list[str]:
    """Each import that runs upward, as "importer (its layer) imports target (its layer)"."""
    return sorted(f"{module} ({LAYERS[layer(module)][0]}) imports {target} ({LAYERS[layer(target)][0]})"
                  for module, targets in graph.items() for target in targets if layer(target) > layer(module))


def circles(graph: dict[str, set[str]]) -> list[str]:
    """Each circle of imports, as its modules joined by ↔."""
    return [" ↔ ".join(component) for component in cycles(graph)]


def test_no_import_runs_upward():
    upward = upward_imports(_allowed(imports()))
    assert not upward, "\n".join(upward)


def test_no_import_runs_in_a_circle():
    found = circles(_allowed(imports()))
    assert not found, "\n".join(found)


def test_every_allowed_import_is_still_there():
    graph = imports()
    stale = [f"{a} → {b}" for a, b in ALLOWED if b not in graph.get(a, set())]
    assert not stale, "remove these ALLOWED entries: " + ", ".join(stale)


def design_package(module: str) -> str | None:
    """The design package (designs.<family>) `module` belongs to; None outside one (the loader is in none)."""
    parts = module.split(".")
    if parts[0] != DESIGNS or len(parts) < 2 or module in LOADER:
        return None
    return ".".join(parts[:2])


def design_imports(graph: dict[str, set[str]]) -> tuple[list[str], list[str]]:
    """(each import of a design package from outside designs/ but the loader, each import of one design package
    by a sibling), as "importer imports target"."""
    outside, siblings = [], []
    for module, targets in graph.items():
        own = design_package(module)
        for target in sorted(targets):
            theirs = design_package(target)
            if theirs is None:
                continue
            if own is None and module.split(".")[0] != DESIGNS:
                outside.append(f"{module} imports {target}")
            elif own is not None and own != theirs and (module, target) not in SIBLINGS_ALLOWED:
                siblings.append(f"{module} imports {target}")
    return sorted(outside), sorted(siblings)


def test_nothing_outside_designs_imports_a_design_package():
    outside, _ = design_imports(imports())
    assert not outside, "reach these designs through the registry's hooks:\n" + "\n".join(outside)


def test_no_design_package_imports_a_sibling():
    _, siblings = design_imports(imports())
    assert not siblings, "\n".join(siblings)


def test_every_sibling_allowance_is_still_there():
    graph = imports()
    stale = [f"{a} → {b}" for a, b in SIBLINGS_ALLOWED if b not in graph.get(a, set())]
    assert not stale, "remove these SIBLINGS_ALLOWED entries: " + ", ".join(stale)


def test_the_design_checks_see_an_import_from_outside_and_a_sibling(tmp_path):
    """A made-up tree: the core imports a family (lazily, inside a function), one family imports another, the
    loader imports a family and a family imports the core; the first two are found, the others are not."""
    for name, text in {
        "designs/__init__.py": "", "designs/apps.py": "from designs.modal import report_parts\n",
        "designs/modal/__init__.py": "", "designs/modal/report_parts.py": "from experiments import registry\n",
        "designs/modal/frames.py": "from designs.paired.report import per_respondent\n",
        "designs/paired/__init__.py": "", "designs/paired/report.py": "from .frames import x\n",
        "designs/paired/frames.py": "",
        "experiments/__init__.py": "", "experiments/registry.py": "",
        "experiments/summary.py": "def f():\n    from designs.paired import frames\n",
    }.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    outside, siblings = design_imports(read_imports(tmp_path, ("experiments", "designs")))
    assert outside == ["experiments.summary imports designs.paired", "experiments.summary imports designs.paired.frames"]
    assert siblings == ["designs.modal.frames imports designs.paired", "designs.modal.frames imports designs.paired.report"]


def test_bench_is_on_top_and_in_the_checks():
    """bench/ is read like the apps (its circle burst.py ↔ study.py was one, issue 46) and sits on top."""
    graph = imports()
    assert "bench.load.burst" in graph and "bench.load.study" in graph
    assert layer("bench.load.study") > layer("demo.pilot") > layer("designs.modal.report_parts")


def django_or_project_imports(paths: list[Path]) -> list[str]:
    """Each import of Django or of the project but the logic engine in these files, as "file:line imports name"."""
    bad = []
    for path in paths:
        label = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path.name
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [] if node.level else [node.module or ""]
            else:
                continue
            for name in names:
                root = name.split(".")[0]
                if root == "django" or (root in PACKAGES and not name.startswith(LOGIC)):
                    bad.append(f"{label}:{node.lineno} imports {name}")
    return bad


def test_the_logic_engine_imports_nothing_from_django_nor_the_project():
    bad = django_or_project_imports(sorted((ROOT / "logic").rglob("*.py")))
    assert not bad, "\n".join(bad)


def test_the_django_check_names_each_import_it_finds(tmp_path):
    """A made-up logic module that imports Django and the app: the check names the file, the line and the
    import (it once failed with a NameError instead)."""
    probe = tmp_path / "probe.py"
    probe.write_text("import math\nfrom django.db import models\n\ndef f():\n    import experiments.models\n"
                     "    from logic import formula\n", encoding="utf-8")
    assert django_or_project_imports([probe]) == ["probe.py:2 imports django.db", "probe.py:5 imports experiments.models"]


def test_the_checks_see_an_upward_import_and_a_circle():
    """The checker itself, on a made-up graph: an edge from the logic engine up to analysis, one from
    experiments' tables up to its participant flow, and a circle of three modules."""
    graph = {"logic.formula": {"analysis.frames"}, "analysis.frames": set(),
             "experiments.models.items": {"experiments.participation.flow", "experiments.models.studies"},
             "experiments.a": {"experiments.b"}, "experiments.b": {"experiments.c"},
             "experiments.c": {"experiments.a"}}
    assert upward_imports(graph) == [
        "experiments.models.items (experiments' tables) imports experiments.participation.flow "
        "(experiments' participant flow)",
        "logic.formula (logic engine) imports analysis.frames (apps above experiments)"]
    assert circles(graph) == ["experiments.a ↔ experiments.b ↔ experiments.c"]
    assert layer("common.env") < layer("experiments.models") < layer("experiments.schema")
    assert layer("experiments.items.storage") < layer("experiments.participation.flow") < layer("experiments.admin")
    assert layer("experiments.tasks") < layer("inference.models")
    assert layer("studyserver.urls") > layer("demo.landing") > layer("analysis.report") > layer("common.jobs")
    with pytest.raises(AssertionError, match="nowhere.x belongs to no layer"):
        layer("nowhere.x")


def test_the_reader_sees_the_packages_an_import_runs(tmp_path):
    """Importing `app.kit.tool` runs `app/__init__.py` and `app/kit/__init__.py` first: a made-up tree where
    the package's `__init__` imports its heavy module, so a light module's importer reaches the heavy one."""
    for name, text in {"app/__init__.py": "", "app/kit/__init__.py": "from . import heavy, tool\n",
                       "app/kit/tool.py": "from .heavy import X\n", "app/kit/heavy.py": "import app.user\n",
                       "app/user.py": "from app.kit.tool import Y\n"}.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    graph = read_imports(tmp_path, ("app",))
    assert graph["app.user"] == {"app.kit", "app.kit.tool"}  # `app` is its own package: already loading
    assert graph["app.kit.tool"] == {"app.kit.heavy"}  # its own package's __init__ is not re-read
    assert graph["app.kit.heavy"] == {"app.user"}
    assert graph["app.kit"] == {"app.kit.heavy", "app.kit.tool"}
    assert circles(graph) == ["app.kit ↔ app.kit.heavy ↔ app.kit.tool ↔ app.user"]


def test_the_reader_resolves_relative_and_lazy_imports():
    graph = imports()
    assert "experiments.models" in graph["experiments.participation.selectors"]  # from ..models import …
    assert "experiments.schema" in graph["experiments.participation.selectors"]  # from .. import schema
    assert "experiments.design_registry" in graph["experiments.schema"]  # lazy, inside a function


def test_the_layout_page_names_only_paths_that_exist():
    """docs/layout.md answers "where does X live?" with paths: each one it names (in backquotes) is there, and
    it asks its eight questions."""
    text = (ROOT / "docs" / "layout.md").read_text(encoding="utf-8")
    named = {p for p in re.findall(r"`([\w./-]+/[\w./-]*)`", text) if not p.startswith(("http", "/"))}
    missing = sorted(p for p in named if not (ROOT / p).exists())
    assert len(named) >= 15 and not missing, f"docs/layout.md names paths that are not there: {missing}"
    assert len(re.findall(r"^\d\. \*\*", text, flags=re.M)) == 8


ENV_MODULE = "common/env.py"
# Files that touch os.environ without reading a setting, and why.
ENV_ALLOWED = {
    "analysis/rsession.py": "sets TZ and saves and restores LD_LIBRARY_PATH around loading R into this process: "
                           "the process's own environment for R, not a setting",
}


def _environment_reads(path: Path) -> list[str]:
    label = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path.name
    """Each place `path` reads the environment: os.environ or os.getenv (bar the entry points'
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", …)), or django-environ."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    entry_points = set()
    for node in ast.walk(tree):  # os.environ.setdefault("DJANGO_SETTINGS_MODULE", …): writes, not reads
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "setdefault"
                and ast.unparse(node.func.value) == "os.environ" and node.args
                and isinstance(node.args[0], ast.Constant) and node.args[0].value == "DJANGO_SETTINGS_MODULE"):
            entry_points.add(id(node.func.value))
    found = []
    for node in ast.walk(tree):
        text = ast.unparse(node) if isinstance(node, ast.Attribute) else ""
        if text in ("os.environ", "os.getenv") and id(node) not in entry_points:
            found.append(f"{label}:{node.lineno} {text}")
        elif isinstance(node, ast.Import) and any(a.name.split(".")[0] == "environ" for a in node.names):
            found.append(f"{label}:{node.lineno} import environ (django-environ)")
        elif isinstance(node, ast.ImportFrom) and not node.level and (
                (node.module or "").split(".")[0] == "environ"
                or (node.module == "os" and any(a.name in ("environ", "getenv") for a in node.names))):
            found.append(f"{label}:{node.lineno} from {node.module} import …")
    return found


def test_the_environment_check_sees_each_way_of_reading(tmp_path):
    path = tmp_path / "probe.py"
    path.write_text('import os\nfrom os import getenv\nimport environ\nos.environ.setdefault("DJANGO_SETTINGS_MODULE", "x")\n'
                    'A = os.environ.get("A")\nB = os.getenv("B")\n', encoding="utf-8")
    found = _environment_reads(path)
    assert sorted(line.split(" ", 1)[0].rsplit(":", 1)[1] for line in found) == ["2", "3", "5", "6"], found


def test_every_environment_read_lives_in_env_py():
    # The benchmarks and scripts set up the environment of the processes they start: they are not the product.
    paths = [ROOT / "manage.py", *(p for package in PACKAGES if package not in ("bench", "scripts")
                                   for p in sorted((ROOT / package).rglob("*.py")))]
    reads = [read for path in paths if str(path.relative_to(ROOT)) not in (ENV_MODULE, *ENV_ALLOWED)
             for read in _environment_reads(path)]
    assert not reads, "read these through common/env.py:\n" + "\n".join(reads)


def test_settings_read_no_variable_themselves():
    """settings.py takes every value from env.py's functions, not from django-environ's `env` object."""
    tree = ast.parse((ROOT / "studyserver" / "settings.py").read_text(encoding="utf-8"))
    imported = {alias.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
                and node.module == "env" and node.level == 1 for alias in node.names}
    assert "env" not in imported
    assert not [n for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id == "env"]
