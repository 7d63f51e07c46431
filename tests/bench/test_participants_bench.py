"""The load bench's pure helpers (bench/participants.py): percentiles, the targets, the database audit,
argument bounds and the loopback-only rule. Nothing here starts a server."""
from __future__ import annotations

import importlib.util
import math
import os
import random
import statistics
import sys
from pathlib import Path

import pytest

PATH = Path(__file__).resolve().parents[2] / "bench" / "participants.py"
_spec = importlib.util.spec_from_file_location("bench_participants", PATH)
bench = importlib.util.module_from_spec(_spec)
sys.modules["bench_participants"] = bench  # dataclasses look their module up while the class is built
_spec.loader.exec_module(bench)


def test_percentile_matches_the_standard_librarys_inclusive_quantiles():
    rng = random.Random(8)
    for size in (2, 3, 10, 101, 1000):
        data = [rng.lognormvariate(0, 1) for _ in range(size)]
        cuts = statistics.quantiles(data, n=100, method="inclusive")  # cuts[k-1] is the k-th percentile
        for q in (1, 50, 95, 99):
            assert bench.percentile(data, q) == pytest.approx(cuts[q - 1], rel=1e-12)


def test_percentile_small_cases_and_bad_input():
    assert bench.percentile([5.0], 99) == 5.0
    assert bench.percentile([4, 1, 3, 2], 50) == 2.5  # unsorted input, halfway between 2 and 3
    assert bench.percentile([0, 10], 95) == 9.5
    assert bench.percentile(range(1, 101), 99) == pytest.approx(99.01)
    with pytest.raises(ValueError):
        bench.percentile([], 50)
    with pytest.raises(ValueError):
        bench.percentile([1, 2], 101)


def test_figures_are_milliseconds_and_requests_per_second():
    found = bench.figures([0.001 * n for n in range(1, 101)], seconds=2.0)
    assert found.count == 100 and found.per_second == 50.0
    assert found.p50_ms == pytest.approx(50.5) and found.p99_ms == pytest.approx(99.01)
    assert math.isnan(bench.figures([], seconds=1.0).p99_ms)


def test_targets_half_the_bare_throughput_and_under_ten_times_its_p99():
    bare = bench.Figures(count=1000, seconds=1.0, p50_ms=5, p95_ms=8, p99_ms=10)
    good = bench.Figures(count=500, seconds=1.0, p50_ms=20, p95_ms=50, p99_ms=99.9)
    bad = bench.Figures(count=499, seconds=1.0, p50_ms=20, p95_ms=50, p99_ms=100)
    assert [t.ok for t in bench.targets(good, bare)] == [True, True]
    assert [t.ok for t in bench.targets(bad, bare)] == [False, False]
    assert bench.targets(bad, bare)[0].value == pytest.approx(0.499)


def test_audit_counts_lost_duplicated_and_different_answers():
    plans = {"a": 3, "b": 2}
    acked = {("a", 0): "k-a0", ("a", 1): "k-a1", ("a", 2): "k-a2", ("b", 0): "k-b0", ("b", 1): "k-b1"}
    rows = [("a", 0, "k-a0"), ("a", 1, "k-a1"), ("a", 2, "k-a2"), ("b", 0, "k-b0"), ("b", 1, "k-b1")]
    clean = bench.audit(plans, acked, rows)
    assert (clean.expected, clean.saved, clean.lost, clean.duplicated, clean.mismatched) == (5, 5, 0, 0, 0)
    assert clean.clean
    broken = bench.audit(plans, acked, [
        ("a", 0, "k-a0"), ("a", 0, "k-a0"),  # a doubled answer
        ("a", 2, "other"),                   # acknowledged with one key, saved with another
        ("b", 0, "k-b0"), ("b", 1, "k-b1"),
        ("b", 7, "stray"),                   # an index outside b's plan
    ])                                       # and ("a", 1) never saved
    assert (broken.saved, broken.lost, broken.duplicated, broken.mismatched, broken.unexpected) == (6, 1, 1, 1, 1)
    assert not broken.clean


def test_burst_audit_counts_lost_and_doubled_arrivals():
    sent = {"a": "t1", "b": "t2", "c": "t3"}
    clean = bench.burst_audit(sent, [("a", "t1"), ("b", "t2"), ("c", "t3")])
    assert (clean.arrivals, clean.lost, clean.doubled) == (3, 0, 0)
    broken = bench.burst_audit({**sent, "d": None, "e": "t1"}, [
        ("a", "t1"), ("b", "t2"), ("b", "t9"),  # b has two participants
        ("c", "t4"),                            # c was sent to t3, which is not c's
        ("z", "t8"),                            # a participant no arrival made
    ])  # d got no redirect; e was sent to a's session
    assert (broken.lost, broken.doubled) == (3, 3)  # c, d, e lost; b's second row, t1 twice, z


def test_burst_arguments():
    args = bench.parse_args([])
    assert (args.burst, args.burst_seconds, args.burst_interpretations) == (300, 5.0, 1000)
    assert bench.parse_args(["--burst", "0"]).burst == 0
    for bad in (["--burst", "-1"], ["--burst", "5000"], ["--burst-seconds", "0"], ["--burst-interpretations", "5"]):
        with pytest.raises(bench.BenchError):
            bench.parse_args(bad)


@pytest.mark.parametrize("url", ["http://127.0.0.1:8000", "postgres://u:p@localhost:5432/db",
                                 "http://[::1]:9000/", "postgresql://u@127.3.2.1/x"])
def test_loopback_targets_are_accepted(url):
    assert bench.require_loopback(url, "target") == url


