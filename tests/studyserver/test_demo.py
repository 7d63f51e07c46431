"""The README's first command: `manage.py demo` (what scripts/run.sh runs) sets up the demo and its
first report — a pilot whose report shows every section of paper 003's analysis: two model
configurations of the embedded model, the nonsense mirror scored, simulated participants. Run as
the README runs it, in its own process on a fresh SQLite database."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from studyserver.env import BASE_DIR, VAR_DIR

SECTIONS = ("eq4", "eq5", "eq6", "sequents", "agents")


def test_the_demo_builds_a_first_report_that_shows_every_section(tmp_path):
    var = tmp_path / "var"
    var.mkdir()
    (VAR_DIR / "models").mkdir(parents=True, exist_ok=True)
    (var / "models").symlink_to(VAR_DIR / "models")  # the embedded model, unpacked once for the suite
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "CACHE_URL", "CELERY_BROKER_URL")}
    env.update(DUET_VAR_DIR=str(var), DUET_TASK_MODE="eager")
    done = subprocess.run([sys.executable, str(BASE_DIR / "manage.py"), "demo", "--no-serve", "--interpretations", "24"],
                          cwd=BASE_DIR, env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    address = re.search(r"First report, a PILOT .*: http://127\.0\.0\.1:8000/admin/analysis/report/(\d+)/report\.html",
                        done.stdout)
    assert address, done.stdout[-3000:]
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
    assert re.search(r"Participants kept \((\d+)\)", html).group(1) == "30"
    # set-up steps are skipped the second time: nothing is scored, simulated or built again
    again = subprocess.run([sys.executable, str(BASE_DIR / "manage.py"), "demo", "--no-serve", "--interpretations", "24"],
                           cwd=BASE_DIR, env=env, capture_output=True, text=True, timeout=900)
    assert again.returncode == 0 and "Pilot: scoring" not in again.stdout and "building its report" not in again.stdout
    assert f"/admin/analysis/report/{address.group(1)}/report.html" in again.stdout
    assert Path(var / "duet.sqlite3").exists()
