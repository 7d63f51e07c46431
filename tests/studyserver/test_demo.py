"""The README's first command, `bash scripts/run.sh`, runs `manage.py demo`: it sets up the demo study
and its first report — a pilot whose report shows every section of paper 003's analysis: two model
configurations of the embedded model, the nonsense mirror scored, simulated participants.

The demo runs here as the README runs it — serving, in its own process, on a fresh SQLite database,
each step once (the model runs and the report in processes of their own, in the background while it
serves) — but at a small size (SMALL) and on a free port, so the suite does not spend a quarter of an
hour on it. The first test checks that scripts/run.sh runs the very command tested here, and that
without the size options it has the sizes and the address the README states. The module's tests share
one run of the demo (on several xdist workers, tests/conftest.py's SHARED_FIXTURE_GROUPS keeps them on
one): it is stopped once its first report is built; the last test starts the demo a second time
(--no-serve) and checks that every step done is skipped."""
from __future__ import annotations

import os
import re
import shlex
import signal
import sqlite3
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest

from common.env import BASE_DIR, VAR_DIR
from tests.integration.servers import free_port

SECTIONS = ("eq4", "eq5", "eq6", "sequents", "agents")
# The command scripts/run.sh runs (checked below), with the demo's size options set small.
COMMAND = ["manage.py", "demo"]
SMALL = {"--interpretations": 2, "--model-items": 8, "--pilot-interpretations": 4, "--pilot-participants": 12}
SIZES = [str(part) for option, value in SMALL.items() for part in (option, value)]
# a later start prints the built report's address (at the default address: --no-serve changes nothing else)
REPORT = re.compile(r"First report, a PILOT .*: http://127\.0\.0\.1:8000/admin/analysis/report/(\d+)/report\.html")
TIMEOUT = 1800  # wide: a loaded machine is slow, not broken (the small demo takes about two minutes idle)


def argv(port: int) -> list[str]:
    """The first start: as scripts/run.sh starts it (serving), the sizes small, on a free port."""
    return [*COMMAND, "--addrport", f"127.0.0.1:{port}", *SIZES]


AGAIN = [*COMMAND, "--no-serve", *SIZES]  # the second start: set up and print, without serving


def _env(var: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "CACHE_URL", "CELERY_BROKER_URL")}
    env.update(DUET_VAR_DIR=str(var), DUET_TASK_MODE="eager")
    return env


@dataclass
class FirstStart:
    var: Path  # its var/ folder (the SQLite database, the reports)
    out: str  # everything it printed (the server's lines and the background steps' lines among them)
    port: int
    served: str  # what it had printed when the server first answered
    runs_done_when_served: int  # model runs done then
    report_when_served: tuple[int, str]  # the pilot report's (id, status) then
    report_when_built: tuple[str, int, int]  # its (status, done, total) once "The first report is built"


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> FirstStart:
    """One start of the demo on a fresh database, serving as scripts/run.sh serves: what it showed
    when the server first answered, and once its first report was built in the background; then it
    is stopped (SIGTERM to its process group: the server and any step still running)."""
    var = tmp_path_factory.mktemp("demo") / "var"
    var.mkdir()
    (VAR_DIR / "models").mkdir(parents=True, exist_ok=True)
    (var / "models").symlink_to(VAR_DIR / "models")  # the embedded model, unpacked once for the suite
    port = free_port()
    log = var.parent / "demo.log"
    with open(log, "w") as out:
        process = subprocess.Popen([sys.executable, str(BASE_DIR / COMMAND[0]), *argv(port)[1:]], cwd=BASE_DIR,
                                   env=_env(var), stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + TIMEOUT
        while True:  # until the server answers
            assert process.poll() is None, log.read_text()[-3000:]
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/admin/login/", timeout=10) as response:
                    if response.status == 200:
                        break
            except OSError:
                pass
            assert time.monotonic() < deadline, log.read_text()[-3000:]
            time.sleep(1)
        with sqlite3.connect(var / "duet.sqlite3") as db:
            done = db.execute("SELECT COUNT(*) FROM inference_modelrun WHERE status = 'done'").fetchone()[0]
            report = db.execute("SELECT id, status FROM analysis_report WHERE pilot").fetchone()
        served = log.read_text()
        while "The first report is built" not in log.read_text():
            assert process.poll() is None and time.monotonic() < deadline, log.read_text()[-3000:]
            time.sleep(2)
        with sqlite3.connect(var / "duet.sqlite3") as db:
            built = db.execute("SELECT status, done, total FROM analysis_report WHERE id = ?", (report[0],)).fetchone()
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=60)
    return FirstStart(var=var, out=log.read_text(), port=port, served=served, runs_done_when_served=done,
                      report_when_served=tuple(report), report_when_built=tuple(built))


