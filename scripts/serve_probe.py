"""Does a running Duet serve? The start page, /healthz and an admin login with the demo's kept password.

Exit status 0 when all three answer as a user would see them, 1 otherwise (the reason on stderr). Standard
library only: it runs before and beside any environment. Used by scripts/serves.sh (CI's first step)."""
from __future__ import annotations

import http.cookiejar
import json
import re
import sys
import urllib.parse
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def probe(base: str) -> list[str]:
    jar = http.cookiejar.CookieJar()
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
    seen = []
    with opener.open(f"{base}/", timeout=20) as page:
        body = page.read().decode()
        if page.status != 200 or "/admin/" not in body:
            raise SystemExit(f"start page: {page.status}, no link to the admin")
    seen.append("start page 200")
    with opener.open(f"{base}/healthz", timeout=20) as health:
        state = json.loads(health.read())
        if state.get("status") != "ok":
            raise SystemExit(f"/healthz: {state}")
    seen.append(f"/healthz ok ({state.get('database')})")
    password = (ROOT / "var" / "demo-admin-password").read_text().strip()
    with opener.open(f"{base}/admin/login/?next=/admin/", timeout=20) as login:
        form = login.read().decode()
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', form)
    if token is None:
        raise SystemExit("admin login page has no CSRF token")
    data = urllib.parse.urlencode({"csrfmiddlewaretoken": token.group(1), "username": "admin",
                                   "password": password, "next": "/admin/"}).encode()
    request = urllib.request.Request(f"{base}/admin/login/?next=/admin/", data=data,
                                     headers={"Referer": f"{base}/admin/login/"})
    with opener.open(request, timeout=20) as after:
        landed = after.geturl()
        text = after.read().decode()
    if not landed.rstrip("/").endswith("/admin") or "logout" not in text.lower():
        raise SystemExit(f"admin login did not reach the admin index (at {landed})")
    seen.append("admin login reached the admin index")
    return seen


if __name__ == "__main__":
    try:
        lines = probe(sys.argv[1].rstrip("/"))
    except (OSError, ValueError) as exc:
        raise SystemExit(f"not serving: {exc}") from None
    if "--verbose" in sys.argv:
        print("   " + "; ".join(lines))
