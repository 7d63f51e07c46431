"""One kind of background job (issue 29 item 1): model runs, reports, power analyses and simulated
pilots are each a `Job`, a row with one status machine, one way to be sent to the workers, one claim
by the worker, progress, cancel and retry, and the last error in words.

- `JobStatus` is the status machine every job moves along. A job class declares what kind of job it
  is in one `JobKind`: its task, log, noun and unit, its progress fields, the statuses it uses (only
  reports are withdrawn) and whether a running job may be claimed again (a model run whose worker
  died resumes where it stopped).
- Services, named job_<action>: `job_create` records a job and sends it through
  common.dispatch.send (the one way into the workers); a broker that cannot be reached fails the
  job with that said in words, so that retry can send it again. `job_claim` is the worker's
  queued → running move, `job_progress` writes done/total (`job_advance` adds one step, counted in
  the database), `job_finish` (refused while the job lacks something: `Job.unfinished`, e.g. a model
  run's items not all stored), `job_fail` (its error in words: a database error never as raw SQL),
  `job_cancel`, `job_retry`, `job_move` for anything else. Each move is checked by `can_move` against
  the status in the database and written only if nobody moved the row meanwhile.
- `Progress` is what the admin's bar and the commands' progress lines show: done / total, the rate
  since this attempt started and the time left at that rate.

A job may be sent as several parts (`Job.parts`: a model run over several servers sends one task
per server), the same way when it is created and when it is retried. The apps' services keep what
is their own (what a run scores, what a report writes).
"""
from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import ClassVar

from django.core.exceptions import ValidationError
from django.db import DatabaseError, DataError, IntegrityError, OperationalError, models, transaction
from django.db.models import F
from django.utils import timezone

from . import dispatch
from .choices import StateChoices
from .progress import QUIET_AFTER, Progress, ProgressPrinter, duration  # noqa: F401 (re-exported)

log = logging.getLogger(__name__)


class JobStatus(StateChoices):
    QUEUED = "queued", "queued"
    RUNNING = "running", "running"
    DONE = "done", "done"
    FAILED = "failed", "failed"
    CANCELLED = "cancelled", "cancelled"
    WITHDRAWN = "withdrawn", "withdrawn (a participant's data was erased; files deleted)"

    @classmethod
    def transitions(cls) -> dict[str, frozenset[str]]:
        return {
            cls.QUEUED: frozenset({cls.RUNNING, cls.FAILED, cls.CANCELLED, cls.WITHDRAWN}),
            # RUNNING → RUNNING: a worker picks up a job whose previous worker was killed (kinds that RESUME)
            cls.RUNNING: frozenset({cls.RUNNING, cls.DONE, cls.FAILED, cls.CANCELLED, cls.WITHDRAWN}),
            cls.DONE: frozenset({cls.WITHDRAWN}),
            cls.FAILED: frozenset({cls.QUEUED, cls.WITHDRAWN}),
            cls.CANCELLED: frozenset({cls.QUEUED, cls.WITHDRAWN}),
            cls.WITHDRAWN: frozenset(),
        }


ACTIVE = (JobStatus.QUEUED, JobStatus.RUNNING)
FINISHED = (JobStatus.DONE, JobStatus.FAILED, JobStatus.CANCELLED, JobStatus.WITHDRAWN)
ORDINARY = (JobStatus.QUEUED, JobStatus.RUNNING, JobStatus.DONE, JobStatus.FAILED, JobStatus.CANCELLED)


class JobRefused(ValidationError, ValueError):
    """A move the status machine does not allow (or a row moved by someone else meanwhile); a
    ValidationError for forms and the admin, a ValueError for the services that raised one before."""

    def __init__(self, message: str):
        super().__init__(message)

    def __str__(self) -> str:
        return self.message