def test_run_sh_runs_the_tested_command_and_its_defaults_are_the_readmes_sizes():
    from demo.management.commands.demo import Command

    readme = (BASE_DIR / "README.md").read_text(encoding="utf-8")
    assert "\nbash scripts/run.sh\n" in readme
    lines = [line.strip() for line in (BASE_DIR / "scripts" / "run.sh").read_text().splitlines()]
    [command] = [shlex.split(line) for line in lines if line.startswith("exec ")]
    assert command == ["exec", "$VENV/bin/python", *COMMAND, "$@"]  # the arguments go to the demo as they are
    assert 'cd "$ROOT"' in lines and lines.index('cd "$ROOT"') < lines.index(next(x for x in lines if x.startswith("exec ")))
    parser = Command().create_parser("manage.py", "demo")
    defaults = vars(parser.parse_args([]))
    # the README's words for the sizes the test makes small
    assert f"24 forms × {defaults['interpretations']} interpretations plus the nonsense mirror" in readme
    assert f"scores {defaults['model_items']} of its items" in readme
    assert f"{defaults['pilot_interpretations']} interpretations with their nonsense mirror" in readme
    assert f"{defaults['pilot_participants']} simulated participants" in readme
    assert defaults["no_serve"] is False and defaults["addrport"] == "127.0.0.1:8000"
    sizes = {"interpretations", "model_items", "pilot_interpretations", "pilot_participants"}
    first = vars(parser.parse_args(argv(8765)[2:]))  # the first start changes nothing but the sizes and the port
    assert {key for key in defaults if first[key] != defaults[key]} == {"addrport", *sizes}
    assert first["addrport"] == "127.0.0.1:8765" and first["no_serve"] is False  # serving, as run.sh serves
    again = vars(parser.parse_args(AGAIN[2:]))  # the second start: the sizes, and not serving
    assert {key for key in defaults if again[key] != defaults[key]} == {"no_serve", *sizes}


def test_the_demo_sets_up_an_open_study_a_staff_login_and_links(demo):
    out, at = demo.out, f"http://127\\.0\\.0\\.1:{demo.port}"
    items = SMALL["--interpretations"] * 24 * 2  # 24 forms × interpretations, real and nonsense mirror
    assert f"Generated {items} items into 'modal-syllogisms-demo'." in out
    assert f"Study:  Modal syllogisms (paper 003 demo): {items} items, status open" in out
    assert re.search(rf"Admin:  {at}/admin/   user: admin   password: \S{{12,}}   \(shown once; "
                     r"kept in .*demo-admin-password\)", out), out[-2000:]
    assert f"Start:  http://127.0.0.1:{demo.port}/   (the admin, the documentation and the demo study)" in out
    assert re.search(rf"Participant link: {at}/s/modal-syllogisms-demo/\?PROLIFIC_PID=demo-[0-9a-f]{{12}}"
                     r"&STUDY_ID=modal-syllogisms-demo&SESSION_ID=demo-session-[0-9a-f]{12}", out), out[-2000:]
    with sqlite3.connect(demo.var / "duet.sqlite3") as db:
        status, per_person, code = db.execute(
            "SELECT s.status, a.items_per_participant, a.completion_code FROM experiments_study s "
            "JOIN experiments_humanarm a ON a.study_id = s.id WHERE s.slug = 'modal-syllogisms-demo'").fetchone()
        staff = db.execute("SELECT is_staff, is_superuser FROM auth_user WHERE username = 'admin'").fetchone()
    assert (status, per_person, code) == ("open", SMALL["--interpretations"], "DEMOCODE")
    assert staff == (1, 1)


