"""The README's first command, `bash scripts/run.sh`, runs `manage.py demo`: it sets up the demo study
and its first report — a pilot whose report shows every section of paper 003's analysis: two model
configurations of the embedded model, the nonsense mirror scored, simulated participants.

The demo runs here as the README runs it — in its own process, on a fresh SQLite database, each step
once (the model runs and the report in processes of their own, as in the demo) — but at a small size
(SMALL), so the suite does not spend a quarter of an hour on it. The first test checks that
scripts/run.sh runs the very command tested here, and that without the size options it has the sizes
the README states. The module's tests share one run of the demo (on several xdist workers,
tests/conftest.py's SHARED_FIXTURE_GROUPS keeps them on one); the last one starts the demo a second
time and checks that every step done is skipped."""
from __future__ import annotations

import os
import re
import shlex
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from studyserver.env import BASE_DIR, VAR_DIR

SECTIONS = ("eq4", "eq5", "eq6", "sequents", "agents")
# The command scripts/run.sh runs (checked below), with the demo's size options set small.
COMMAND = ["manage.py", "demo"]
SMALL = {"--interpretations": 2, "--model-items": 8, "--pilot-interpretations": 4, "--pilot-participants": 12}
ARGV = [*COMMAND, "--no-serve", *(str(part) for option, value in SMALL.items() for part in (option, value))]
REPORT = re.compile(r"First report, a PILOT .*: http://127\.0\.0\.1:8000/admin/analysis/report/(\d+)/report\.html")
TIMEOUT = 1800  # wide: a loaded machine is slow, not broken (the small demo takes about two minutes idle)


def _demo(var: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "CACHE_URL", "CELERY_BROKER_URL")}
    env.update(DUET_VAR_DIR=str(var), DUET_TASK_MODE="eager")
    return subprocess.run([sys.executable, str(BASE_DIR / ARGV[0]), *ARGV[1:]], cwd=BASE_DIR, env=env,
                          capture_output=True, text=True, timeout=TIMEOUT)


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    """One run of the demo on a fresh database: (its var/ folder, its output)."""
    var = tmp_path_factory.mktemp("demo") / "var"
    var.mkdir()
    (VAR_DIR / "models").mkdir(parents=True, exist_ok=True)
    (var / "models").symlink_to(VAR_DIR / "models")  # the embedded model, unpacked once for the suite
    done = _demo(var)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return var, done.stdout


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
    small = vars(parser.parse_args(ARGV[2:]))  # the test changes nothing but the sizes and serving
    changed = {key for key in defaults if small[key] != defaults[key]}
    assert changed == {"no_serve", "interpretations", "model_items", "pilot_interpretations", "pilot_participants"}


def test_the_demo_sets_up_an_open_study_a_staff_login_and_links(demo):
    var, out = demo
    items = SMALL["--interpretations"] * 24 * 2  # 24 forms × interpretations, real and nonsense mirror
    assert f"Generated {items} items into 'modal-syllogisms-demo'." in out
    assert f"Study:  Modal syllogisms (paper 003 demo): {items} items, status open" in out
    assert re.search(r"Admin:  http://127\.0\.0\.1:8000/admin/   user: admin   password: \S{12,}   \(shown once; "
                     r"kept in .*demo-admin-password\)", out), out[-2000:]
    assert "Start:  http://127.0.0.1:8000/   (the admin, the documentation and the demo study)" in out
    assert re.search(r"Participant link: http://127\.0\.0\.1:8000/s/modal-syllogisms-demo/\?PROLIFIC_PID=demo-[0-9a-f]{12}"
                     r"&STUDY_ID=modal-syllogisms-demo&SESSION_ID=demo-session-[0-9a-f]{12}", out), out[-2000:]
    with sqlite3.connect(var / "duet.sqlite3") as db:
        status, per_person, code = db.execute(
            "SELECT s.status, a.items_per_participant, a.completion_code FROM experiments_study s "
            "JOIN experiments_humanarm a ON a.study_id = s.id WHERE s.slug = 'modal-syllogisms-demo'").fetchone()
        staff = db.execute("SELECT is_staff, is_superuser FROM auth_user WHERE username = 'admin'").fetchone()
    assert (status, per_person, code) == ("open", SMALL["--interpretations"], "DEMOCODE")
    assert staff == (1, 1)


