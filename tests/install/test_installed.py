"""Duet as it is installed, not as the suite's environment holds it (issue 43 items 1 and 2).

The suite runs from the source tree in one environment holding every dependency group. A user meets Duet through
the README's first command and the images instead, and each of those installs fewer packages: the README's first
command crashed on a fresh machine (httpx only in a test group) and the web image could not start (two apps neither
copied nor packaged). Here each process is installed as its Dockerfile installs it — exactly the files it copies, the
core dependencies plus its own `--group`s, into a scratch environment made with uv — and started there. Docker
itself cannot run on the development machines (no daemon, no registry to pull base images from): the images' file
sets and installs are what is tested. CI also runs the README's first command until it serves (scripts/serves.sh)."""
from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import tomllib
import urllib.request
import zipfile
from pathlib import Path

import pytest
from django.conf import settings

from tests.install.installs import (
    DOCKER,
    ROOT,
    Dockerfile,
    compose_dockerfiles,
    local_apps,
    modules,
    needs_group,
    process_needs,
    tree_files,
    tree_packages,
)
from tests.studyserver.test_security_settings import production_env

WEB = Dockerfile(DOCKER / "web.Dockerfile")
UV = Path(sys.executable).with_name("uv")


# --- the file sets: fast, read from the Dockerfiles, compose and the settings ---------------------------------

@pytest.mark.parametrize("service", sorted(compose_dockerfiles()))
def test_each_image_holds_every_app_and_what_its_process_reads(service):
    dockerfile = compose_dockerfiles()[service]
    missing = process_needs(settings.INSTALLED_APPS) - dockerfile.image_tops()
    assert not missing, f"{dockerfile.path.name} (compose service {service}) does not copy {sorted(missing)}"


def test_an_app_added_to_the_settings_and_not_copied_is_named():
    """The control: an app the settings install and the web image does not copy fails the check above."""
    apps = [*settings.INSTALLED_APPS, "labnotes"]
    assert "labnotes" in local_apps(apps)
    assert process_needs(apps) - WEB.image_tops() == {"labnotes"}


def test_the_images_install_what_their_processes_run():
    images = compose_dockerfiles()
    assert images["web"].groups() == []  # the web process: the core dependencies only
    assert any(extra.startswith("gunicorn") for extra in images["web"].extras())
    assert sorted(images["worker-cpu"].groups()) == ["analysis", "inference"]  # model runs on the CPU and reports
    assert images["worker-gpu"].groups() == ["inference"]


# --- the wheel ---------------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    # from the tree's own files only, as a clone holds them: built in the working tree, setuptools would reuse a
    # build/ folder left by an earlier build, with the files of modules moved since (logic/rulebreakers_data/)
    source = tmp_path_factory.mktemp("source")
    for path in tree_files():
        (source / path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / path, source / path)
    build = subprocess.run([str(UV), "build", "--wheel", "--out-dir", str(out), str(source)], capture_output=True,
                           text=True, timeout=900)
    assert build.returncode == 0, build.stdout[-2000:] + build.stderr[-3000:]
    (found,) = out.glob("duet-*.whl")
    return found