@dataclass(frozen=True)
class JobKind:
    """What kind of background job a Job class is, declared once on the class as `KIND`.

    task: the Celery task's registered name (its first argument is the job's id);
    log_name: the embedded worker's log, VAR_DIR/logs/<log_name>-<id>.log;
    noun: the job as the researcher reads it ("model run"); unit: what its progress counts ("items");
    done_field, total_field: the fields holding its progress (declared by the class);
    statuses: the statuses it uses; resumes: a running job may be claimed again (its worker died);
    one_per_study: a heavy job of which a study runs one at a time, of all such kinds together
    (experiments/study_jobs.py: simulated pilots and power analyses);
    raises: the failure policy's last step (job_execute): after recording a failure on the row, raise
    the error again (its task fails in the worker's log) or end normally (a model run: the researcher
    retries it; a redelivered task finds it failed and leaves it).
    """

    task: str
    log_name: str
    noun: str
    unit: str = "steps"
    done_field: str = "done"
    total_field: str = "total"
    statuses: tuple[str, ...] = ORDINARY
    resumes: bool = False
    one_per_study: bool = False
    raises: bool = True


@dataclass(frozen=True)
class Part:
    """One task a job is sent as: the task's name, its arguments after the job's id, its queue and
    what its log's name adds (a model run's "-shard-2")."""

    task: str
    args: tuple = ()
    queue: str = "cpu"
    log_suffix: str = ""


def counter(label: str, help_text: str) -> models.PositiveIntegerField:
    """A count a job writes as it goes (done, total, answers saved, …): zero at first, never edited in
    the admin, with the researcher's words for it."""
    return models.PositiveIntegerField(default=0, editable=False, verbose_name=label, help_text=help_text)


def record(empty: type[list] | type[dict], help_text: str, label: str | None = None) -> models.JSONField:
    """A structured value a job writes (its warnings, the runs it used, a curve, its versions): empty
    at first, never edited in the admin (shown as a table there), with the researcher's words for it."""
    return models.JSONField(default=empty, blank=True, editable=False, verbose_name=label, help_text=help_text)


class Job(models.Model):
    """The fields and rules every background job shares. A subclass declares `KIND = JobKind(...)`."""

    KIND: ClassVar[JobKind]

    status = models.CharField(max_length=10, choices=JobStatus.choices, default=JobStatus.QUEUED, editable=False)
    error = models.TextField(blank=True, editable=False, help_text="Why the job last failed, in words.")
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True, editable=False,
                                      help_text="When a worker last started (or resumed) it.")
    finished_at = models.DateTimeField(null=True, blank=True, editable=False)
    progress_at = models.DateTimeField(null=True, blank=True, editable=False,
                                       help_text="When its progress was last written.")
    progress_from = models.PositiveIntegerField(default=0, editable=False,
                                                help_text="Done when the rate started counting.")
    progress_since = models.DateTimeField(null=True, blank=True, editable=False,
                                          help_text="When the rate started counting (the worker's start, after its set-up).")

    class Meta:
        abstract = True

    # ----------------------------------------------------------------- the status machine
    @classmethod
    def can_move(cls, source: str, target: str) -> bool:
        if target not in cls.KIND.statuses or not JobStatus.can_move(source, target):
            return False
        return cls.KIND.resumes or not (source == JobStatus.RUNNING and target == JobStatus.RUNNING)

    @classmethod
    def allowed_from(cls, source: str) -> str:
        return ", ".join(sorted(t for t in JobStatus.transitions().get(source, ()) if cls.can_move(source, t))) or "none"

    def dispatch_queue(self) -> str:
        """The Celery queue the job goes to (model runs: "gpu" unless on the CPU)."""
        return "cpu"

    def parts(self) -> list[Part]:
        """The tasks the job is sent as, when created and when retried: one, its kind's task."""
        return [Part(self.KIND.task, queue=self.dispatch_queue())]

    def unfinished(self) -> str:
        """What the job still lacks to be done, in words ("" when nothing: `job_finish` refuses otherwise).
        A model run: every item it owns stored."""
        return ""

    def retry_fields(self) -> dict:
        """What a retry resets besides the status and the error (a job that starts again from nothing:
        its progress and summary)."""
        return {}

    # ----------------------------------------------------------------- progress
    def last_heard(self) -> datetime:
        """When the job last wrote anything: its progress, or its start, or its creation."""
        return self.progress_at or self.started_at or self.created_at

    def progress(self, *, now: datetime | None = None) -> "Progress":
        done = getattr(self, self.KIND.done_field) or 0
        total = getattr(self, self.KIND.total_field) or 0
        rate = None
        if self.status == JobStatus.RUNNING and self.progress_since and self.progress_at and done > self.progress_from:
            seconds = (self.progress_at - self.progress_since).total_seconds()
            if seconds > 0:
                rate = (done - self.progress_from) / seconds
        running = self.status == JobStatus.RUNNING
        quiet = ((now or timezone.now()) - self.last_heard()).total_seconds() if running and self.last_heard() else None
        return Progress(done=done, total=total, unit=self.KIND.unit, rate=rate, running=running, quiet_for=quiet)


