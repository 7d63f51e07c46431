"""The one way into the workers: common.dispatch.send, the run_task command, and DUET_TASK_MODE."""
from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.db import transaction

from common import dispatch
from common import env as duet_env

ROOT = Path(__file__).resolve().parents[2]
TASK = "analysis.build_report"


def _subprocess_env(tmp_path, **extra) -> dict:
    cleared = {"DATABASE_URL", "CELERY_BROKER_URL", "CELERY_TASK_ALWAYS_EAGER", "DUET_TASK_MODE"}
    env = {k: v for k, v in os.environ.items() if k not in cleared}
    env.update(DJANGO_SETTINGS_MODULE="studyserver.settings", DUET_VAR_DIR=str(tmp_path / "var"), PYTHONPATH=str(ROOT))
    env.update(extra)
    return env


def _python(tmp_path, code: str, **extra) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=_subprocess_env(tmp_path, **extra),
                          capture_output=True, text=True, timeout=600)


@pytest.fixture
def calls(monkeypatch):
    """What the analysis task's apply / apply_async were called with (the task itself does not run)."""
    task, seen = dispatch.registered(TASK), []
    monkeypatch.setattr(task, "apply", lambda args: seen.append(("apply", args)))
    monkeypatch.setattr(task, "apply_async", lambda args, queue: seen.append(("apply_async", args, queue)))
    return seen


# --- eager --------------------------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_eager_runs_the_task_in_process_once_the_transaction_commits(settings, calls):
    settings.DUET_TASK_MODE = "eager"
    with transaction.atomic():
        dispatch.send(TASK, args=[7], log_name="report-7")
        assert calls == []  # not before the commit
    assert calls == [("apply", [7])]


@pytest.mark.django_db(transaction=True)
def test_eager_sends_nothing_when_the_transaction_rolls_back(settings, calls):
    settings.DUET_TASK_MODE = "eager"
    with pytest.raises(RuntimeError), transaction.atomic():
        dispatch.send(TASK, args=[7], log_name="report-7")
        raise RuntimeError("rolled back")
    assert calls == []


@pytest.mark.django_db
def test_eager_runs_the_real_task_and_a_failing_task_raises_nothing(settings, django_capture_on_commit_callbacks):
    from analysis.models import ReportStatus
    from analysis.services import report_request, reports_withdraw
    from experiments import services

    settings.DUET_TASK_MODE = "eager"
    study = services.study_create(slug="eager", title="Eager", design="modal-syllogisms")
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        report = report_request(study=study)
        reports_withdraw(study=study, reason="withdrawn before it ran")  # the task returns at once
    assert len(callbacks) == 2  # the dispatch and the withdrawal's file clean-up
    report.refresh_from_db()
    assert report.status == ReportStatus.WITHDRAWN
    with django_capture_on_commit_callbacks(execute=True):
        dispatch.send(TASK, args=[report.pk + 1000], log_name="none")  # no such report: the task fails quietly


# --- embedded -----------------------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)  # outside a transaction: sent at once
def test_embedded_starts_a_detached_run_task_process_logging_under_var(settings, monkeypatch, tmp_path):
    settings.DUET_TASK_MODE = "embedded"
    monkeypatch.setattr(dispatch, "VAR_DIR", tmp_path)
    started = []

    class Popen:
        def __init__(self, argv, **kwargs):
            started.append((argv, kwargs))

    monkeypatch.setattr(dispatch.subprocess, "Popen", Popen)
    dispatch.send(TASK, args=[12], log_name="report-12")  # no transaction here: sent at once
    [(argv, kwargs)] = started
    assert argv == [sys.executable, str(ROOT / "manage.py"), "run_task", TASK, "12"]
    assert kwargs["cwd"] == ROOT and kwargs["start_new_session"] is True
    assert kwargs["stdin"] == subprocess.DEVNULL and kwargs["stderr"] == subprocess.STDOUT
    assert kwargs["stdout"].name == str(tmp_path / "logs" / "report-12.log") and "a" in kwargs["stdout"].mode


