"""tests/conftest.py's ONE_PASS runs a test whose database use is incidental in one pass only: every
entry must still name a test that exists (a renamed file would otherwise run twice again, silently), and
a test without the database is never marked for one pass (it would then run in neither)."""
import ast

import pytest

from tests.conftest import ONE_PASS, TESTS, pass_marks


def _test_names(path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {node.name for node in ast.walk(tree)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test")}


@pytest.mark.parametrize("prefix", sorted(ONE_PASS))
def test_every_one_pass_entry_names_tests_that_exist(prefix):
    where, why = ONE_PASS[prefix]
    assert where in ("sqlite", "postgres") and why
    file, _, name = prefix.partition("::")
    path = TESTS / file
    if file.endswith("/"):
        assert path.is_dir() and any(path.glob("test_*.py")), f"{prefix}: no test files there"
        return
    assert path.is_file(), f"{prefix}: no such test file"
    assert any(test.startswith(name) for test in _test_names(path)), f"{prefix}: no test starts with {name!r}"


def test_a_test_runs_in_at_least_one_pass_and_database_tests_in_the_pass_one_pass_names():
    assert pass_marks("e2e/test_admin_study.py::test_x", uses_db=False) == {"db_independent"}  # SQLite pass only
    assert pass_marks("e2e/test_admin_study.py::test_x", uses_db=True) == {"postgres_only"}
    assert pass_marks("analysis/test_reproduce.py::test_x", uses_db=True) == {"sqlite_only"}
    assert pass_marks("integration/test_model_runs.py::test_x", uses_db=True) == {"postgres_only"}
    assert pass_marks("integration/test_model_runs.py::test_x", uses_db=False) == {"postgres_only"}
    assert pass_marks("inference/test_server_scorer.py::test_the_server_scorer_equals", uses_db=True) == set()
    assert pass_marks("inference/test_server_scorer.py::test_a_server_run_killed_half_way_resumes",
                      uses_db=True) == {"postgres_only"}
    assert pass_marks("experiments/test_models.py::test_x", uses_db=True) == set()  # both passes
