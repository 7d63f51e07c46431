"""Prolific's answers checked before they count (issue 45 item 3): ids in Prolific's format before they are stored
(a participant id that would add a paid line to the bonus CSV is refused at sync); a sync streams pages into the
database under one total deadline and resumes where it stopped, against a slow, endless hostile Prolific; review and
bonuses act only on a whole sync."""
from __future__ import annotations

import json
import time
from decimal import Decimal
from urllib.parse import parse_qs, urlsplit

import pytest
from django.core.management import CommandError, call_command

from prolific import client as client_module
from prolific.bonuses import bonus_plan
from prolific.client import Client, ProlificError
from prolific.models import ProlificStudy, Submission
from prolific.sync import prolific_sync, prolific_sync_whole
from prolific.services import ProlificRefused
from tests import hostile
from tests.prolific.standin import pid as P

pytestmark = pytest.mark.django_db
STUDY_ID = "ab" * 12
ORIGIN = "https://duet.example.org"


def test_a_participant_id_that_would_add_a_paid_line_is_refused_at_sync_and_never_reaches_the_csv(standin,
                                                                                                  ready_study):
    from prolific.services import prolific_publish

    link = prolific_publish(study=ready_study, origin=ORIGIN, reward_cents=150, places=4, minutes=8)
    standin.add_submission(link.prolific_id, P("honest"), status="APPROVED", time_taken=600)
    hostile_ids = ["a,9999.00\nOTHERPID", P("x") + "\n", "", "ZZ" * 12]
    for bad in hostile_ids:
        standin.add_submission(link.prolific_id, bad, status="APPROVED", time_taken=600)
    standin.add_submission(link.prolific_id, P("bad-status"), status="APPROVED\n<script>", time_taken=600)
    standin.add_submission(link.prolific_id, P("bad-id"), status="APPROVED", submission_id="not-a-prolific-id")
    synced = prolific_sync(study=ready_study)
    assert synced.complete and synced.stored == 1 and synced.refused == len(hostile_ids) + 2
    assert "6 submissions from Prolific refused" in synced.words()
    assert list(Submission.objects.values_list("prolific_pid", flat=True)) == [P("honest")]
    lines, _ = bonus_plan(study=ready_study, amount=Decimal("0.50"))
    assert [line.prolific_pid for line in lines] == [P("honest")]
    call_command("prolific", "bonus", ready_study.slug, "--amount", "0.50", "--apply", "--confirm-total", "0.50")
    assert standin.paid() == {P("honest"): 1}
    [setup] = [c for c in standin.state.calls if c.path.endswith("/bonus-payments/")]
    assert setup.body["csv_bonuses"] == f"{P('honest')},0.50\n"


def _link(study) -> ProlificStudy:
    return ProlificStudy.objects.create(study=study, prolific_id=STUDY_ID, internal_name="duet:x:1",
                                        state="published", reward_cents=150, places=4, minutes=8)


def endless(*, pause: float = 0.2, drip_from: int | None = None):
    """A slow, endless Prolific: every page of the list takes `pause` s and points to a next one, for ever; from
    page `drip_from` on, a page is sent one byte every 0.3 s (it never ends)."""
    def behave(peer, conn, request):
        page = int((parse_qs(urlsplit(request.path).query).get("page") or ["1"])[0])
        if drip_from is not None and page >= drip_from:
            return hostile.drip(0.3, 60)(peer, conn, request)
        time.sleep(pause)
        results = [{"id": f"{page:012x}{n:012x}", "participant_id": f"{n:012x}{page:012x}",
                    "status": "AWAITING REVIEW", "time_taken": 300, "study_code": "C0MPLETE"} for n in range(2)]
        body = {"results": results, "_links": {"next": {
            "href": f"{peer.url}/api/v1/submissions/?study={STUDY_ID}&page={page + 1}"}}}
        hostile.send(conn, 200, json.dumps(body).encode())
    return behave


SLACK = 25.0  # seconds a loaded machine may add past a deadline (the endless peers would hold a sync for ever)