EMBEDDED = """
import time, django
django.setup()
from django.core.management import call_command
call_command("migrate", verbosity=0)
from django.db import transaction
from analysis.services import report_request, reports_withdraw
from experiments import services
from common import dispatch
study = services.study_create(slug="embedded", title="Embedded", design="modal-syllogisms")
with transaction.atomic():
    report = report_request(study=study)
    reports_withdraw(study=study, reason="withdrawn before it ran")  # the worker has nothing to build
print("MODE", dispatch.mode(), "REPORT", report.pk)
"""


def test_embedded_worker_process_runs_the_registered_task(tmp_path):
    """A real spawned `manage.py run_task analysis.build_report ID` against the same SQLite file."""
    done = _python(tmp_path, EMBEDDED)
    assert done.returncode == 0, done.stdout + done.stderr
    mode, report_id = done.stdout.split()[1], done.stdout.split()[3]
    assert mode == "embedded"
    log, line = tmp_path / "var" / "logs" / f"report-{report_id}.log", f"{TASK}({report_id}): withdrawn"
    deadline = time.monotonic() + 300  # the worker runs detached; it writes its result line when it exits
    while time.monotonic() < deadline:
        if log.exists() and line in log.read_text():
            break
        time.sleep(0.1)
    assert line in log.read_text(), log.read_text() if log.exists() else "no log"


# --- celery -------------------------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)  # outside a transaction: sent at once
def test_celery_sends_to_the_queue(settings, calls):
    settings.DUET_TASK_MODE = "celery"
    dispatch.send(TASK, args=[3], queue="gpu", log_name="unused")
    assert calls == [("apply_async", [3], "gpu")]


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


UNREACHABLE = """
import django
django.setup()
from django.core.management import call_command
call_command("migrate", verbosity=0)
from django.db import transaction
from analysis.services import report_request
from experiments import services
from common import dispatch
seen = []
dispatch.send("analysis.build_report", args=[1], log_name="x", on_unreachable=seen.append)
print("ON_UNREACHABLE", [type(e).__name__ for e in seen])
try:
    dispatch.send("analysis.build_report", args=[1], log_name="x")
except Exception as error:
    print("RAISED", type(error).__module__, type(error).__name__)
study = services.study_create(slug="down", title="Down", design="modal-syllogisms")
with transaction.atomic():
    report = report_request(study=study)
report.refresh_from_db()
print("REPORT", report.status, "|", report.error)
"""


def test_celery_with_an_unreachable_broker_calls_on_unreachable_else_raises(tmp_path):
    url = f"redis://127.0.0.1:{_closed_port()}/0"
    done = _python(tmp_path, UNREACHABLE, DUET_TASK_MODE="celery", CELERY_BROKER_URL=url)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "ON_UNREACHABLE ['OperationalError']" in done.stdout
    assert "RAISED kombu.exceptions OperationalError" in done.stdout
    assert "REPORT failed | The task broker could not be reached" in done.stdout  # retry can send it again


# --- what send refuses --------------------------------------------------------------------------


def test_unknown_task_and_non_integer_arguments_are_refused_before_anything_is_scheduled(settings, calls):
    settings.DUET_TASK_MODE = "eager"
    with pytest.raises(LookupError, match="No task registered as 'no.such.task'; known: .*analysis.build_report"):
        dispatch.send("no.such.task", args=[1], log_name="x")
    with pytest.raises(TypeError, match="integers"):
        dispatch.send(TASK, args=["1"], log_name="x")
    with pytest.raises(TypeError, match="integers"):
        dispatch.send(TASK, args=[True], log_name="x")
    settings.DUET_TASK_MODE = "celeri"
    with pytest.raises(ValueError, match="DUET_TASK_MODE='celeri'"):
        dispatch.send(TASK, args=[1], log_name="x")
    assert calls == []


