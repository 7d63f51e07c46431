"""bench/scale.py's pure helpers: the full-size file it makes is read by the RULEBREAKERS reader as
published (every pair whole, no problem), its by-pair parts keep pairs together, and its ratio lines
say whether a target is met. Nothing here imports or reports."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

PATH = Path(__file__).resolve().parents[2] / "bench" / "scale.py"
_spec = importlib.util.spec_from_file_location("bench_scale", PATH)
bench = importlib.util.module_from_spec(_spec)
sys.modules["bench_scale"] = bench  # dataclasses look their module up while the class is built
_spec.loader.exec_module(bench)


def test_the_made_file_is_read_as_published_and_its_parts_keep_pairs_whole(tmp_path):
    from designs.paired.rulebreakers_source import read_rulebreakers

    path = tmp_path / "rb.csv"
    assert bench.write_file(path, 60) == 120
    rows, problems = read_rulebreakers(path.read_text(encoding="utf-8"))
    assert not problems and len(rows) == 120 and len({r.id for r in rows}) == 120
    parts = bench.split_file(path, tmp_path, 25)
    assert len(parts) == 3
    seen = []
    for part in parts:
        rows, problems = read_rulebreakers(part.read_text(encoding="utf-8"))
        assert not problems  # a member whose partner is in another part would be a problem
        seen += [r.id for r in rows]
    assert len(seen) == 120 and len(set(seen)) == 120


def test_ratio_lines_say_whether_the_target_is_met():
    assert bench.ratio_line("report", 10.0, 19.0, 2.0, "s").endswith("met")
    assert bench.ratio_line("report", 10.0, 21.0, 2.0, "s").endswith("NOT MET")
    assert "ratio  0.80" in bench.ratio_line("rate", 100.0, 80.0, 0.7, "it/s", better_high=True)
    assert bench.ratio_line("rate", 100.0, 60.0, 0.7, "it/s", better_high=True).endswith("NOT MET")