def test_a_sync_against_a_slow_endless_prolific_stops_at_its_deadline_keeps_what_it_read_and_resumes(ready_study):
    link = _link(ready_study)
    with hostile.Peer(endless(pause=0.2)) as peer:
        started = time.monotonic()
        synced = prolific_sync(study=ready_study, client=Client(base_url=peer.url, token="t-1"), seconds=5.0)
        took = time.monotonic() - started
        # the peer never ends its list: any bound shows the stop; the slack is for a busy machine, not an idle one's
        # (it stops up to 0.05 s short of the deadline: a request it could not finish is not begun)
        assert not synced.complete and 5.0 - 0.1 <= took < 5.0 + SLACK, took
        stored = Submission.objects.count()
        assert stored == synced.stored >= 4 and stored % 2 == 0  # whole pages, each kept as read
        link.refresh_from_db()
        pages = stored // 2
        assert link.sync_next == f"/api/v1/submissions/?study={STUDY_ID}&page={pages + 1}" and link.synced_at is None
        assert "Stopped at the sync's deadline (5 s)" in synced.words()
        # review and bonuses never act on a list read in part
        with pytest.raises(ProlificRefused, match="Review and bonuses act only on every submission"):
            prolific_sync_whole(study=ready_study, client=Client(base_url=peer.url, token="t-1"), seconds=0.5)
        asked = len(peer.requests)
    # resumed at the page where it stopped, against a Prolific that now drips its answer for ever
    with hostile.Peer(endless(pause=0.1, drip_from=pages + 4)) as peer:
        link.refresh_from_db()
        resume_at = link.sync_next
        started = time.monotonic()
        synced = prolific_sync(study=ready_study, client=Client(base_url=peer.url, token="t-1"), seconds=5.0)
        took = time.monotonic() - started
        assert peer.requests[0].path == resume_at and asked > 0
        assert not synced.complete and took < 5.0 + SLACK, took
        assert Submission.objects.count() >= stored + 2 * 2  # the pages before the drip: read and kept
        link.refresh_from_db()
        assert link.sync_next.endswith(f"page={pages + 4}") or link.sync_next.endswith(f"page={pages + 3}")


def test_a_submission_the_list_says_is_another_studys_is_not_stored(ready_study):
    _link(ready_study)
    rows = [{"id": f"{n:024x}", "participant_id": f"{n + 7:024x}", "status": "APPROVED", "time_taken": 60,
             "study_id": study} for n, study in enumerate([STUDY_ID, "cd" * 12])]
    body = json.dumps({"results": rows, "_links": {"next": {"href": None}}}).encode()
    with hostile.Peer(lambda peer, conn, request: hostile.send(conn, 200, body)) as peer:
        synced = prolific_sync(study=ready_study, client=Client(base_url=peer.url, token="t-1"))
    assert (synced.stored, synced.refused) == (1, 1)
    assert list(Submission.objects.values_list("submission_id", flat=True)) == [f"{0:024x}"]


def test_a_page_past_the_memory_bound_is_refused_and_nothing_of_it_stored(ready_study):
    _link(ready_study)
    many = [{"id": f"{n:024x}", "participant_id": f"{n:024x}", "status": "APPROVED"}
            for n in range(client_module.MAX_RESULTS + 1)]
    body = json.dumps({"results": many, "_links": {"next": {"href": None}}}).encode()
    with hostile.Peer(lambda peer, conn, request: hostile.send(conn, 200, body)) as peer:
        with pytest.raises(ProlificError, match="more than 500 results in one page"):
            prolific_sync(study=ready_study, client=Client(base_url=peer.url, token="t-1"))
    assert not Submission.objects.exists()


def test_a_whole_sync_clears_the_cursor_and_the_command_says_when_a_sync_stopped(standin, ready_study, capsys):
    from prolific.services import prolific_publish

    link = prolific_publish(study=ready_study, origin=ORIGIN, reward_cents=150, places=4, minutes=8)
    for n in range(5):
        standin.add_submission(link.prolific_id, P(f"p{n}"), time_taken=300)
    ProlificStudy.objects.filter(pk=link.pk).update(
        sync_next=f"/api/v1/submissions/?study={link.prolific_id}&page=2")  # an earlier sync stopped at page 2
    synced = prolific_sync(study=ready_study)
    assert synced.complete and synced.stored == 3  # pages 2 and 3 of 2 a page: resumed, not started over
    link.refresh_from_db()
    assert link.sync_next == "" and link.synced_at is not None
    assert prolific_sync(study=ready_study).stored == 5  # the next sync reads the list from its start
    standin.fail("GET /api/v1/submissions/", 503, times=100)
    with pytest.raises(CommandError, match="answered HTTP 503"):
        call_command("prolific", "sync", ready_study.slug)