def test_both_tasks_are_registered():
    assert dispatch.registered("analysis.build_report").name == "analysis.build_report"
    assert dispatch.registered("inference.run_model").name == "inference.run_model"


# --- run_task -----------------------------------------------------------------------------------


def test_run_task_refuses_an_unknown_task():
    with pytest.raises(CommandError, match="No task registered as 'no.such.task'"):
        call_command("run_task", "no.such.task", "1")


@pytest.mark.django_db
def test_run_task_runs_the_task_here_and_fails_when_it_fails(capsys):
    from analysis.models import Report, ReportStatus
    from experiments import services

    study = services.study_create(slug="run-task", title="Run task", design="modal-syllogisms")
    report = Report.objects.create(study=study, status=ReportStatus.WITHDRAWN)
    call_command("run_task", TASK, str(report.pk))
    assert capsys.readouterr().out.strip() == f"{TASK}({report.pk}): withdrawn"
    with pytest.raises(CommandError, match=rf"{TASK}\({report.pk + 1000}\) failed: DoesNotExist"):
        call_command("run_task", TASK, str(report.pk + 1000))


def test_run_task_exits_non_zero_with_a_clear_message(tmp_path):
    done = subprocess.run([sys.executable, "manage.py", "run_task", "no.such.task", "1"], cwd=ROOT,
                          env=_subprocess_env(tmp_path), capture_output=True, text=True, timeout=600)
    assert done.returncode != 0
    assert "No task registered as 'no.such.task'" in done.stderr and "Traceback" not in done.stderr


# --- the setting --------------------------------------------------------------------------------


@pytest.mark.parametrize(("environ", "expected"), [
    ({}, "embedded"),
    ({"DUET_TASK_MODE": "eager"}, "eager"),
    ({"DUET_TASK_MODE": "Embedded"}, "embedded"),
    ({"DUET_TASK_MODE": "celery", "CELERY_BROKER_URL": "redis://redis:6379/0"}, "celery"),
])
def test_task_mode_from_the_environment(monkeypatch, environ, expected):
    for name in ("DUET_TASK_MODE", "CELERY_TASK_ALWAYS_EAGER", "CELERY_BROKER_URL"):
        monkeypatch.delenv(name, raising=False)
    for name, value in environ.items():
        monkeypatch.setenv(name, value)
    assert duet_env.task_mode(broker_url=duet_env.celery_broker_url()) == expected


@pytest.mark.parametrize(("environ", "message"), [
    ({"DUET_TASK_MODE": "redis"}, "DUET_TASK_MODE='redis' is not one of eager, embedded, celery"),
    ({"DUET_TASK_MODE": "celery"}, "set CELERY_BROKER_URL to redis://"),
    ({"DUET_TASK_MODE": "celery", "CELERY_BROKER_URL": "filesystem://"}, "set CELERY_BROKER_URL to redis://"),
    ({"CELERY_TASK_ALWAYS_EAGER": "true"}, "set DUET_TASK_MODE=eager instead"),
])
def test_task_mode_refuses_what_cannot_work(monkeypatch, environ, message):
    for name in ("DUET_TASK_MODE", "CELERY_TASK_ALWAYS_EAGER", "CELERY_BROKER_URL"):
        monkeypatch.delenv(name, raising=False)
    for name, value in environ.items():
        monkeypatch.setenv(name, value)
    with pytest.raises(duet_env.SettingsError, match=message.replace("(", r"\(")):
        duet_env.task_mode(broker_url=duet_env.celery_broker_url())


def test_settings_stop_the_process_on_a_bad_task_mode(tmp_path):
    code = "import django; django.setup(); from django.conf import settings; print(settings.DUET_TASK_MODE)"
    assert _python(tmp_path, code).stdout.strip() == "embedded"
    bad = _python(tmp_path, code, DUET_TASK_MODE="celery")
    assert bad.returncode != 0 and "SettingsError" in bad.stderr and "CELERY_BROKER_URL to redis://" in bad.stderr
