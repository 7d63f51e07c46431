"""The one job loop (issue 36 item 3, common.jobs.job_execute), for each of the four job kinds:
the claim (a job not claimable is returned as it is and its steps never run), the steps' progress,
cancellation (at a checkpoint, or found when the steps end) with what the steps wrote discarded, the
failure policy (the error in words on the row, raised again unless the kind ends normally) and the
final completeness check. Each kind's real steps run in its own tests (tests/inference,
tests/analysis, tests/experiments/participation); here the loop's own rules, with steps written for
the test."""
from __future__ import annotations

import pytest

from inference.models import ModelRun
from common import jobs
from common.jobs import JobStatus
from tests.factories import ItemFactory
from tests.studyserver.test_jobs_contract import KINDS, at, make

pytestmark = pytest.mark.django_db
kinds = pytest.mark.parametrize("kind", list(KINDS))


class Walk(jobs.Steps):
    """Three steps, each a checkpoint then a progress write; `then` runs after the second."""

    def __init__(self, then=None, fields=None, **kwargs):
        super().__init__(**kwargs)
        self.then, self.fields, self.ran, self.discarded = then, fields or {}, 0, 0

    def run(self):
        for step in (1, 2, 3):
            self.checkpoint()
            self.progress(step, 3)
            self.ran = step
            if step == 2 and self.then:
                self.then(self.job)
        return self.fields

    def discard(self):
        self.discarded += 1


@kinds
def test_steps_run_their_progress_is_told_and_the_job_is_done(kind):
    job, told = make(kind), []
    done = jobs.job_execute(type(job), job.pk, Walk(on_progress=lambda d, t: told.append((d, t))))
    assert done.status == JobStatus.DONE and done.finished_at is not None and done.error == ""
    assert told == [(1, 3), (2, 3), (3, 3)] and done.progress().done == 3


@kinds
def test_a_job_not_claimable_is_returned_as_it_is(kind):
    job = at(make(kind), JobStatus.DONE)
    steps = Walk()
    assert jobs.job_execute(type(job), job.pk, steps).status == JobStatus.DONE and steps.ran == 0


@kinds
def test_a_cancel_stops_the_steps_at_their_next_checkpoint_and_discards(kind):
    job = make(kind)
    steps = Walk(then=lambda j: jobs.job_cancel(type(j).objects.get(pk=j.pk)))
    result = jobs.job_execute(type(job), job.pk, steps)
    assert result.status == JobStatus.CANCELLED and steps.ran == 2 and steps.discarded == 1
    assert result.progress().done == 2  # what was done is kept


@kinds
def test_a_job_cancelled_as_its_steps_end_is_not_done(kind):
    job = make(kind)

    class Late(Walk):
        def run(self):
            fields = super().run()
            jobs.job_cancel(type(self.job).objects.get(pk=self.job.pk))  # after the last checkpoint
            return fields

    steps = Late()
    result = jobs.job_execute(type(job), job.pk, steps)
    assert result.status == JobStatus.CANCELLED and steps.ran == 3 and steps.discarded == 1


@kinds
def test_a_failure_is_recorded_in_words_and_raised_again_where_the_kind_says(kind):
    job = make(kind)

    def boom(_):
        raise ZeroDivisionError("the third step divides by nothing")

    model = type(job)
    if model.KIND.raises:
        with pytest.raises(ZeroDivisionError):
            jobs.job_execute(model, job.pk, Walk(then=boom))
    else:
        jobs.job_execute(model, job.pk, Walk(then=boom))
    job.refresh_from_db()
    assert job.status == JobStatus.FAILED and job.error == "ZeroDivisionError: the third step divides by nothing"
    assert model.KIND.raises == (model is not ModelRun)  # a failed run's task ends normally


@kinds
def test_a_failure_after_a_cancel_keeps_the_cancel_and_discards(kind):
    job = make(kind)

    def cancel_then_fail(j):
        jobs.job_cancel(type(j).objects.get(pk=j.pk))
        raise RuntimeError("late")

    steps = Walk(then=cancel_then_fail)
    try:
        jobs.job_execute(type(job), job.pk, steps)
    except RuntimeError:
        assert type(job).KIND.raises
    job.refresh_from_db()
    assert job.status == JobStatus.CANCELLED and job.error == "" and steps.discarded == 1


def test_the_final_check_refuses_a_run_that_lacks_items():
    run = make("model run")
    ItemFactory(study=run.study, code="LACK-1", gold_answer="yes")
    result = jobs.job_execute(ModelRun, run.pk, Walk())  # nothing stored: ModelRun.unfinished says so
    assert result.status == JobStatus.FAILED
    assert result.error.startswith(f"Model run {run.pk} is not done: 1 of the 1 items it owns are not stored")
    assert "item LACK-1" in result.error


def test_a_checkpoint_asked_often_reads_the_status_at_most_every_so_many_seconds(django_assert_num_queries):
    """A scorer calls it between its requests or batches (inference: services.STOP_EVERY): the first call
    reads the job's status, then none until the seconds have passed, and a cancel is found at the next read."""
    queued = make("model run")
    job, claimed = jobs.job_claim(ModelRun, queued.pk)
    assert claimed
    steps, now = Walk(), [100.0]
    steps.job = job
    check = steps.checkpoint_every(1.0, clock=lambda: now[0])
    with django_assert_num_queries(1):
        check()
        now[0] += 0.5
        check()  # not read: half a second
    jobs.job_cancel(job)
    now[0] += 0.5
    with django_assert_num_queries(1), pytest.raises(jobs.JobStopped):
        check()