def test_the_embedded_model_scores_the_demo_subset(demo):
    _, out = demo
    assert re.search(rf"Model scores: SmolLM2-135M-Instruct, run \d+, {SMALL['--model-items']} items, "
                     r"mean soft accuracy 0\.\d{3}", out), out[-3000:]


def test_the_first_report_is_a_pilot_that_shows_every_section(demo):
    var, out = demo
    address = REPORT.search(out)
    assert address, out[-3000:]
    html = (var / "reports" / "modal-syllogisms-pilot" / address.group(1) / "report.html").read_text(encoding="utf-8")
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
    """Last in this module: it starts the demo again on the same database."""
    var, first = demo
    again = _demo(var)
    assert again.returncode == 0, again.stdout[-3000:] + again.stderr[-3000:]
    # nothing is generated, scored, simulated or built again
    for step in ("Generated ", "Scoring ", "Pilot: scoring", "Pilot ", "building its report"):
        assert step not in again.stdout, (step, again.stdout[-3000:])
    assert re.search(r"Model scores: SmolLM2-135M-Instruct, run \d+", again.stdout)  # the scores kept
    assert f"/admin/analysis/report/{REPORT.search(first).group(1)}/report.html" in again.stdout
    assert Path(var / "duet.sqlite3").exists()
    # the same admin password (issue 29: it changed at every start), not printed again
    kept = (var / "demo-admin-password").read_text(encoding="utf-8").strip()
    assert f"password: {kept}   (shown once" in first and kept not in again.stdout
    assert "password: as printed at the first start (kept in " in again.stdout


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_the_demo_serves_first_and_builds_its_report_in_the_background_with_progress(tmp_path):
    """As scripts/run.sh runs it (serving), on a fresh database: the server answers before the model
    has scored anything, the slow half prints its progress among the server's lines, and the first
    report is built while the demo serves."""
    import signal
    import time
    import urllib.request

    var = tmp_path / "var"
    var.mkdir()
    (VAR_DIR / "models").mkdir(parents=True, exist_ok=True)
    (var / "models").symlink_to(VAR_DIR / "models")
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "CACHE_URL", "CELERY_BROKER_URL")}
    env.update(DUET_VAR_DIR=str(var), DUET_TASK_MODE="eager")
    argv = [sys.executable, str(BASE_DIR / "manage.py"), "demo", "--addrport", f"127.0.0.1:{port}",
            *(str(part) for option, value in SMALL.items() for part in (option, value))]
    log = tmp_path / "demo.log"
    with open(log, "w") as out:
        demo = subprocess.Popen(argv, cwd=BASE_DIR, env=env, stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)
    try:
        deadline = time.monotonic() + TIMEOUT
        while True:
            assert demo.poll() is None, log.read_text()[-3000:]
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
        assert done == 0 and report[1] in ("queued", "running")  # served before the slow half was done
        assert f"/admin/analysis/report/{report[0]}/report.html once done" in log.read_text()
        while "The first report is built" not in log.read_text():
            assert demo.poll() is None and time.monotonic() < deadline, log.read_text()[-3000:]
            time.sleep(2)
        text = log.read_text()
        assert f"The first report is built: http://127.0.0.1:{port}/admin/analysis/report/{report[0]}/report.html" in text
        # the progress the admin shows, printed: items done, items/s (and the time left while there is some)
        assert re.search(rf"Run \d+: {SMALL['--model-items']} / {SMALL['--model-items']} items \(100 %\), "
                         r"[0-9.]+ items/(s|min)", text), text[-3000:]
        with sqlite3.connect(var / "duet.sqlite3") as db:
            assert db.execute("SELECT status, done, total FROM analysis_report WHERE id = ?",
                              (report[0],)).fetchone() == ("done", 2, 2)
    finally:
        os.killpg(demo.pid, signal.SIGTERM)
        demo.wait(timeout=60)
