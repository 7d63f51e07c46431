"""Layers you can see (issue 29 item 4; DESIGN.md habit 17), checked the way farm-studio checks its
own: every import of the project's packages is read with `ast` — at the top of a module or inside a
function, for a lazy import runs all the same — and

* no import runs upward: the pure logic engine (logic) at the bottom, then studyserver's
  helpers, then the experiments app, then inference and analysis, then the project's wiring
  (studyserver's settings and urls) and the demo on top;
* no import runs in a circle among the modules;
* the logic engine imports nothing from Django (nor from any other part of the project);
* every environment read lives in studyserver/env.py.

An import that must break a rule is named in ALLOWED with the reason; an entry that no longer
matches anything fails the test, so the list only shrinks."""
from __future__ import annotations

import ast
import functools
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("logic", "experiments", "studyserver", "inference", "analysis", "demo")
LOGIC = "logic"

# The layers, bottom first: a module may import its own layer and those below it.
LAYERS = (
    ("logic engine", (LOGIC,)),
    ("studyserver's helpers", ("studyserver",)),
    ("apps", ("experiments",)),
    ("apps above experiments", ("inference", "analysis")),
    ("the project's wiring and the demo", ("studyserver.settings", "studyserver.urls", "studyserver.wsgi",
                                           "studyserver.asgi", "studyserver.landing", "demo")),
)

# (importer, imported) → why the import is where it is. Keep it short; every entry is a debt.
ALLOWED: dict[tuple[str, str], str] = {}


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            found[_module_name(path)] = path
    return found


def _resolve(name: str, known: dict[str, Path]) -> str | None:
    """The project module `name` names: itself, or the nearest package above it that exists."""
    while name and name not in known:
        name = name.rpartition(".")[0]
    return name or None


@functools.cache
def imports() -> dict[str, set[str]]:
    """Module → the project modules it imports, anywhere in its body."""
    known = _modules()
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
                if name.split(".")[0] in PACKAGES:
                    target = _resolve(name, known)
                    if target and target != module:
                        targets.add(target)
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


def test_no_import_runs_upward():
    graph = _allowed(imports())
    upward = sorted(f"{module} ({LAYERS[layer(module)][0]}) imports {target} ({LAYERS[layer(target)][0]})"
                    for module, targets in graph.items() for target in targets if layer(target) > layer(module))
    assert not upward, "\n".join(upward)


def test_no_import_runs_in_a_circle():
    found = cycles(_allowed(imports()))
    assert not found, "\n".join(" ↔ ".join(component) for component in found)


def test_every_allowed_import_is_still_there():
    graph = imports()
    stale = [f"{a} → {b}" for a, b in ALLOWED if b not in graph.get(a, set())]
    assert not stale, "remove these ALLOWED entries: " + ", ".join(stale)


def test_the_logic_engine_imports_nothing_from_django_nor_the_project():
    bad = []
    for path in sorted((ROOT / "logic").rglob("*.py")):
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
    assert not bad, "\n".join(bad)


def test_the_checks_see_an_upward_import_and_a_circle():
    """The checker itself, on a made-up graph: an edge from the logic engine up to analysis, and a
    circle of three modules."""
    graph = {"logic.formula": {"analysis.frames"}, "analysis.frames": set(),
             "experiments.a": {"experiments.b"}, "experiments.b": {"experiments.c"},
             "experiments.c": {"experiments.a"}}
    assert layer("logic.formula") < layer("analysis.frames")
    assert layer("studyserver.env") < layer("experiments.models") < layer("inference.models")
    assert layer("studyserver.urls") > layer("analysis.report") and layer("demo.pilot") > layer("analysis.report")
    assert cycles(graph) == [["experiments.a", "experiments.b", "experiments.c"]]


def test_the_reader_resolves_relative_and_lazy_imports():
    graph = imports()
    assert "experiments.models" in graph["experiments.participation.selectors"]  # from ..models import …
    assert "experiments.schema" in graph["experiments.participation.selectors"]  # from .. import schema
    assert "experiments.designs.registry" in graph["experiments.schema"]  # lazy, inside a function


ENV_MODULE = "studyserver/env.py"
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
    paths = [ROOT / "manage.py", *(p for package in PACKAGES for p in sorted((ROOT / package).rglob("*.py")))]
    reads = [read for path in paths if str(path.relative_to(ROOT)) not in (ENV_MODULE, *ENV_ALLOWED)
             for read in _environment_reads(path)]
    assert not reads, "read these through studyserver/env.py:\n" + "\n".join(reads)


def test_settings_read_no_variable_themselves():
    """settings.py takes every value from env.py's functions, not from django-environ's `env` object."""
    tree = ast.parse((ROOT / "studyserver" / "settings.py").read_text(encoding="utf-8"))
    imported = {alias.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
                and node.module == "env" and node.level == 1 for alias in node.names}
    assert "env" not in imported
    assert not [n for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id == "env"]