# --------------------------------------------------------------------- services


def job_create(model: type[Job], *, send: bool = True, **fields) -> Job:
    """Record a queued job and send it to the workers once the transaction commits (send=False: the
    caller runs it itself)."""
    job = model.objects.create(**fields)
    if send:
        job_dispatch(job)
    return job


def job_dispatch(job: Job) -> None:
    """Send the job's parts (one task, or a model run's task per server) through common.dispatch;
    a broker that cannot be reached fails the job (nothing was queued), saying so, so that retry sends
    it again."""
    model, pk = type(job), job.pk

    def unreachable(exc: Exception) -> None:
        with transaction.atomic():
            current = model.objects.select_for_update().get(pk=pk)
            if current.status == JobStatus.QUEUED:
                job_move(current, JobStatus.FAILED,
                         error=f"The task broker could not be reached ({exc}); nothing was queued. "
                               f"Retry the {model.KIND.noun} once the broker is back.")

    for part in job.parts():
        dispatch.send(part.task, args=[pk, *part.args], queue=part.queue,
                      log_name=f"{model.KIND.log_name}-{pk}{part.log_suffix}", on_unreachable=unreachable)


def job_move(job: Job, to: str, **fields) -> Job:
    """Move `job` to `to` if its status machine allows it from the status in the database, writing
    `fields` with it; JobRefused otherwise (nothing written). Sets started/finished times and clears
    the error on the way back to the queue."""
    model = type(job)
    if to not in JobStatus.values:
        raise JobRefused(f"'{to}' is not a {model.KIND.noun} status; choose one of {', '.join(model.KIND.statuses)}.")
    current = model.objects.filter(pk=job.pk).values_list("status", flat=True).first()
    if current is None:
        raise JobRefused(f"{model.KIND.noun.capitalize()} {job.pk} does not exist.")
    if not model.can_move(current, to):
        raise JobRefused(f"{model.KIND.noun.capitalize()} {job.pk} cannot go from {current} to {to} "
                         f"(allowed: {model.allowed_from(current)}).")
    now = timezone.now()
    values = {"status": to}
    if to == JobStatus.RUNNING:
        values.update(started_at=now, progress_at=now, progress_since=now,
                      progress_from=getattr(job, model.KIND.done_field) or 0)
    elif to in FINISHED:
        values["finished_at"] = now
    elif to == JobStatus.QUEUED:
        values.update(error="", finished_at=None)
    values.update(fields)
    if model.objects.filter(pk=job.pk, status=current).update(**values) != 1:
        raise JobRefused(f"{model.KIND.noun.capitalize()} {job.pk} changed status meanwhile; try again.")
    for name, value in values.items():
        setattr(job, name, value)
    return job


def job_claim(model: type[Job], pk: int, *, related: tuple[str, ...] = ()) -> tuple[Job, bool]:
    """The worker's claim: (job, True) when it moved queued → running (or, for kinds that resume, took
    over a running job whose worker died), else (job as it is, False): nothing to do."""
    with transaction.atomic():
        job = model.objects.select_for_update().select_related(*related).get(pk=pk)
        if not (job.status == JobStatus.QUEUED or (model.KIND.resumes and job.status == JobStatus.RUNNING)):
            return job, False
        return job_move(job, JobStatus.RUNNING), True


