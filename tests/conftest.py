import os
from pathlib import Path

import pytest


def _hypothesis_profiles() -> None:
    """Property-test profiles, loaded before any test module is imported (a test's own @settings
    inherit from the profile loaded when it is decorated):

    * ``ci`` — derandomised (the same examples every run, no example database), so a CI run can
      neither pass nor fail by luck; loaded when CI=true;
    * ``duet`` — random examples (the default on a developer's machine);
    * ``explore`` — random, 1,000 examples where a test sets no count of its own, to look for failures:
      ``HYPOTHESIS_PROFILE=explore .venv/bin/python -m pytest tests/...``. Turn every failure it finds
      into a plain regression test.
    """
    try:
        from hypothesis import HealthCheck, settings
    except ImportError:  # pragma: no cover
        return
    common = {"deadline": None, "suppress_health_check": [HealthCheck.too_slow]}
    settings.register_profile("duet", **common)
    settings.register_profile("ci", derandomize=True, database=None, print_blob=True, **common)
    settings.register_profile("explore", max_examples=1000, **common)
    default = "ci" if os.environ.get("CI", "").lower() in ("1", "true", "yes") else "duet"
    settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", default))


_hypothesis_profiles()


# Tests that share an expensive fixture wider than one test (a module's or the session's) and must
# therefore run on one xdist worker, in order: nodeid prefix → group. With `--dist loadgroup`
# (scripts/test.sh) each group is one unit of work, handed out before the single tests. (xdist's own
# xdist_group marker does not work with pytest 9: it renames nodeids through an attribute pytest no
# longer reads, so the groups are told to the scheduler here, by path.)
SHARED_FIXTURE_GROUPS = {
    "tests/integration/": "integration",  # one stack of real servers (a session fixture)
    "tests/studyserver/test_demo.py": "demo",  # one run of the demo (a module fixture)
    # one process with the broker down (a module fixture, several seconds), read by each kind's test
    "tests/studyserver/test_jobs_contract.py::test_a_job_created_while_the_broker_is_down": "broker-down",
    "tests/analysis/test_dataset.py": "dataset",  # one report folder (a module fixture)
    # one llama.cpp server each (tests/inference/conftest.py's session fixture; the module's own)
    "tests/inference/test_server_scorer.py": "llama-server-f32",
    "tests/inference/test_server_cancel.py": "llama-server-f32",
    "tests/inference/test_server_generation.py": "llama-server-q4",
}


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    if config.getvalue("dist") != "loadgroup":
        return None  # xdist's own scheduler
    from xdist.scheduler import LoadScopeScheduling

    class SharedFixtureGroups(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return next((group for prefix, group in SHARED_FIXTURE_GROUPS.items() if nodeid.startswith(prefix)),
                        nodeid)

    return SharedFixtureGroups(config, log)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_setupnodes(config, specs):
    """pytest-xdist (`-n N`, scripts/test.sh): each worker gets a folder of its own under var/ —
    DUET_VAR_DIR=<var>/workers/gw0, … — so its secret key, static files, the embedded broker's queue
    and any file a test writes there never meet another worker's. The environment is set before the
    worker imports the settings (execnet applies a spec's env first). The embedded model, unpacked
    once for the suite, stays shared: each worker's models/ is a link to <var>/models. Test
    databases are per worker already (pytest-django suffixes their names with _gw0, …)."""
    from common.env import VAR_DIR

    models = VAR_DIR / "models"
    models.mkdir(parents=True, exist_ok=True)
    for spec in specs:
        folder = VAR_DIR / "workers" / spec.id
        folder.mkdir(parents=True, exist_ok=True)
        link = folder / "models"
        if not link.is_symlink():
            if link.exists():
                import shutil

                shutil.rmtree(link)
            link.symlink_to(models, target_is_directory=True)
        spec.env["DUET_VAR_DIR"] = str(folder)


@pytest.fixture(autouse=True)
def _empty_cache():
    """Every test starts with an empty cache, so rate-limit counters (and the refusals a process
    remembers) never carry over between tests."""
    from django.core.cache import caches

    from common import ratelimit

    for cache in caches.all():
        cache.clear()
    ratelimit._blocked.clear()


@pytest.fixture(autouse=True, scope="session")
def _fast_password_hashes():
    """Passwords the tests' own process sets are hashed with MD5, not PBKDF2's 870,000 rounds (0.3–0.5 s a hash
    here: each `admin_client` test's superuser paid it). Only this process's settings change: the processes the
    tests start (the demo, the installed images, the integration servers) keep Django's default hashers. PBKDF2
    stays listed, so a password another process hashed still verifies here."""
    from django.conf import settings
    from django.contrib.auth import hashers

    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher",
                                 *[h for h in settings.PASSWORD_HASHERS if not h.endswith("MD5PasswordHasher")]]
    hashers.get_hashers.cache_clear()
    hashers.get_hashers_by_algorithm.cache_clear()


@pytest.fixture
def expect_db() -> str | None:
    """Which database scripts/test.sh meant this run to use (sqlite or postgresql)."""
    return os.environ.get("DUET_EXPECT_DB")


_DB_FIXTURES = {"db", "transactional_db", "django_db_setup", "client", "admin_client", "live_server", "django_user_model"}


