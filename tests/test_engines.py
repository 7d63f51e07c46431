"""tests/conftest.py's ENGINES chooses the pass of a database test (PostgreSQL only by default): every entry
must still name a test that exists (a renamed file would otherwise silently lose its second engine, or run on
the wrong one), and a test without the database is never marked for one pass (it would then run in neither)."""
import ast

import pytest

from tests.conftest import ENGINES, TESTS, pass_marks


def _test_names(path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {node.name for node in ast.walk(tree)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test")}


@pytest.mark.parametrize("prefix", sorted(ENGINES))
def test_every_engines_entry_names_tests_that_exist(prefix):
    where, why = ENGINES[prefix]
    assert where in ("sqlite", "both") and why
    file, _, name = prefix.partition("::")
    path = TESTS / file
    if file.endswith("/"):
        assert path.is_dir() and any(path.rglob("test_*.py")), f"{prefix}: no test files there"
        return
    assert path.is_file(), f"{prefix}: no such test file"
    assert any(test.startswith(name) for test in _test_names(path)), f"{prefix}: no test starts with {name!r}"


def test_a_test_runs_in_at_least_one_pass_and_database_tests_where_engines_says():
    assert pass_marks("e2e/test_admin_study.py::test_x", uses_db=False) == {"db_independent"}  # SQLite pass only
    assert pass_marks("e2e/test_admin_study.py::test_x", uses_db=True) == {"postgres_only"}  # the default
    assert pass_marks("experiments/test_models.py::test_x", uses_db=True) == {"postgres_only"}
    assert pass_marks("analysis/test_reproduce.py::test_x", uses_db=True) == {"sqlite_only"}
    assert pass_marks("integration/test_model_runs.py::test_x", uses_db=True) == {"postgres_only"}
    assert pass_marks("integration/test_model_runs.py::test_x", uses_db=False) == {"postgres_only"}
    assert pass_marks("experiments/participation/test_fastsave.py::test_x", uses_db=True) == set()  # both passes
    assert pass_marks("studyserver/test_settings.py::test_running_on_the_database_the_test_command_asked_for",
                      uses_db=True) == set()
    assert pass_marks("studyserver/test_settings.py::test_other", uses_db=True) == {"postgres_only"}


def test_every_test_that_branches_on_the_engine_runs_on_both():
    """A test file that asks which engine it runs on (connection.vendor, the expected database) tests
    something each engine does its own way: ENGINES must run it on both."""
    for path in sorted(TESTS.rglob("test_*.py")):
        text = path.read_text(encoding="utf-8")
        if "connection.vendor" not in text and "expect_db" not in text:
            continue
        relative = path.relative_to(TESTS).as_posix()
        if relative == "test_engines.py":
            continue
        names = [name for name in _test_names(path)
                 if "vendor" in _body(path, name) or "expect_db" in _body(path, name)]
        for name in names:
            where = next((w for prefix, (w, _why) in ENGINES.items() if f"{relative}::{name}".startswith(prefix)), None)
            assert where == "both", f"{relative}::{name} branches on the engine: list it in ENGINES as 'both'"


def _body(path, name: str) -> str:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    source = path.read_text(encoding="utf-8")
    node = next(node for node in ast.walk(tree)
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name)
    return ast.get_source_segment(source, node) or ""