def job_progress(job: Job, done: int, total: int | None = None) -> None:
    """Write how far the job is (and when), for the admin's bar."""
    model = type(job)
    values = {model.KIND.done_field: done, "progress_at": timezone.now()}
    if total is not None:
        values[model.KIND.total_field] = total
    model.objects.filter(pk=job.pk).update(**values)
    for name, value in values.items():
        setattr(job, name, value)


def job_advance(job: Job, by: int = 1) -> None:
    """One more step done (`by`), counted in the database (several workers of one job add up); for
    a progress that moves between the job's own writes of `job_progress`."""
    model, now = type(job), timezone.now()
    model.objects.filter(pk=job.pk).update(**{model.KIND.done_field: F(model.KIND.done_field) + by,
                                              "progress_at": now})
    setattr(job, model.KIND.done_field, (getattr(job, model.KIND.done_field) or 0) + by)
    job.progress_at = now


def job_count_from(job: Job, done: int) -> None:
    """Start the rate here: `done` already done, now (after a worker's set-up, e.g. loading a model)."""
    model, now = type(job), timezone.now()
    values = {model.KIND.done_field: done, "progress_from": done, "progress_since": now, "progress_at": now}
    model.objects.filter(pk=job.pk).update(**values)
    for name, value in values.items():
        setattr(job, name, value)


def job_still_running(job: Job) -> bool:
    """False once someone cancelled (or withdrew) the job: the worker stops at its next step."""
    return type(job).objects.filter(pk=job.pk, status=JobStatus.RUNNING).exists()


class JobIncomplete(JobRefused):
    """A job asked to finish that has not done all it owns (Job.unfinished)."""


def job_finish(job: Job, **fields) -> Job:
    """Move the job to done, only if it lacks nothing (Job.unfinished; JobIncomplete saying what, otherwise)."""
    lacking = job.unfinished()
    if lacking:
        raise JobIncomplete(f"{type(job).KIND.noun.capitalize()} {job.pk} is not done: {lacking}.")
    return job_move(job, JobStatus.DONE, **fields)


DATABASE_WORDS = (  # (error class, what happened), the first that matches
    (IntegrityError, "refused to store a value (one missing, or one already stored)"),
    (DataError, "could not hold a value (not a number it can store, or out of its range)"),
    (OperationalError, "could not be written to (unreachable, busy or locked)"),
    (DatabaseError, "refused a write"),
)


def error_words(error: BaseException | str) -> str:
    """An error as the researcher reads it. A database error is said in words, with the database's own
    first line (capped) and never the statement or the row it refused."""
    if isinstance(error, str):
        return error
    if isinstance(error, JobRefused):  # (a refusal, e.g. job_finish's, is already in words)
        return str(error)
    if isinstance(error, DatabaseError):
        what = next(words for kind, words in DATABASE_WORDS if isinstance(error, kind))
        first = (str(error).strip().splitlines() or [""])[0]
        first = first if len(first) <= 160 else first[:160] + "…"
        return (f"The database {what}; nothing of that step was kept. Retry once the cause is fixed"
                + (f" (the database said: {first})." if first else "."))
    return f"{type(error).__name__}: {error}"


def job_fail(job: Job, error: BaseException | str, **fields) -> Job | None:
    """Fail a running or queued job with its error in words (error_words); a job cancelled or withdrawn
    meanwhile keeps that status (None)."""
    words = error_words(error)
    try:
        return job_move(job, JobStatus.FAILED, error=words, **fields)
    except JobRefused:
        return None


def job_cancel(job: Job) -> Job:
    """Cancel a queued or running job; a worker stops at its next step, keeping what it has stored."""
    return job_move(job, JobStatus.CANCELLED)


def job_retry(job: Job) -> Job:
    """Queue a failed or cancelled job again and send it; it resumes with what it has not done yet
    (a kind that starts again from nothing resets what its retry_fields say)."""
    with transaction.atomic():
        job_move(job, JobStatus.QUEUED, **job.retry_fields())
        job_dispatch(job)
    return job


# --------------------------------------------------------------------- the one job loop


