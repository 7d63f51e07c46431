"""Following a study's submissions on Prolific (issue 38 item 3), with Prolific's answers checked before they
count (issue 45 item 3):

* one total deadline for the whole sync (`seconds`, SYNC_SECONDS by default): the client's deadline, within
  which every request, every wait before a retry and every submission's own page is read; a web thread is
  held no longer, however slow or endless the list;
* streamed: a page is read, checked and stored before the next one is asked for, so a sync holds one page
  (at most the client's MAX_RESULTS results and MAX_BYTES) whatever the list's length;
* resumable: after each page the path of the next is saved on the study's ProlificStudy row (`sync_next`); a
  sync stopped by its deadline (or a failure) keeps what it stored, and the next sync starts at that page; a sync
  that reads the last page clears it and sets `synced_at` (the list was read whole). Review and bonuses act only
  after a whole sync (`prolific_sync_whole`): 003's wage rule takes the median of every approved submission;
* checked before stored: a submission's id and participant id must be Prolific ids (24 hexadecimal digits,
  rules.PROLIFIC_ID), its study (when the answer names one) this study, its status one of Prolific's spellings
  (capitals, spaces, hyphens), its time taken a sane number of seconds; a submission that fails is refused,
  counted and not stored (a participant id of `a,9999.00\\nOTHERPID` never reaches the bonus CSV). A study whose
  list runs past `max_submissions` stored rows is refused: no study of its places has that many.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

from django.utils import timezone

from experiments.models import Participant, Study

from . import rules
from .client import MAX_PAGES, Client, ProlificDeadline, submissions_path
from .models import ProlificStudy, Submission
from .services import ProlificRefused, Row, client_for, link_of, seconds_taken, sync_rows

SYNC_SECONDS = 60.0


def max_submissions(places: int) -> int:
    """The most submissions Duet stores for a study of `places` places (returns and time-outs included)."""
    return max(1000, 20 * places)


@dataclass(frozen=True)
class Synced:
    rows: list[Row]
    complete: bool  # the list was read to its last page (else: stopped at the deadline; the next sync resumes)
    stored: int  # submissions this sync stored
    refused: int  # submissions this sync refused (ids or status not Prolific's): not stored
    seconds: float

    def words(self) -> str:
        said = f"Synced: {len(self.rows)} rows, {sum(1 for r in self.rows if r.flag)} flagged."
        if self.refused:
            said += (f" {self.refused} submission{'' if self.refused == 1 else 's'} from Prolific refused: "
                     "its ids or status are not in Prolific's format, so nothing of it was stored.")
        if not self.complete:
            said += (f" Stopped at the sync's deadline ({self.seconds:g} s) with {self.stored} submissions read and "
                     "kept: sync again to go on from there.")
        return said


def prolific_sync(*, study: Study, client: Client | None = None, seconds: float = SYNC_SECONDS) -> Synced:
    """Every Prolific submission of the study, stored page by page and joined to Duet's participant, within
    `seconds` in all; resumes where an earlier sync stopped."""
    link = link_of(study)
    if link is None or not link.prolific_id:
        raise ProlificRefused(f"Study '{study.slug}' has not been published on Prolific from Duet.")
    client = client_for(study, client)
    client.deadline = time.monotonic() + seconds
    path = link.sync_next or submissions_path(link.prolific_id)
    stored = refused = 0
    complete = False
    try:
        for _ in range(MAX_PAGES):
            results, following = client.page(path)
            kept = _store_page(study, link, results, client)
            stored, refused = stored + kept, refused + len(results) - kept
            ProlificStudy.objects.filter(pk=link.pk).update(sync_next=following)
            if not following:
                complete = True
                break
            if Submission.objects.filter(study=study).count() > max_submissions(link.places):
                raise ProlificRefused(f"Prolific lists more than {max_submissions(link.places)} submissions for a "
                                      f"study of {link.places} places: the sync stopped (what it read is kept).")
            path = following
    except ProlificDeadline:
        pass
    finally:
        client.deadline = None
    if complete:
        ProlificStudy.objects.filter(pk=link.pk).update(synced_at=timezone.now(), sync_next="")
    return Synced(sync_rows(study=study), complete, stored, refused, seconds)


def prolific_sync_whole(*, study: Study, client: Client | None = None, seconds: float = SYNC_SECONDS) -> Synced:
    """A sync that must read the list to its end: what review and bonuses need."""
    synced = prolific_sync(study=study, client=client, seconds=seconds)
    if not synced.complete:
        raise ProlificRefused(synced.words() + " Review and bonuses act only on every submission: nothing was "
                                               "sent.")
    return synced


def _store_page(study: Study, link: ProlificStudy, results: list[dict], client: Client) -> int:
    """Store a page's submissions that pass the checks, each as soon as it is complete (a submission's own page
    is read, once, for its time taken): a deadline in the middle keeps those already stored. Returns how many."""
    checked = [s for s in results if _checked(s, link.prolific_id)]
    pids = {s["participant_id"] for s in checked}
    people = {p.prolific_pid: p for p in Participant.objects.filter(study=study, prolific_pid__in=pids).real()}
    known = dict(Submission.objects.filter(study=study, submission_id__in=[s["id"] for s in checked],
                                           time_taken__isnull=False).values_list("submission_id", "time_taken"))
    for s in checked:
        sid, pid, status = s["id"], s["participant_id"], s["status"]
        taken, code = seconds_taken(s), s.get("study_code")
        if taken is None and sid not in known and status in (rules.AWAITING_REVIEW, rules.APPROVED):
            detail = client.submission_get(sid)  # ProlificDeadline here: the page is read again next time
            if isinstance(detail, dict) and detail.get("id", sid) == sid:
                taken = seconds_taken(detail)
                code = code if code is not None else detail.get("study_code")
        p = people.get(pid)
        if p is not None and p.prolific_session_id and p.prolific_session_id != sid:
            p = None  # the same Prolific id, another session: not this submission
        Submission.objects.update_or_create(study=study, submission_id=sid, defaults={
            "participant": p, "prolific_pid": pid, "status": status,
            "time_taken": known.get(sid) if taken is None else taken, "study_code": _code(code)})
    return len(checked)


def _checked(submission: dict, study_id: str) -> bool:
    """Whether a submission from Prolific may be stored: Prolific ids, this study, a status as Prolific spells it."""
    named = submission.get("study_id", study_id)
    return (rules.is_prolific_id(submission.get("id")) and rules.is_prolific_id(submission.get("participant_id"))
            and named == study_id and rules.is_status(submission.get("status")))


def _code(value) -> str:
    """The completion code the participant typed on Prolific: text they wrote, kept printable and short."""
    return "".join(c for c in str(value or "") if c.isprintable())[:64]
