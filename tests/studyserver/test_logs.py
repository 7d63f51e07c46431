"""The logs keep the consent's promise (issue 26 item 11): gunicorn's access log recorded the entry
URL with PROLIFIC_PID and SESSION_ID, every session token and client addresses, while the consent
says "we never store your IP address". The production command (docker/web.Dockerfile's CMD) runs
here as it is, on a free port with one worker, and every line it writes is read back."""
from __future__ import annotations

import json
import logging
import os
import re
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

from common.logredact import RedactFilter, redact, token_pseudonym
from tests.integration.servers import free_port

ROOT = Path(__file__).resolve().parents[2]
PID, STUDY_ID, SESSION = "5f1a2b3c4d5e6f7a8b9c0d1e", "6a7b8c9d0e1f2a3b4c5d6e7f", "7c8d9e0f1a2b3c4d5e6f7a8b"
TOKEN = "Qm9vb29vb29vb29vb29vb29vb29vb29vb29vb29vb29"  # 43 characters, as secrets.token_urlsafe(32)
FORWARDED = "203.0.113.9"
SECRET = "log-test-" + "k" * 60


def _production_command(port: int) -> list[str]:
    dockerfile = (ROOT / "docker" / "web.Dockerfile").read_text()
    command = json.loads(re.search(r"^CMD (\[.*?\])$", dockerfile.replace("\\\n", ""), re.S | re.M).group(1))
    assert command[0] == "gunicorn"
    values = {"--bind": f"127.0.0.1:{port}", "--workers": "1", "--threads": "2"}  # each flag's value replaced
    return [sys.executable, "-m", "gunicorn", *(values.get(command[i - 1], command[i]) for i in range(1, len(command)))]


def _get(url: str, **headers) -> int:
    request = urllib.request.Request(url, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code


def test_the_production_access_log_holds_no_address_query_or_token(tmp_path):
    port = free_port()
    env = {**os.environ, "SECRET_KEY": SECRET, "DUET_VAR_DIR": str(tmp_path), "DJANGO_SETTINGS_MODULE": "studyserver.settings",
           "DUET_TASK_MODE": "eager", "ALLOWED_HOSTS": "127.0.0.1,localhost"}
    env.pop("DATABASE_URL", None)  # a fresh SQLite file: the pages answer 500, which the logs must redact too
    log = tmp_path / "gunicorn.log"
    with log.open("wb") as out:
        server = subprocess.Popen(_production_command(port), cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:  # any answer means gunicorn is serving
            try:
                urllib.request.urlopen(base + "/healthz", timeout=5).close()
                break
            except urllib.error.HTTPError:
                break
            except OSError:
                assert server.poll() is None, log.read_text()
                assert time.monotonic() < deadline, log.read_text()
                time.sleep(0.5)
        forged = {"X-Forwarded-For": FORWARDED, "Referer": f"{base}/s/demo/p/{TOKEN}/?PROLIFIC_PID={PID}",
                  "User-Agent": "Mozilla/5.0 test-agent"}
        statuses = [
            _get(f"{base}/s/demo/?PROLIFIC_PID={PID}&STUDY_ID={STUDY_ID}&SESSION_ID={SESSION}", **forged),
            _get(f"{base}/s/demo/p/{TOKEN}/", **forged),
            _get(f"{base}/s/demo/p/{TOKEN}/heartbeat", **forged),
            _get(f"{base}/admin/experiments/participant/?q={PID}", **forged),
        ]
        assert all(status >= 200 for status in statuses)
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=60)
    text = log.read_text()
    for secret in (PID, STUDY_ID, SESSION, TOKEN, FORWARDED, "test-agent"):
        assert secret not in text, f"{secret} is in the log:\n{text}"
    access = [line for line in text.splitlines() if '"GET ' in line]
    assert len(access) >= 4, text
    assert not any("127.0.0.1" in line for line in access), access  # no client address
    pseudonym = token_pseudonym(TOKEN, key=SECRET.encode())
    assert sum(f"/s/demo/p/{pseudonym}/" in line for line in access) == 2, access  # one session, one code
    assert any('"GET /s/demo/?… HTTP/1.1"' in line for line in access), access


def test_redaction_of_paths_and_messages():
    key = b"k" * 40
    assert redact("/s/demo/?PROLIFIC_PID=x&SESSION_ID=y") == "/s/demo/?…"
    line = redact(f"Not Found: /s/study-1/p/{TOKEN}/trial")
    assert TOKEN not in line and re.fullmatch(r"Not Found: /s/study-1/p/t-[0-9a-f]{12}/trial", line)
    assert token_pseudonym("a", key=key) == token_pseudonym("a", key=key) != token_pseudonym("b", key=key)
    assert redact("/healthz") == "/healthz" and redact("/admin/experiments/study/") == "/admin/experiments/study/"
    record = logging.LogRecord("django.request", logging.WARNING, __file__, 1, "Not Found: %s", (f"/s/x/p/{TOKEN}/?a=b",), None)
    assert RedactFilter().filter(record) and TOKEN not in record.getMessage() and "a=b" not in record.getMessage()
