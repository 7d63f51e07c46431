"""The headless Chromium every browser test drives (Debian's /usr/bin/chromium via Playwright), kept on
the test server: its launch, the route that keeps requests on the machine, and the participant pages'
start screen and completion redirect. The admin's shared steps build on it: tests/e2e/admin_walk.py."""
from __future__ import annotations

import os
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit

import pytest

CHROMIUM = Path("/usr/bin/chromium")
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--no-first-run", "--disable-sync"]
COMPLETION = "https://app.prolific.com/submissions/complete?cc=C0MPLETE"
# Waits with a wide margin: a loaded machine (CI, a suite run on every core) is slow, never wrong, and a
# wait ends as soon as the page is there, so the margin costs nothing when all is well.
PAGE_MS = 120_000  # any one step of a page (Playwright's default is 30 s)
LAUNCH_MS = 180_000  # starting Chromium


def playwright_or_skip():
    """Playwright's sync_playwright; the test is skipped without Playwright or Chromium, and fails in CI."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        sync_playwright = None
    if sync_playwright is None or not CHROMIUM.exists():
        if os.environ.get("CI") == "true":
            pytest.fail("CI needs Playwright (the e2e group) and Debian's chromium (scripts/apt/test/e2e.txt)")
        pytest.skip("Playwright or /usr/bin/chromium is missing")
    return sync_playwright


def offline_guard(server: str, external: list):
    """A route handler that keeps the browser on the test server: Prolific's completion redirect is
    answered with a stub page, anything else outside is refused and recorded in `external`."""

    def guard(route):
        if urlsplit(route.request.url).netloc == server:
            return route.continue_()
        if route.request.url.startswith("https://app.prolific.com/"):
            return route.fulfill(status=200, content_type="text/html", body="<p>Prolific (intercepted)</p>")
        external.append(route.request.url)
        return route.abort()

    return guard


@contextmanager
def chromium(route, *, width: int, height: int, page_ms: int = PAGE_MS, launch_ms: int = LAUNCH_MS):
    """Chromium, headless, with one context of a `width` × `height` window whose every request goes
    through `route` (offline_guard's, or a test's own); yields (browser, context, page), the page
    waiting up to `page_ms` for any one step. The browser is closed at the end."""
    with playwright_or_skip()() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=ARGS, timeout=launch_ms)
        context = browser.new_context(viewport={"width": width, "height": height})
        context.route("**/*", route)
        page = context.new_page()
        page.set_default_timeout(page_ms)
        yield browser, context, page
        browser.close()


def press_to_start(page, key: str = "KeyF") -> str:
    """Wait for the start screen (#intro), press `key` on it; returns the screen's text."""
    page.wait_for_selector("#stage[data-state=intro]")
    text = page.inner_text("#intro-text")
    page.keyboard.press(key)
    return text
