"""The entry page's cost per arrival, the code of a base commit beside this tree's, in one run.

    .venv/bin/python bench/entry_profile.py [--entries 200] [--base 72e4abc] [--rounds 2] [--profile new]

The burst of bench/participants.py (phase 0) measures the entry under load; this says where one
entry's CPU goes. It builds the burst's study once (bench/load/stack.py's seed: a 48,002-item study,
--interpretations x 48 items, opened, its lists stored) on PostgreSQL (--database-url, else
DATABASE_URL, else the cluster scripts/postgres.sh starts), with Redis as the rate limits' cache when
redis-server is installed (as in the burst), then, for each code tree in turn (--base exported with
`git archive` into a temporary folder, and this tree), copies that database (CREATE DATABASE ...
TEMPLATE) and runs, in a fresh Python process of that tree with the production settings (DEBUG off,
persistent connections), --warm untimed entries and then --entries timed ones, one after another,
straight through Django's WSGI handler (no gunicorn, no socket): each a new Prolific id answered by the
redirect to its session page. --rounds alternates the trees (base, new, base, new, ...) so that drift
on a shared machine hits both alike.

Per entry it prints: the web process's CPU (time.process_time), the wall time, the SQL statements
(Django's execute wrapper: count and time in the driver; BEGIN/COMMIT are not statements there), the
CPU of the PostgreSQL backend serving it and of Redis (read from /proc), and the ratio new / base.
--profile base|new|both: cProfile over --profile-entries more entries of that tree, the top functions by
cumulative and by own time; --sql: the statements of one entry of each tree, with their times.
Not a test: nothing is asserted beyond each entry being answered by its redirect.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import secrets
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.load.common import BURST_SLUG, DESKTOP, BenchError  # noqa: E402
from bench.load.stack import ENTRY_LIMIT_ENV, SEED, postgres_server  # noqa: E402

# Run in a fresh interpreter inside the tree measured (cwd and PYTHONPATH), with Django's public API only,
# so that any commit's tree can be measured with it.
CHILD = r'''
import cProfile, io, json, os, pstats, sys, time
from urllib.parse import urlencode
import django
django.setup()
from django.core.handlers.wsgi import WSGIHandler
from django.db import connection

cfg = json.loads(os.environ["ENTRY_PROFILE"])
handler = WSGIHandler()


class Statements:
    def __init__(self):
        self.n, self.seconds, self.log = 0, 0.0, None

    def __call__(self, execute, sql, params, many, context):
        t0 = time.perf_counter()
        try:
            return execute(sql, params, many, context)
        finally:
            dt = time.perf_counter() - t0
            self.n += 1
            self.seconds += dt
            if self.log is not None:
                self.log.append((dt, sql))


statements = Statements()


def environ(k):
    pid = f"{cfg['tag']}{k:05d}x{os.urandom(3).hex()}"
    query = urlencode({"PROLIFIC_PID": pid, "STUDY_ID": "bench-burst", "SESSION_ID": f"s-{pid}"})
    return {"REQUEST_METHOD": "GET", "PATH_INFO": f"/s/{cfg['slug']}/", "QUERY_STRING": query, "SCRIPT_NAME": "",
            "SERVER_NAME": "127.0.0.1", "SERVER_PORT": "8000", "SERVER_PROTOCOL": "HTTP/1.1",
            "HTTP_HOST": "127.0.0.1:8000", "HTTP_USER_AGENT": cfg["agent"], "HTTP_ACCEPT": "*/*",
            "HTTP_ACCEPT_ENCODING": "gzip, deflate", "HTTP_CONNECTION": "keep-alive", "REMOTE_ADDR": "127.0.0.1",
            "REMOTE_PORT": "40000", "wsgi.input": io.BytesIO(b""), "wsgi.errors": sys.stderr, "wsgi.version": (1, 0),
            "wsgi.url_scheme": "http", "wsgi.multithread": True, "wsgi.multiprocess": True, "wsgi.run_once": False}


def enter(k):
    seen = {}

    def start_response(status, headers, exc_info=None):
        seen["status"], seen["headers"] = status, headers

    body = handler(environ(k), start_response)
    try:
        b"".join(body)
    finally:
        body.close()
    location = dict(seen["headers"]).get("Location", "")
    if not seen["status"].startswith("302") or "/p/" not in location:
        raise SystemExit(f"entry {k} answered {seen['status']} {location!r}")


def ticks(pid):
    if not pid:
        return 0
    with open(f"/proc/{pid}/stat") as f:
        raw = f.read()
    rest = raw[raw.rindex(")") + 2:].split()
    return int(rest[11]) + int(rest[12])


def backend():
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        return cursor.fetchone()[0]


with connection.execute_wrapper(statements):
    k = 0
    for _ in range(cfg["warm"]):
        enter(k)
        k += 1
    pg, redis, tick = backend(), cfg["redis_pid"], 1 / os.sysconf("SC_CLK_TCK")
    statements.n, statements.seconds = 0, 0.0
    pg0, redis0 = ticks(pg), ticks(redis)
    cpu0, wall0 = time.process_time(), time.perf_counter()
    for _ in range(cfg["entries"]):
        enter(k)
        k += 1
    cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    pg_s, redis_s = (ticks(pg) - pg0) * tick, (ticks(redis) - redis0) * tick
    same_backend = backend() == pg
    n, queries, sql_s = cfg["entries"], statements.n, statements.seconds
    sql = []
    if cfg["sql"]:
        statements.log = sql
        enter(k)
        k += 1
        statements.log = None
    if cfg["profile"]:
        profiler = cProfile.Profile(time.process_time)  # CPU time: waiting for the database is not this process's cost
        profiler.enable()
        for _ in range(cfg["profile_entries"]):
            enter(k)
            k += 1
        profiler.disable()
        for order in ("cumulative", "tottime"):
            out = io.StringIO()
            pstats.Stats(profiler, stream=out).strip_dirs().sort_stats(order).print_stats(cfg["top"])
            print(f"--- {cfg['tag']}: cProfile of {cfg['profile_entries']} entries, by {order} ---")
            print(out.getvalue().split("\n", 1)[1] if "\n" in out.getvalue() else out.getvalue())
print("RESULT " + json.dumps({"n": n, "cpu_ms": cpu * 1000 / n, "wall_ms": wall * 1000 / n,
                              "queries": queries / n, "sql_ms": sql_s * 1000 / n, "pg_ms": pg_s * 1000 / n,
                              "redis_ms": redis_s * 1000 / n, "same_backend": same_backend,
                              "sql": [(round(dt * 1000, 3), s) for dt, s in sql]}))
'''

COLUMNS = (("cpu_ms", "web CPU ms"), ("wall_ms", "wall ms"), ("queries", "statements"), ("sql_ms", "SQL ms"),
           ("pg_ms", "PostgreSQL CPU ms"), ("redis_ms", "Redis CPU ms"))


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--entries", type=int, default=200, help="timed entries per tree and round (default 200)")
    p.add_argument("--warm", type=int, default=20, help="untimed entries first, per process (default 20)")
    p.add_argument("--rounds", type=int, default=2, help="rounds, each tree once per round (default 2)")
    p.add_argument("--base", default="72e4abc", help="the commit to compare with ('none': this tree alone)")
    p.add_argument("--interpretations", type=int, default=1000, help="x 48 items (default 1000: 48,000 items)")
    p.add_argument("--profile", choices=("none", "base", "new", "both"), default="none")
    p.add_argument("--profile-entries", type=int, default=100)
    p.add_argument("--top", type=int, default=35, help="functions shown per cProfile table (default 35)")
    p.add_argument("--sql", action="store_true", help="print one entry's statements for each tree")
    p.add_argument("--database-url", default=None)
    args = p.parse_args(argv)
    if not (1 <= args.entries <= 5000 and 0 <= args.warm <= 1000 and 1 <= args.rounds <= 20
            and 24 <= args.interpretations <= 2000):
        raise BenchError("--entries 1..5000, --warm 0..1000, --rounds 1..20, --interpretations 24..2000")
    return args


def export(rev: str, folder: Path) -> Path:
    """The tree of commit `rev`, as `git archive` gives it."""
    folder.mkdir(parents=True)
    archive = subprocess.run(["git", "archive", rev], cwd=ROOT, capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive, check=True)
    return folder


def measure(tree: Path, tag: str, env: dict, args, profile: bool) -> dict:
    cfg = {"slug": BURST_SLUG, "agent": DESKTOP, "tag": tag, "warm": args.warm, "entries": args.entries,
           "sql": args.sql, "profile": profile, "profile_entries": args.profile_entries, "top": args.top,
           "redis_pid": env.pop("_REDIS_PID", None)}
    env = {**env, "PYTHONPATH": str(tree), "ENTRY_PROFILE": json.dumps(cfg)}
    done = subprocess.run([sys.executable, "-c", CHILD], cwd=tree, env=env, capture_output=True, text=True,
                          timeout=1800)
    if done.returncode != 0:
        raise BenchError(f"{tag} failed ({done.returncode}):\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    lines = done.stdout.splitlines()
    result = json.loads(next(line for line in reversed(lines) if line.startswith("RESULT "))[7:])
    shown = "\n".join(line for line in lines if not line.startswith("RESULT "))
    if shown.strip():
        print(shown)
    return result


def drop(database) -> None:
    """DROP DATABASE, again a few times while the backends of a process that just ended are still closing."""
    for attempt in range(10):
        try:
            return database._admin(f'DROP DATABASE IF EXISTS "{database.name}"')
        except Exception:  # noqa: BLE001 — "being accessed by other users": wait for them to close
            if attempt == 9:
                raise
            time.sleep(1)


def main(argv=None) -> int:
    try:
        args = parse_args(argv)
    except BenchError as exc:
        print(f"entry_profile.py: {exc}", file=sys.stderr)
        return 2
    from tests.integration import servers

    folder = Path(tempfile.mkdtemp(prefix="duet-entry-profile-"))
    server = postgres_server(args.database_url)
    template = servers.Database(server)
    copies: list = []
    redis = servers.Redis(folder / "redis") if shutil.which("redis-server") else None
    try:
        if redis:
            redis.argv[redis.argv.index("--appendfsync") + 1] = "everysec"
            redis.start()
        env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "CACHE_URL", "DB_CONN_MAX_AGE")}
        env.update({"DATABASE_URL": template.url, "SECRET_KEY": secrets.token_urlsafe(40), "LOG_LEVEL": "WARNING",
                    "DUET_VAR_DIR": str(folder / "var"), "DJANGO_SETTINGS_MODULE": "studyserver.settings",
                    "PYTHONPATH": str(ROOT), **ENTRY_LIMIT_ENV})
        if redis:
            env["CACHE_URL"] = redis.url
        template.create()
        servers.manage(env, "migrate", "--no-input", "-v", "0", timeout=600)
        items = servers.script(env, f"SLUG, NONSENSE = {BURST_SLUG!r}, True\n"
                               f"INTERPRETATIONS, ITEMS = {args.interpretations}, 24\n" + SEED, timeout=1800)
        trees = {"new": ROOT}
        if args.base != "none":
            trees = {"base": export(args.base, folder / "base"), **trees}
        print(f"entry profile: {items}-item study on PostgreSQL, rate-limit cache "
              f"{'Redis' if redis else 'local memory'}; {args.entries} entries per tree and round after {args.warm} "
              f"untimed, {args.rounds} round(s); trees: "
              + ", ".join(f"{tag} ({args.base if tag == 'base' else 'this tree'})" for tag in trees)
              + f"; load average {', '.join(f'{v:.2f}' for v in os.getloadavg())}", flush=True)
        results: dict[str, list[dict]] = {tag: [] for tag in trees}
        for r in range(args.rounds):
            for tag, tree in trees.items():
                copy = servers.Database(server)
                copy.name = f"{template.name}_{tag}{r}"
                copy.url = template.url.rsplit("/", 1)[0] + "/" + copy.name
                copy._admin(f'CREATE DATABASE "{copy.name}" TEMPLATE "{template.name}"')
                copies.append(copy)
                profile = args.profile in (tag, "both") and r == args.rounds - 1
                run_env = {**env, "DATABASE_URL": copy.url, "_REDIS_PID": redis.proc.pid if redis else None}
                load = os.getloadavg()[0]
                result = measure(tree, tag, run_env, args, profile)
                result["load"] = load
                results[tag].append(result)
                print(f"  round {r + 1} {tag:>4} (load {load:.2f}): "
                      + ", ".join(f"{label} {result[key]:.2f}" for key, label in COLUMNS)
                      + ("" if result["same_backend"] else " (the backend changed: PostgreSQL CPU undercounted)"),
                      flush=True)
                drop(copy)
        print("\nper entry, median over rounds:")
        print(f"  {'':<6}" + "".join(f"{label:>20}" for _, label in COLUMNS))
        medians = {tag: {key: statistics.median(r[key] for r in rows) for key, _ in COLUMNS}
                   for tag, rows in results.items()}
        for tag, row in medians.items():
            print(f"  {tag:<6}" + "".join(f"{row[key]:20.2f}" for key, _ in COLUMNS))
        if "base" in medians:
            ratio = {key: medians["new"][key] / medians["base"][key] if medians["base"][key] else math.nan
                     for key, _ in COLUMNS}
            print(f"  {'new/base':<6}" + "".join(f"{ratio[key]:20.2f}" for key, _ in COLUMNS))
        if args.sql:
            for tag, rows in results.items():
                print(f"\n{tag}: one entry's statements (ms in the driver, statement)")
                for ms, sql in rows[-1]["sql"]:
                    print(f"  {ms:7.3f}  {sql[:300]}")
        return 0
    except (BenchError, servers.ServerError, subprocess.CalledProcessError) as exc:
        print(f"entry_profile.py: {exc}", file=sys.stderr)
        return 2
    finally:
        try:
            for database in (*copies, template):
                drop(database)
        finally:
            if redis:
                redis.stop()
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