def test_the_embedded_model_scores_the_demo_subset(demo):
    assert re.search(rf"Model scores: SmolLM2-135M-Instruct, run \d+, {SMALL['--model-items']} items, "
                     r"mean soft accuracy 0\.\d{3}", demo.out), demo.out[-3000:]


def test_the_demo_serves_first_and_builds_its_report_in_the_background_with_progress(demo):
    """As scripts/run.sh runs it (serving), on a fresh database: the server answers before the model
    has scored anything, the slow half prints its progress among the server's lines, and the first
    report is built while the demo serves."""
    report_id, status = demo.report_when_served
    assert demo.runs_done_when_served == 0 and status in ("queued", "running")  # served before the slow half was done
    assert f"/admin/analysis/report/{report_id}/report.html once done" in demo.served
    assert (f"The first report is built: http://127.0.0.1:{demo.port}/admin/analysis/report/{report_id}/report.html"
            in demo.out)
    # the progress the admin shows, printed: items done, items/s (and the time left while there is some)
    assert re.search(rf"Run \d+: {SMALL['--model-items']} / {SMALL['--model-items']} items \(100 %\), "
                     r"[0-9.]+ items/(s|min)", demo.out), demo.out[-3000:]
    assert demo.report_when_built == ("done", 2, 2)


def test_the_first_report_is_a_pilot_that_shows_every_section(demo):
    address = re.search(rf"The first report is built: http://127\.0\.0\.1:{demo.port}/admin/analysis/report/(\d+)/"
                        r"report\.html", demo.out)
    assert address, demo.out[-3000:]
    html = (demo.var / "reports" / "modal-syllogisms-pilot" / address.group(1) / "report.html").read_text(encoding="utf-8")
    assert html.count("PILOT report (simulated participants included, not data)") >= 1
    for key in SECTIONS:
        section = html.split(f"<h2 id='{key}'>", 1)[1].split("<h2 ", 1)[0]
        assert "Not shown" not in section and "<figure>" in section, (key, section[:500])
    # Appendix C: designs of their own, named in one line, no section of their own here
    assert "<h2 id='necessitation'>" not in html and "<h2 id='distribution'>" not in html
    assert re.search(r"Analyses of other designs, in the reports of studies that have them: Appendix C\.1: necessitation, "
                     r"Appendix C\.2: distribution of modalities\.", html)
    assert "2 of 2 run(s) used" in html and "[chat" in html  # two configurations of the embedded model
    assert re.search(r"Participants kept \((\d+)\)", html).group(1) == str(SMALL["--pilot-participants"])


def test_a_second_start_skips_every_step_that_is_done(demo):
    """Last in this module: it starts the demo again on the same database (--no-serve: it prints and
    stops instead of serving)."""
    var, first = demo.var, demo.out
    again = subprocess.run([sys.executable, str(BASE_DIR / AGAIN[0]), *AGAIN[1:]], cwd=BASE_DIR, env=_env(var),
                           capture_output=True, text=True, timeout=TIMEOUT)
    assert again.returncode == 0, again.stdout[-3000:] + again.stderr[-3000:]
    # nothing is generated, scored, simulated or built again
    for step in ("Generated ", "Scoring ", "Pilot: scoring", "Pilot ", "building its report"):
        assert step not in again.stdout, (step, again.stdout[-3000:])
    assert re.search(r"Model scores: SmolLM2-135M-Instruct, run \d+", again.stdout)  # the scores kept
    built = re.search(r"The first report is built: \S+/admin/analysis/report/(\d+)/report\.html", first).group(1)
    assert REPORT.search(again.stdout).group(1) == built  # the report built at the first start, its address printed
    assert Path(var / "duet.sqlite3").exists()
    # the same admin password (issue 29: it changed at every start), not printed again
    kept = (var / "demo-admin-password").read_text(encoding="utf-8").strip()
    assert f"password: {kept}   (shown once" in first and kept not in again.stdout
    assert "password: as printed at the first start (kept in " in again.stdout
