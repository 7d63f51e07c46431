"""One contract for every background job (issue 29 item 1, common/jobs.py): model runs,
reports, power analyses and simulated pilots each pass the same tests — every legal and illegal
move of the status machine, cancel, retry, a broker that cannot be reached (Celery pointed at a
closed port, in a fresh process as tests/studyserver/test_dispatch.py does), and the progress the
admin shows on its list and change pages (the bar in Chromium: tests/e2e/test_job_progress.py)."""
from __future__ import annotations

import json
from datetime import timedelta

import pytest
from django.db import transaction
from django.urls import reverse
from django.utils import timezone

from analysis.models import PowerAnalysis, Report
from experiments.participation.pilot import Pilot
from inference.models import LanguageModel, ModelRun
from common import dispatch, jobs
from common.jobs import JobRefused, JobStatus
from tests.factories import StudyFactory
from tests.integration.servers import free_port
from tests.studyserver.test_dispatch import _python

pytestmark = pytest.mark.django_db

KINDS = {  # the job kinds, each with what its admin is called and what its progress counts
    "model run": (ModelRun, "inference_modelrun", "items"),
    "report": (Report, "analysis_report", "steps"),
    "power analysis": (PowerAnalysis, "analysis_poweranalysis", "simulated studies"),
    "simulated pilot": (Pilot, "experiments_pilot", "simulated participants"),
}
STATUSES = ["queued", "running", "done", "failed", "cancelled", "withdrawn"]
# The contract, written out: every move a job may make. A model run may also be claimed again while
# running (its worker died: it resumes); only a report is withdrawn (a participant's data erased).
LEGAL = {
    ("queued", "running"), ("queued", "failed"), ("queued", "cancelled"),
    ("running", "done"), ("running", "failed"), ("running", "cancelled"),
    ("failed", "queued"), ("cancelled", "queued"),
}
ONLY = {"model run": {("running", "running")},
        "report": {("queued", "withdrawn"), ("running", "withdrawn"), ("done", "withdrawn"),
                   ("failed", "withdrawn"), ("cancelled", "withdrawn")}}


def make(kind: str, study=None, **fields):
    """A queued job of `kind` (recorded, not sent)."""
    study = study or StudyFactory()
    model = KINDS[kind][0]
    if model is ModelRun:
        lm = LanguageModel.objects.create(name=f"fake-{study.pk}", source="fake", backend="fake")
        return ModelRun.objects.create(study=study, language_model=lm, items_total=200, **fields)
    if model is Report:
        return Report.objects.create(study=study, total=2, **fields)
    if model is PowerAnalysis:
        return PowerAnalysis.objects.create(study=study, plan={"sizes": [10], "nsim": 200}, total=200, **fields)
    return Pilot.objects.create(study=study, participants=200, total=200, **fields)


def at(job, status: str):
    type(job).objects.filter(pk=job.pk).update(status=status)
    job.status = status
    return job


kinds = pytest.mark.parametrize("kind", list(KINDS))


@kinds
def test_each_legal_and_illegal_transition(kind):
    job = make(kind)
    legal = LEGAL | ONLY.get(kind, set())
    for source in STATUSES:
        for target in STATUSES:
            at(job, source)
            assert type(job).can_move(source, target) == ((source, target) in legal), (source, target)
            if (source, target) in legal:
                jobs.job_move(job, target)
                job.refresh_from_db()
                assert job.status == target
            else:
                with pytest.raises(JobRefused, match=f"cannot go from {source} to {target}"):
                    jobs.job_move(job, target)
                job.refresh_from_db()
                assert job.status == source  # nothing written
    with pytest.raises(JobRefused, match="is not a .* status"):
        jobs.job_move(at(job, "queued"), "paused")


@kinds
def test_a_move_made_meanwhile_by_someone_else_is_refused(kind):
    job = make(kind)
    stale = type(job).objects.get(pk=job.pk)
    jobs.job_cancel(job)
    with pytest.raises(JobRefused, match="cannot go from cancelled to running"):
        jobs.job_move(stale, JobStatus.RUNNING)  # the stale copy still says queued; the database decides


@kinds
def test_the_claim_moves_queued_to_running_once(kind):
    job = make(kind)
    claimed, moved = jobs.job_claim(type(job), job.pk)
    assert moved and claimed.status == JobStatus.RUNNING and claimed.started_at is not None
    again, moved_again = jobs.job_claim(type(job), job.pk)
    assert moved_again == (kind == "model run")  # only a run resumes a running job (its worker died)


