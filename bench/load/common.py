"""What every part of the participant load bench shares: its names, its error, its progress lines."""
from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SLUG = "bench-load"
BURST_SLUG = "bench-burst"
DESKTOP = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36"


class BenchError(RuntimeError):
    """The bench cannot run as asked (bad argument, non-loopback target, a server, the time bound)."""


def progress(message: str) -> None:
    print(f"  .. {message}", file=sys.stderr, flush=True)


def expect(ok: bool, message: str) -> None:
    if not ok:
        raise BenchError(message)
