"""The front-end modules' unit tests (timing, keyboard, sender) under Node's built-in test runner."""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

JS_TESTS = sorted((Path(__file__).parent / "js").glob("*.test.mjs"))


def test_front_end_modules_pass_their_node_tests():
    node = shutil.which("node") or shutil.which("nodejs")
    if node is None:
        if os.environ.get("CI") == "true":
            pytest.fail("node is required under CI (Debian package nodejs, listed in scripts/apt/test/e2e.txt)")
        pytest.skip("node is not installed")
    assert len(JS_TESTS) >= 5  # timing, keyboard, sender, device, choice (four-option trials), …
    result = subprocess.run(
        [node, "--test", "--test-reporter=tap", *map(str, JS_TESTS)], capture_output=True, text=True, timeout=600,
        cwd=Path(__file__).resolve().parents[3],
    )
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert "# fail 0" in result.stdout and "# pass 0" not in result.stdout