@kinds
def test_cancel_stops_the_job_and_its_worker_leaves_it_alone(kind):
    job = make(kind)
    jobs.job_cancel(job)
    job.refresh_from_db()
    assert job.status == JobStatus.CANCELLED and job.finished_at is not None
    task = dispatch.registered(type(job).KIND.task)
    assert task.apply(args=[job.pk]).get() == JobStatus.CANCELLED  # the worker's claim refuses it
    running = at(make(kind), JobStatus.RUNNING)
    jobs.job_cancel(running)
    assert not jobs.job_still_running(running)  # what a worker checks between its steps
    with pytest.raises(JobRefused, match="cannot go from done to cancelled"):
        jobs.job_cancel(at(make(kind), JobStatus.DONE))


@pytest.fixture
def sent(monkeypatch):
    """What each job's task was sent (eager mode calls task.apply once the transaction commits): the
    real dispatch.send, with the task's own run left out."""
    seen = []
    for model, _, _ in KINDS.values():
        task = dispatch.registered(model.KIND.task)
        monkeypatch.setattr(task, "apply", lambda args, name=model.KIND.task: seen.append((name, args)))
    return seen


@kinds
def test_retry_queues_a_failed_or_cancelled_job_again_and_sends_it(kind, settings, sent,
                                                                    django_capture_on_commit_callbacks):
    settings.DUET_TASK_MODE = "eager"
    job = make(kind)
    jobs.job_claim(type(job), job.pk)
    assert jobs.job_fail(job, RuntimeError("R stopped")) is not None
    job.refresh_from_db()
    assert job.status == JobStatus.FAILED and job.error == "RuntimeError: R stopped"  # the error in words
    with django_capture_on_commit_callbacks(execute=True):
        jobs.job_retry(job)
    job.refresh_from_db()
    assert job.status == JobStatus.QUEUED and job.error == "" and job.finished_at is None
    assert sent == [(type(job).KIND.task, [job.pk])]
    jobs.job_cancel(job)
    with django_capture_on_commit_callbacks(execute=True):
        jobs.job_retry(job)
    assert job.status == JobStatus.QUEUED and len(sent) == 2
    with pytest.raises(JobRefused, match="cannot go from queued to queued"):
        jobs.job_retry(job)
    assert len(sent) == 2  # a refused retry sends nothing


@kinds
def test_a_failure_after_a_cancel_keeps_the_cancel(kind):
    job = at(make(kind), JobStatus.RUNNING)
    jobs.job_cancel(type(job).objects.get(pk=job.pk))
    assert jobs.job_fail(job, RuntimeError("late")) is None
    job.refresh_from_db()
    assert job.status == JobStatus.CANCELLED and job.error == ""


# --- the broker cannot be reached: each kind's own create service, in a process of its own ----------

BROKER_DOWN = """
import json
import django
django.setup()
from django.core.management import call_command
call_command("migrate", verbosity=0)
from django.db import transaction
from analysis.power_plan import PowerPlan
from analysis.power_services import power_request
from analysis.services import report_request
from designs.modal.items import items_generate
from experiments import services
from experiments.participation.pilot import pilot_create
from inference.services import language_model_create, model_run_launch
from common import jobs

out = {}
def record(kind, make):
    with transaction.atomic():
        job = make()
    job.refresh_from_db()
    out[kind] = {"status": job.status, "error": job.error, "pk": job.pk, "model": type(job).__name__}

study = services.study_create(slug="down", title="Down", design="modal-syllogisms")
items_generate(study=study, design="modal-syllogisms", interpretations=1, seed=0)
fake = language_model_create(name="fake", source="fake", backend="fake", device="cpu")
record("model run", lambda: model_run_launch(study=study, language_model=fake))
record("report", lambda: report_request(study=study))
record("simulated pilot", lambda: pilot_create(study=study, participants=2, seed=1))
other = services.study_create(slug="down-2", title="Down 2", design="modal-syllogisms")
record("power analysis", lambda: power_request(study=other, plan=PowerPlan(sizes=(10,), nsim=10)))
# a failed job's retry with the broker still down fails again, saying so
from experiments.participation.pilot import Pilot
with transaction.atomic():
    again = jobs.job_retry(Pilot.objects.get())
again.refresh_from_db()
out["retried pilot"] = {"status": again.status, "error": again.error}
print("JOBS", json.dumps(out))
"""


@pytest.fixture(scope="module")
def broker_down(tmp_path_factory):
    url = f"redis://127.0.0.1:{free_port()}/0"
    done = _python(tmp_path_factory.mktemp("broker"), BROKER_DOWN, DUET_TASK_MODE="celery", CELERY_BROKER_URL=url)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    line = next(line for line in done.stdout.splitlines() if line.startswith("JOBS "))
    return json.loads(line.removeprefix("JOBS "))