def test_the_wheel_holds_every_package_of_the_tree_every_app_and_their_data(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    tops = {name.split("/")[0] for name in names if "/" in name and ".dist-info/" not in name}
    assert tree_packages() <= tops, f"not in the wheel: {sorted(tree_packages() - tops)}"
    assert local_apps(settings.INSTALLED_APPS) <= tops
    assert {"prolific", "designs"} <= tops  # the two the last wheel left out
    assert not tops & {"tests", "bench", "docs", "scripts", "docker"}
    # the data files packages read at run time: static files, word lists, R code, published excerpts
    data = [name for name in names if not name.endswith(".py") and ".dist-info/" not in name]
    tops_in_tree = tree_packages()
    tree_data = [path for path in tree_files() if path.split("/")[0] in tops_in_tree and not path.endswith(".py")]
    assert sorted(tree_data) == sorted(data)


# --- scratch installs: each process with only its own dependencies -------------------------------------------

def _run(argv, *, cwd=None, env=None, timeout=900) -> subprocess.CompletedProcess:
    result = subprocess.run([str(a) for a in argv], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert result.returncode == 0, f"{' '.join(map(str, argv))}\n{result.stdout[-3000:]}\n{result.stderr[-4000:]}"
    return result


def _scratch_install(where: Path, *, project: Path, dockerfile: Dockerfile) -> Path:
    """A new environment holding what `dockerfile` installs: the project with its core dependencies and the
    Dockerfile's groups and extras (torch from this machine's wheel when pip is configured with one, as pip here
    would take it; never a CUDA build). Returns its python."""
    env_dir = where / "env"
    if not env_dir.exists():  # a second call adds to the same environment
        _run([UV, "venv", "--quiet", "--seed", "--python", sys._base_executable, env_dir])  # --seed: pip, as images have
    python = env_dir / "bin" / "python"
    install = [UV, "pip", "install", "--quiet", "--python", python]
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    torch = [req for group in dockerfile.groups() for req in pyproject["dependency-groups"][group]
             if req.startswith("torch")]
    local = _local_wheel("torch", torch[0].split("==")[1]) if torch else None
    if local is not None:
        _run([*install, local])
    others = [req for req in dockerfile.extras() if not req.startswith("torch")]
    groups = [arg for group in dockerfile.groups() for arg in ("--group", f"{project / 'pyproject.toml'}:{group}")]
    _run([*install, project, *groups, *others])
    for step in dockerfile.setup_steps():  # scripts/setup.d/… as the Dockerfile runs them (the embedded model)
        _run(["bash", project / step], env={**os.environ, "VENV": str(env_dir), "ROOT": str(project),
                                             "PIP_DISABLE_PIP_VERSION_CHECK": "1"})
    _run([python, "-m", "pip", "check"])  # every installed package's requirements met (as `pip check` in an image)
    return python


def _local_wheel(name: str, version: str) -> Path | None:
    links = subprocess.run([sys.executable, "-m", "pip", "config", "get", "global.find-links"], capture_output=True,
                           text=True).stdout.split()
    for folder in links:
        for wheel in sorted(Path(folder).glob(f"{name}-{version}*.whl")):
            return wheel
    return None


def _image_folder(where: Path, dockerfile: Dockerfile) -> Path:
    app = where / "app"
    for path in dockerfile.image_files():
        (app / path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / path, app / path)
    return app


def _environment(tmp: Path, **extra) -> dict:
    keep = {key: value for key, value in os.environ.items()
            if key in ("PATH", "HOME", "LANG", "TZ", "SSL_CERT_FILE", "OMP_NUM_THREADS")}
    return {**keep, "PYTHONDONTWRITEBYTECODE": "1", "DUET_VAR_DIR": str(tmp / "var"),
            "DJANGO_SETTINGS_MODULE": "studyserver.settings", **extra}


IMPORT_EVERY_MODULE = """
import importlib, json, sys, traceback
import django
django.setup()
failed = {}
for name in json.loads(sys.argv[1]):
    try:
        importlib.import_module(name)
    except BaseException:
        failed[name] = traceback.format_exc(limit=3)
print(json.dumps(failed))
"""

WEB_PAGES = """
import json
import django
django.setup()
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse

client = Client()
statuses = {}
for path in ("/", "/healthz", "/docs/", "/docs/guide.md", "/docs/README.md", "/admin/login/"):
    statuses[path] = client.get(path, secure=True).status_code
user = get_user_model().objects.create_superuser("installcheck", "", "not-a-real-password-0")
client.force_login(user)
statuses["/admin/"] = client.get("/admin/", secure=True).status_code
for model, model_admin in admin.site._registry.items():
    meta = model._meta
    for view in ("changelist", "add"):
        path = reverse(f"admin:{meta.app_label}_{meta.model_name}_{view}")
        statuses[path] = client.get(path, secure=True).status_code
print(json.dumps(statuses))
"""


def _web_modules() -> list[str]:
    return [name for name in modules(tree_packages()) if needs_group(name) in (None, "gunicorn")]


def test_the_web_image_starts_from_its_own_files_with_the_core_dependencies_alone(tmp_path):
    """The web image's file set (exactly what web.Dockerfile copies), installed as it installs it: `check --deploy`,
    `migrate` and `collectstatic` pass; every module outside NEEDS_GROUP imports; the start page, /healthz, /docs/
    and every admin page answer without a server error; gunicorn serves /healthz."""
    app = _image_folder(tmp_path, WEB)
    python = _scratch_install(tmp_path, project=app, dockerfile=WEB)
    env = _environment(tmp_path, **production_env(
        ALLOWED_HOSTS="duet.example.org,testserver,127.0.0.1", CACHE_URL="locmemcache://install",
        DATABASE_URL=f"sqlite:///{tmp_path / 'web.sqlite3'}"))
    check = _run([python, "manage.py", "check", "--deploy", "--fail-level", "WARNING"], cwd=app, env=env)
    assert "System check identified no issues" in check.stdout
    _run([python, "manage.py", "migrate", "--noinput"], cwd=app, env=env)
    _run([python, "manage.py", "collectstatic", "--noinput"], cwd=app, env=env)
    failed = json.loads(_run([python, "-c", IMPORT_EVERY_MODULE, json.dumps(_web_modules())], cwd=app,
                             env=env).stdout)
    assert not failed, "\n".join(f"{name}:\n{trace}" for name, trace in failed.items())
    statuses = json.loads(_run([python, "-c", WEB_PAGES], cwd=app, env=env).stdout)
    pages = ("/", "/healthz", "/docs/", "/docs/guide.md", "/docs/README.md", "/admin/login/", "/admin/")
    assert {path: statuses[path] for path in pages} == dict.fromkeys(pages, 200)
    # every admin page answers: a changelist shows, an add page shows or is refused (403), never a server error
    broken = {path: status for path, status in statuses.items()
              if status >= 500 or (path.endswith("/add/") and status not in (200, 403))
              or (not path.endswith("/add/") and status != 200)}
    assert not broken, broken
    assert sum(path.endswith("/add/") for path in statuses) >= 15  # every admin page was asked for
    _gunicorn_serves(python, app, env)


def _gunicorn_serves(python: Path, app: Path, env: dict) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen([python, "-m", "gunicorn", "studyserver.wsgi:application", "--config",
                               "python:studyserver.gunicorn_conf", "--bind", f"127.0.0.1:{port}", "--workers", "1"],
                              cwd=app, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=10) as answer:
                    assert answer.status == 200
                    return
            except OSError:
                assert server.poll() is None, server.stdout.read()[-3000:]
                assert time.monotonic() < deadline, "gunicorn did not serve /healthz within 120 s"
                time.sleep(0.5)
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_each_worker_imports_what_it_loads_with_only_its_own_groups(tmp_path):
    """The worker images' files and groups: every module a worker process may load imports, and Celery finds every
    task — first the GPU worker (the inference group: it builds no report, so the analysis group's modules aside),
    then the same environment with what the CPU worker adds (the analysis group: every module)."""
    images = compose_dockerfiles()
    gpu, cpu = images["worker-gpu"], images["worker-cpu"]
    assert gpu.image_files() == cpu.image_files() and set(gpu.groups()) < set(cpu.groups())
    app = _image_folder(tmp_path, gpu)
    python = _scratch_install(tmp_path, project=app, dockerfile=gpu)
    env = _environment(tmp_path, DATABASE_URL=f"sqlite:///{tmp_path / 'worker.sqlite3'}", HF_HUB_OFFLINE="1")
    _imports_and_tasks(python, app, env, groups=set(gpu.groups()))
    _scratch_install(tmp_path, project=app, dockerfile=cpu)  # the same environment, the CPU worker's groups added
    _imports_and_tasks(python, app, env, groups=set(cpu.groups()))


def _imports_and_tasks(python: Path, app: Path, env: dict, *, groups: set[str]) -> None:
    wanted = [name for name in modules(tree_packages()) if needs_group(name) in groups | {None}]
    failed = json.loads(_run([python, "-c", IMPORT_EVERY_MODULE, json.dumps(wanted)], cwd=app, env=env).stdout)
    assert not failed, f"with the groups {sorted(groups)}:\n" + "\n".join(
        f"{name}:\n{trace}" for name, trace in failed.items())
    tasks = _run([python, "-c", "import django; django.setup(); from studyserver.celery import app; "
                  "app.loader.import_default_modules(); print('\\n'.join(sorted(app.tasks)))"], cwd=app, env=env)
    ours = {name for name in tasks.stdout.split() if not name.startswith("celery.")}
    assert {"inference.run_model", "inference.run_model_shard", "analysis.build_report"} <= ours, ours