# The longest tests (scripts/test.sh prints the slowest with --durations): started first, so that on
# several workers the last test handed out is a short one and no worker waits on another's long tail.
# Only the order changes; the tests are independent of it.
SLOW_FIRST = (
    "tests/install/test_installed.py",  # scratch environments installed with uv (minutes, mostly waiting)
    "tests/analysis/test_power.py", "tests/inference/test_answer_words.py", "tests/inference/test_mc_scoring.py",
    "tests/inference/test_smollm2.py", "tests/e2e/test_admin_study.py", "tests/inference/test_hf_scorer.py",
    "tests/experiments/participation/test_save_rulebook.py", "tests/analysis/test_reproduce.py",
    "tests/analysis/test_mixed.py", "tests/analysis/test_embedded_report.py", "tests/inference/test_embedded_worker.py",
)


def _slow_rank(item) -> int:
    path = str(item.path)
    return next((rank for rank, slow in enumerate(SLOW_FIRST) if path.endswith(slow)), len(SLOW_FIRST))


# Which pass runs a database test (scripts/test.sh runs the suite in two passes: SQLite, the embedded default,
# then PostgreSQL, production's engine). A database test runs once, on PostgreSQL, unless ENGINES names it
# (path under tests/ → where, and why): "both" for code that speaks to each engine in its own way (raw SQL,
# vendor branches, COPY against batched inserts, server-side prepared reads, how each stores a number it
# cannot hold), "sqlite" for the embedded default's own tests and the R-bound ones whose database only holds
# the answers read into a frame once. A test without the database runs once, in the SQLite pass.
ENGINES = {
    # The participant's saves and reads: raw SQL (FOR SHARE), the fast save's engine branches, compiled reads
    # prepared on PostgreSQL only, list shapes read by a cursor; the entry's locking on each engine.
    "experiments/participation/": ("both", "engine-specific SQL of the participant's saves and reads"),
    "security/test_fuzz_trial.py": ("both", "the trial save (fast save) fuzzed on each engine"),
    "experiments/test_items_version.py": ("both", "INSERT … ON CONFLICT DO NOTHING on each engine"),
    "experiments/test_bank_upload.py": ("both", "item storage: COPY on PostgreSQL, batched inserts on SQLite"),
    "experiments/test_csv_import.py": ("both", "item storage: COPY on PostgreSQL, batched inserts on SQLite"),
    "experiments/test_page_cost.py": ("both", "statements per page on each engine"),
    "inference/test_hostile_numbers.py": ("both", "what each engine does with a number it cannot hold"),
    "studyserver/test_health.py": ("both", "/healthz names the engine"),
    "studyserver/test_settings.py::test_running_on_the_database": ("both", "each pass runs on its engine"),
    # R fits the report's models: the database only holds the answers read into the frame once.
    "analysis/test_reproduce.py": ("sqlite", "R and the reproduce scripts"),
    "analysis/test_separation.py": ("sqlite", "R (brglm2, blme)"),
    "analysis/test_paired_clustered_golden.py": ("sqlite", "R golden values"),
    "analysis/test_published_rulebreakers.py": ("sqlite", "R"),
    "analysis/test_other_decisions.py": ("sqlite", "R"),
    "analysis/test_dataset.py": ("sqlite", "R and the report folder"),
    "analysis/test_like_for_like.py": ("sqlite", "R"),
    "analysis/test_embedded_report.py": ("sqlite", "the embedded default is SQLite"),
    "analysis/test_report_reads.py": ("sqlite", "R; which rows a report reads"),
    # R fits the pilot reports; the bots' answers and the perturbed copies are ORM writes any engine takes alike
    # (in the PostgreSQL pass of one fresh-clone run one of these took 358 s against 10 s alone)
    "analysis/test_pilot_report.py": ("sqlite", "R; a pilot's bots and perturbed copies"),
}
TESTS = Path(__file__).resolve().parent


def pass_marks(test: str, *, uses_db: bool) -> set[str]:
    """The markers that choose the passes of `test` ("path under tests/::name"): a test without the database
    runs once (db_independent: the SQLite pass); a database test on PostgreSQL only, unless ENGINES says
    "both" (no marker) or "sqlite"; the real-server integration tests need PostgreSQL whatever they touch."""
    if test.startswith("integration/"):  # real servers against PostgreSQL
        return {"postgres_only"}
    if not uses_db:
        return {"db_independent"}
    where = next((where for prefix, (where, _why) in ENGINES.items() if test.startswith(prefix)), "postgres")
    return {"postgres": {"postgres_only"}, "sqlite": {"sqlite_only"}, "both": set()}[where]


def pytest_collection_modifyitems(items):
    """Each test's pass (pass_marks): once, unless ENGINES says "both"."""
    items.sort(key=_slow_rank)  # stable: collection order otherwise
    for item in items:
        uses_db = item.get_closest_marker("django_db") is not None or bool(
            _DB_FIXTURES & set(getattr(item, "fixturenames", ()))
        )
        path = Path(str(item.path)).resolve()
        test = f"{path.relative_to(TESTS).as_posix()}::{item.name}" if TESTS in path.parents else item.nodeid
        for mark in pass_marks(test, uses_db=uses_db):
            item.add_marker(getattr(pytest.mark, mark))


def _refuse_prolific() -> None:
    """No test reaches Prolific's real API (issue 38): in every test process its host names do not resolve
    (every outbound request resolves its host through socket.getaddrinfo first: common/destinations.py).
    The Prolific tests use the stand-in on loopback, tests/prolific/standin.py."""
    import socket

    real = socket.getaddrinfo

    def getaddrinfo(host, *args, **kwargs):
        name = (host.decode() if isinstance(host, bytes) else str(host or "")).lower().rstrip(".")
        if name == "prolific.com" or name.endswith(".prolific.com") or name.endswith(".prolific.co"):
            raise socket.gaierror(socket.EAI_NONAME, "tests never reach Prolific's real API")
        return real(host, *args, **kwargs)

    socket.getaddrinfo = getaddrinfo


_refuse_prolific()