@kinds
def test_a_job_created_while_the_broker_is_down_fails_saying_so_and_can_be_retried(kind, broker_down):
    job = broker_down[kind]
    assert job["model"] == KINDS[kind][0].__name__
    assert job["status"] == "failed", job
    assert job["error"].startswith("The task broker could not be reached (") and "nothing was queued" in job["error"]
    assert f"Retry the {kind} once the broker is back." in job["error"]
    again = broker_down["retried pilot"]
    assert again["status"] == "failed" and "could not be reached" in again["error"]


# --- progress: done / total, the rate, the time left; on the admin's list and change pages ----------


def running_with_progress(kind, study=None):
    """A running job 50 of 200 done, 10 s after its rate started counting from 0: 5 per second,
    30 s left."""
    job = make(kind, study=study)
    jobs.job_claim(type(job), job.pk)
    jobs.job_count_from(job, 0)
    jobs.job_progress(job, 50, 200)
    since = job.progress_at - timedelta(seconds=10)
    type(job).objects.filter(pk=job.pk).update(progress_since=since)
    job.refresh_from_db()
    return job


@kinds
def test_progress_counts_done_the_rate_and_the_time_left(kind):
    job = running_with_progress(kind)
    unit = KINDS[kind][2]
    progress = job.progress()
    assert (progress.done, progress.total, progress.share) == (50, 200, 0.25)
    assert progress.rate == pytest.approx(5.0) and progress.seconds_left == pytest.approx(30.0)
    assert progress.text() == f"50 / 200 {unit} (25 %), 5.0 {unit}/s, about 30 s left"
    queued = make(kind).progress()
    assert queued.rate is None and queued.text() == f"0 / {queued.total} {unit} (0 %)"  # no rate before it runs


@kinds
def test_a_running_job_silent_for_half_an_hour_is_shown_as_such(kind, admin_client):
    """Its worker may have died (killed, the machine rebooted): the bar says so and what to do, and
    gives no time left; 29 minutes of quiet (a long R fit) is not yet silence."""
    job = running_with_progress(kind)
    unit = KINDS[kind][2]
    later = job.progress_at + jobs.QUIET_AFTER
    assert not job.progress(now=later - timedelta(minutes=1)).silent
    progress = job.progress(now=later)
    assert progress.silent and progress.text() == (
        f"50 / 200 {unit} (25 %), 5.0 {unit}/s, nothing written for 30 min 00 s: its worker may have stopped "
        "(cancel it, then retry it)")
    type(job).objects.filter(pk=job.pk).update(progress_at=timezone.now() - jobs.QUIET_AFTER - timedelta(minutes=2))
    html = admin_client.get(reverse(f"admin:{KINDS[kind][1]}_changelist")).content.decode()
    assert "nothing written for 32 min" in html and "its worker may have stopped (cancel it, then retry it)" in html
    assert not make(kind).progress(now=later).silent  # a queued job waits for a worker: not silence


@kinds
def test_the_admin_list_and_change_page_show_a_running_jobs_progress_bar(kind, admin_client):
    job = running_with_progress(kind)
    unit = KINDS[kind][2]
    bar = '<progress class="job-progress" value="50" max="200"'
    words = f"50 / 200 {unit} (25 %), 5.0 {unit}/s, about 30 s left"
    admin_name = KINDS[kind][1]
    listing = admin_client.get(reverse(f"admin:{admin_name}_changelist"))
    assert listing.status_code == 200
    html = listing.content.decode()
    assert bar in html and words in html
    page = admin_client.get(reverse(f"admin:{admin_name}_change", args=[job.pk]))
    assert page.status_code == 200
    html = page.content.decode()
    assert bar in html and words in html
    assert '<meta http-equiv="refresh" content="3">' in html  # the page follows the job while it runs
    assert 'value="cancel_jobs"' in listing.content.decode() and 'value="retry_jobs"' in listing.content.decode()
    jobs.job_fail(job, ValueError("no scores for this study"))
    html = admin_client.get(reverse(f"admin:{admin_name}_change", args=[job.pk])).content.decode()
    assert "ValueError: no scores for this study" in html and 'http-equiv="refresh"' not in html


@kinds
def test_the_admin_actions_cancel_and_retry(kind, admin_client, settings, sent, django_capture_on_commit_callbacks):
    settings.DUET_TASK_MODE = "eager"
    job = make(kind)
    url = reverse(f"admin:{KINDS[kind][1]}_changelist")
    admin_client.post(url, {"action": "cancel_jobs", "_selected_action": [job.pk]})
    job.refresh_from_db()
    assert job.status == JobStatus.CANCELLED
    with django_capture_on_commit_callbacks(execute=True):
        admin_client.post(url, {"action": "retry_jobs", "_selected_action": [job.pk]})
    job.refresh_from_db()
    assert job.status == JobStatus.QUEUED and sent == [(type(job).KIND.task, [job.pk])]
    response = admin_client.post(url, {"action": "retry_jobs", "_selected_action": [job.pk]}, follow=True)
    assert "cannot go from queued to queued" in response.content.decode()  # refused, in words