@pytest.mark.parametrize("url", ["http://10.0.0.5:8000", "postgres://u:p@db.example.org/db", "http://0.0.0.0:80",
                                 "http://localhost.example.com/", "postgres:///duet", "http://[2001:db8::1]/"])
def test_other_targets_are_refused(url):
    with pytest.raises(bench.BenchError, match="must be on this machine"):
        bench.require_loopback(url, "target")


def test_arguments_defaults_and_bounds():
    args = bench.parse_args([])
    assert (args.participants, args.concurrency, args.workers, args.threads) == (300, 300, 4, 4)
    assert (args.saturation_requests, args.rounds) == (24, 4)
    assert bench.parse_args(["--participants", "40"]).concurrency == 40
    for bad in (["--participants", "0"], ["--participants", "5000"], ["--max-seconds", "99999"],
                ["--retry-rate", "1.5"], ["--time-scale", "-1"], ["--workers", "16", "--threads", "16"],
                ["--saturation-requests", "30", "--items", "24"], ["--rounds", "0"],
                ["--rounds", "7", "--saturation-requests", "6"]):
        with pytest.raises(bench.BenchError):
            bench.parse_args(bad)


def test_the_default_server_is_the_production_images():
    """The bench measures gunicorn as docker/web.Dockerfile runs it: same workers, same threads."""
    import json
    import re

    dockerfile = (PATH.parents[1] / "docker" / "web.Dockerfile").read_text()
    command = json.loads(re.search(r"^CMD (\[.*?\])$", dockerfile.replace("\\\n", ""), re.S | re.M).group(1))
    assert command[0] == "gunicorn" and "studyserver.wsgi:application" in command
    production = {flag: int(command[command.index(flag) + 1]) for flag in ("--workers", "--threads")}
    args = bench.parse_args([])
    assert production == {"--workers": args.workers, "--threads": args.threads}


def test_steal_share_is_read_from_the_machine_counters():
    before = [100, 0, 50, 800, 10, 0, 0, 40]  # user nice system idle iowait irq softirq steal
    after = [200, 0, 100, 900, 10, 0, 0, 90]
    assert bench.stolen_share(before, after) == pytest.approx(50 / 300)  # 50 of 300 ticks
    assert bench.stolen_share(None, after) is None and bench.stolen_share(before, before) is None
    counters = bench.machine_cpu()
    assert counters is None or (len(counters) == 8 and all(v >= 0 for v in counters))


def test_cpu_time_is_grouped_by_process_tree_and_postgres_by_name():
    table = {  # pid: (parent, name, ticks)
        1: (0, "systemd", 5), 10: (1, "python", 7),  # the client
        20: (1, "python", 2), 21: (20, "python", 30), 22: (20, "python", 40),  # gunicorn and two workers
        30: (1, "redis-server", 9),
        40: (1, "postgres", 3), 41: (40, "postgres", 50),  # a server that is not our child
        50: (1, "cron", 100),  # none of ours
    }
    roots = {"client": 10, "web": 20, "Redis": 30}
    assert bench.group_ticks(table, roots) == {"client": 7, "web": 72, "PostgreSQL": 53, "Redis": 9}
    assert bench.group_ticks(table, {"client": 10, "web": 20, "Redis": None})["Redis"] == 0
    looped = {1: (2, "a", 1), 2: (1, "b", 1)}  # a corrupt parent chain never hangs
    assert bench.group_ticks(looped, {"client": 99}) == dict.fromkeys(bench.CPU_GROUPS, 0)


def test_cpu_meter_reports_milliseconds_per_request_and_the_ratio():
    meter = bench.CpuMeter({"client": None})
    meter.tick_s = 0.01  # 100 ticks a second, as on Linux
    zero = bench.Counter()
    meter.add("bare", zero, bench.Counter({"client": 10, "web": 20, "PostgreSQL": 4, "machine": 40}), 400)
    meter.add("trial", zero, bench.Counter({"client": 8, "web": 30, "PostgreSQL": 10, "Redis": 2, "machine": 52}), 200)
    assert meter.per_request_ms("bare")["web"] == pytest.approx(0.5)  # 20 ticks = 200 ms over 400 requests
    assert meter.per_request_ms("trial")["machine"] == pytest.approx(2.6)
    lines = bench.cpu_table(meter).splitlines()
    assert lines[0].split() == ["CPU", "ms", "per", "request", *bench.CPU_GROUPS, "machine"]
    assert lines[3].split()[-1] == f"{2.6 / 1.0:.2f}"  # trial / bare, whole machine
    assert lines[3].split()[-2] == "nan"  # Redis: no bare figure to divide by
    table = bench.process_ticks()
    assert table[os.getpid()][2] >= 0 and table[os.getpid()][0] == os.getppid()


def test_requests_are_built_as_a_browser_sends_them():
    """Phase 2 builds its requests before a burst: the same bytes and headers the flow sends."""
    person = bench.Person(pid="p", session="/p/s/tok/", csrf="c" * 32)
    data, headers = bench.Load.request(person, body={"index": 0, "item": 7})
    assert data == b'{"index": 0, "item": 7}'
    assert headers == {"User-Agent": bench.DESKTOP, "Cookie": "csrftoken=" + "c" * 32,
                       "Content-Type": "application/json", "X-CSRFToken": "c" * 32}
    data, headers = bench.Load.request(person, form={"agree": "yes"})
    assert data == b"agree=yes&csrfmiddlewaretoken=" + b"c" * 32
    assert headers["Content-Type"] == "application/x-www-form-urlencoded"
    assert bench.Load.request() == (None, {"User-Agent": bench.DESKTOP})  # /healthz: no cookie, no body
