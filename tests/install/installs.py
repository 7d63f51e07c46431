"""What each way of installing Duet holds, read from the files that install it (issue 43 item 2).

A process is installed by its Dockerfile: what it copies (COPY lines, `.dockerignore` for `COPY . .`) and what it
installs (`pip install .` with its `--group`s and any pinned extras). The web process is also installed by
scripts/run.sh (the README's first command). These helpers read those files, so the tests hold them against the
tree and against INSTALLED_APPS instead of restating them."""
from __future__ import annotations

import fnmatch
import importlib.util
import re
import subprocess
import tomllib
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCKER = ROOT / "docker"

# What a process reads from the project folder beside its packages (BASE_DIR in common/env.py): the
# templates (settings.TEMPLATES), the documentation served under /docs/ (common/documents.py), manage.py,
# and the project file the package is installed from.
READ_FROM_BASE_DIR = ("templates", "docs", "README.md", "manage.py", "pyproject.toml")

# Modules that need a dependency group's packages when they are imported, by group. The web process (core
# dependencies only) never imports them; the GPU worker (inference) never imports the analysis ones. A module
# outside these patterns must import with the core dependencies alone (tests/install/test_installed.py).
NEEDS_GROUP = {
    "analysis": (
        # the statistics engine: pandas, NumPy, SciPy, matplotlib, rpy2 (reports are built by the CPU worker)
        "analysis.accuracy_tables", "analysis.clustered", "analysis.codebook", "analysis.factors", "analysis.frames",
        "analysis.generated",
        "analysis.html", "analysis.like_for_like", "analysis.likeness", "analysis.likeness_report",
        "analysis.metrics", "analysis.plots", "analysis.power", "analysis.prep", "analysis.proportions",
        "analysis.rbridge", "analysis.report", "analysis.reproduce", "analysis.rprocess", "analysis.rsession",
        "analysis.sections", "analysis.separation", "analysis.versus",
        # issue 47's report parts: the summary, people by device and channel, participant factors, people's power
        "analysis.answering", "analysis.participant_factors", "analysis.people_effects", "analysis.power_people",
        "analysis.summary",
        # each design package's report part (designs/apps.py registers them lazily, for reports only)
        "designs.*.frames", "designs.*.mixed", "designs.*.report_parts", "designs.*.report", "designs.*.metrics",
        "designs.*.people", "designs.*.sequents", "designs.*.simulate",
    ),
    "inference": ("inference.scorers.hf", "inference.scorers.loading", "inference.scorers.gguf_f32"),
    # not a group: the web image's own extra (web.Dockerfile installs gunicorn beside the project)
    "gunicorn": ("studyserver.gunicorn_conf",),
}


def needs_group(module: str) -> str | None:
    """The dependency group `module` needs at import time, or None for the core dependencies."""
    for group, patterns in NEEDS_GROUP.items():
        if any(fnmatch.fnmatchcase(module, pattern) for pattern in patterns):
            return group
    return None


def tree_files() -> list[str]:
    """Every file of the working tree that is the project's (tracked, or new and not ignored)."""
    out = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                         capture_output=True, text=True, check=True).stdout
    return sorted(path for path in out.splitlines() if (ROOT / path).is_file())


def tree_packages() -> set[str]:
    """The top-level Python packages in the tree that pyproject.toml's package discovery keeps."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    excluded = project["tool"]["setuptools"]["packages"]["find"]["exclude"]
    tops = {path.split("/")[0] for path in tree_files() if path.count("/") == 1 and path.endswith("/__init__.py")}
    return {top for top in tops if not any(fnmatch.fnmatchcase(top, pattern) for pattern in excluded)}


def modules(packages: set[str]) -> list[str]:
    """Every module of `packages` in the tree (migrations aside: Django loads them itself)."""
    found = []
    for path in tree_files():
        parts = path[:-3].split("/") if path.endswith(".py") else None
        if not parts or parts[0] not in packages or "migrations" in parts:
            continue
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found.append(".".join(parts))
    return sorted(found)


def local_apps(installed_apps: list[str]) -> set[str]:
    """The top-level packages of INSTALLED_APPS that are the project's: found in this tree, or nowhere (an app
    named in the settings and not installed from a package is ours, and must be shipped)."""
    ours = set()
    for app in installed_apps:
        top = app.split(".")[0]
        if (ROOT / top / "__init__.py").is_file() or importlib.util.find_spec(top) is None:
            ours.add(top)
    return ours


def process_needs(installed_apps: list[str]) -> set[str]:
    """Top-level paths of the project folder any Duet process needs at run time."""
    return tree_packages() | local_apps(installed_apps) | set(READ_FROM_BASE_DIR)


@dataclass(frozen=True)
class Dockerfile:
    path: Path

    @property
    def text(self) -> str:
        return re.sub(r"\\\n", " ", self.path.read_text())

    def copies(self) -> list[str]:
        """The sources of its COPY lines (build context paths; multi-stage `--from` copies aside)."""
        sources = []
        for line in self.text.splitlines():
            words = line.split()
            if not words or words[0].upper() != "COPY" or any(w.startswith("--from") for w in words):
                continue
            sources += [w.rstrip("/") for w in words[1:-1] if not w.startswith("--")]
        return sources

    def groups(self) -> list[str]:
        """The dependency groups its `pip install .` adds to the core dependencies."""
        return re.findall(r"--group\s+([A-Za-z0-9_-]+)", self.text)

    def extras(self) -> list[str]:
        """The quoted requirements its pip lines name besides the project (gunicorn, the model's package…)."""
        wanted = []
        for command in re.findall(r"pip install ([^&;]*)", self.text):
            wanted += [req for req in re.findall(r'"([^"]+)"', command) if not req.startswith("pip")]
        return wanted

    def setup_steps(self) -> list[str]:
        """The project's set-up scripts its RUN lines call (scripts/setup.d/…), in order."""
        return re.findall(r"bash (scripts/setup\.d/[\w.-]+\.sh)", self.text)

    def image_files(self) -> list[str]:
        """The tree's files this image holds: each COPY source, `.dockerignore` applied to the context."""
        ignored = _dockerignore()
        context = [path for path in tree_files() if not _ignored(path, ignored)]
        held = set()
        for source in self.copies():
            if source == ".":
                held.update(context)
            else:
                held.update(path for path in context if path == source or path.startswith(source + "/"))
        return sorted(held)

    def image_tops(self) -> set[str]:
        return {path.split("/")[0] for path in self.image_files()}


def _dockerignore() -> list[str]:
    path = ROOT / ".dockerignore"
    lines = path.read_text().splitlines() if path.is_file() else []
    return [line.strip().rstrip("/") for line in lines if line.strip() and not line.startswith("#")]


def _ignored(path: str, patterns: list[str]) -> bool:
    parts = path.split("/")
    prefixes = ["/".join(parts[: i + 1]) for i in range(len(parts))]
    for pattern in patterns:
        bare = pattern.removeprefix("**/")
        if any(fnmatch.fnmatchcase(prefix, pattern) for prefix in prefixes):
            return True
        if pattern.startswith("**/") and any(fnmatch.fnmatchcase(part, bare) for part in parts):
            return True
    return False


def compose_dockerfiles() -> dict[str, Dockerfile]:
    """Each service of docker/compose.yaml that Duet builds → its Dockerfile."""
    import yaml

    services = yaml.safe_load((DOCKER / "compose.yaml").read_text())["services"]
    built = {}
    for name, service in services.items():
        if "build" in service:
            built[name] = Dockerfile((DOCKER / service["build"]["context"] / service["build"]["dockerfile"]).resolve())
    return built