def test_the_command_line_prints_the_same_progress():
    lines, now = [], [100.0]
    printer = jobs.ProgressPrinter(lines.append, label="Scoring", unit="items", every=5.0, clock=lambda: now[0])
    printer(0, 200)
    now[0] = 102.0
    printer(10, 200)  # within 5 s of the last line: not printed
    now[0] = 110.0
    printer(50, 200)
    now[0] = 140.0
    printer(200, 200)  # the last is always printed
    assert lines == ["Scoring: 0 / 200 items (0 %)",
                     "Scoring: 50 / 200 items (25 %), 5.0 items/s, about 30 s left",
                     "Scoring: 200 / 200 items (100 %), 5.0 items/s"]


def test_durations_read_as_words():
    assert [jobs.duration(s) for s in (0, 0.2, 59, 60, 185, 3600, 7440)] == [
        "0 s", "1 s", "59 s", "1 min 00 s", "3 min 05 s", "1 h 00 min", "2 h 04 min"]


@pytest.mark.django_db(transaction=True)
def test_nothing_is_sent_when_the_creating_transaction_rolls_back(settings, sent):
    settings.DUET_TASK_MODE = "eager"
    study = StudyFactory()
    with pytest.raises(RuntimeError), transaction.atomic():
        jobs.job_create(Report, study=study, total=2)
        raise RuntimeError("the request failed after the job was recorded")
    assert not Report.objects.exists() and sent == []
    report = jobs.job_create(Report, study=study, total=2)
    assert sent == [("analysis.build_report", [report.pk])] and report.created_at <= timezone.now()


# --- the migrations keep every existing row's status ------------------------------------------------

BEFORE = [("analysis", "0007_admin_labels"), ("experiments", "0012_participant_title_admin_labels"),
          ("inference", "0005_admin_labels")]
AFTER = [("analysis", "0008_jobs"), ("experiments", "0013_pilot_job"), ("inference", "0006_model_run_job")]


@pytest.mark.django_db(transaction=True)
def test_the_migrations_keep_each_rows_status_and_move_errors_to_error():
    from django.db import connection
    from django.db.migrations.executor import MigrationExecutor

    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    old = MigrationExecutor(connection).loader.project_state(BEFORE).apps
    study = old.get_model("experiments", "Study").objects.create(slug="old", title="Old", design="modal-syllogisms")
    lm = old.get_model("inference", "LanguageModel").objects.create(name="fake", source="fake", backend="fake")
    Run, Rep = old.get_model("inference", "ModelRun"), old.get_model("analysis", "Report")
    Pow, Pil = old.get_model("analysis", "PowerAnalysis"), old.get_model("experiments", "Pilot")
    runs = {s: Run.objects.create(study_id=study.pk, language_model_id=lm.pk, status=s, error=f"e-{s}").pk
            for s in ("queued", "running", "done", "failed", "cancelled")}
    reports = {s: Rep.objects.create(study_id=study.pk, status=s, message=f"m-{s}").pk
               for s in ("queued", "running", "done", "failed", "withdrawn")}
    powers = {s: Pow.objects.create(study_id=study.pk, status=s, message=f"m-{s}").pk
              for s in ("queued", "running", "done", "failed")}
    pilots = {s: Pil.objects.create(study_id=study.pk, participants=7, status=s, message=f"m-{s}").pk
              for s in ("queued", "running", "done", "failed")}
    MigrationExecutor(connection).migrate(AFTER)
    MigrationExecutor(connection).migrate(MigrationExecutor(connection).loader.graph.leaf_nodes())
    for model, rows in ((ModelRun, runs), (Report, reports), (PowerAnalysis, powers), (Pilot, pilots)):
        for status, pk in rows.items():
            job = model.objects.get(pk=pk)
            assert job.status == status, (model.__name__, status)
            if model is not ModelRun and status == "failed":  # the error moves to `error`
                assert (job.error, job.message) == ("m-failed", ""), model.__name__
            elif model is not ModelRun:
                assert (job.error, job.message) == ("", f"m-{status}"), model.__name__
            else:
                assert job.error == f"e-{status}"
    assert [(p.total, p.done) for p in Pilot.objects.order_by("pk")] == [(7, 0), (7, 0), (7, 7), (7, 0)]