class JobStopped(Exception):
    """Raised by `Steps.checkpoint` when the job was cancelled (or withdrawn) meanwhile: job_execute
    stops the job's steps there, keeping what they stored."""


class Steps:
    """A job kind's own steps, run by `job_execute`, which owns everything around them. Subclasses
    write `run`; `failure` and `discard` are optional.

    Inside `run`, `self.job` is the claimed job; `self.checkpoint()` stops the steps when the job was
    cancelled meanwhile (the one way a job is cancelled: its status in the database), and
    `self.checkpoint_every(seconds)` is the same for a caller that asks often (a scorer between its
    requests or batches: the database read at most every `seconds`); `self.progress`
    writes done/total (`check=True`: a checkpoint first) and tells the caller's `on_progress`."""

    related: tuple[str, ...] = ()  # what the claim reads with the job (select_related)

    def __init__(self, on_progress: Callable[[int, int], None] | None = None):
        self.on_progress = on_progress
        self.job: Job | None = None

    def run(self) -> dict | None:
        """Do the work; return the fields job_finish writes, or None when another task of the same job
        finishes it (a model run's shard that is not the last)."""
        raise NotImplementedError

    def failure(self, error: Exception) -> tuple[BaseException | str, dict]:
        """Why the job failed (job_fail puts it in words) and the fields written with the failure."""
        return error, {}

    def discard(self) -> None:
        """Throw away what the steps wrote outside the database when the job was cancelled or withdrawn
        meanwhile (a report's files)."""

    # what `run` calls
    def checkpoint(self) -> None:
        if not job_still_running(self.job):
            raise JobStopped

    def checkpoint_every(self, seconds: float, clock: Callable[[], float] = time.monotonic) -> Callable[[], None]:
        """`checkpoint`, reading the database at most every `seconds` (for a caller that checks often: a
        scorer between its requests or batches); the first call reads it."""
        last = [None]

        def check() -> None:
            now = clock()
            if last[0] is None or now - last[0] >= seconds:
                last[0] = now
                self.checkpoint()

        return check

    def progress(self, done: int, total: int | None = None, *, check: bool = False) -> None:
        if check:
            self.checkpoint()
        job_progress(self.job, done, total)
        self.tell(done)

    def tell(self, done: int | None = None) -> None:
        """Tell the caller's on_progress (the commands' lines) how far the job is."""
        if self.on_progress:
            job = self.job
            self.on_progress(getattr(job, job.KIND.done_field) if done is None else done,
                             getattr(job, job.KIND.total_field))


def job_execute(model: type[Job], pk: int, steps: Steps) -> Job:
    """The one job loop, for every kind: the claim (anything not claimable is returned as it is:
    idempotent), the steps, cancellation (a `JobStopped` at a checkpoint, or a job found stopped
    when its steps end: its status in the database decides, read under the row's lock, and
    `steps.discard` throws away what it wrote), the failure policy (the error logged, recorded in
    words unless the job was stopped meanwhile, then raised again where the kind says so) and the
    final completeness check (job_finish refuses a job that lacks something: Job.unfinished).
    Returns the job as the database holds it at the end."""
    job, claimed = job_claim(model, pk, related=steps.related)
    if not claimed:
        return job
    steps.job = job
    try:
        fields = steps.run()
        if fields is not None:
            with transaction.atomic():
                status = model.objects.select_for_update().values_list("status", flat=True).get(pk=pk)
                if status == JobStatus.RUNNING:
                    job_finish(job, **fields)
                elif status != JobStatus.DONE:  # (DONE: another task of the job finished it meanwhile)
                    raise JobStopped
    except JobStopped:
        steps.discard()
    except Exception as error:
        log.exception("%s %s failed", model.KIND.noun, pk)
        with transaction.atomic():
            stopped = not model.objects.select_for_update().filter(pk=pk, status=JobStatus.RUNNING).exists()
            if stopped:
                steps.discard()
            else:
                words, fields = steps.failure(error)
                job_fail(job, words, **fields)
        if model.KIND.raises:
            raise
    job.refresh_from_db()
    return job

