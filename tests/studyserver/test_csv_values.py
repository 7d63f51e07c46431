"""How Duet's CSV files write values (experiments/schema.py's conventions, common/csvsafe.py):
booleans TRUE/FALSE, blanks for missing values, ISO times, formula-like text quoted, numbers untouched."""
from __future__ import annotations

import datetime as dt
import io

import pandas as pd

from common import csvsafe


def test_values_write_booleans_as_true_false_and_leave_numbers_alone():
    when = dt.datetime(2026, 11, 24, 2, 30, tzinfo=dt.timezone.utc)
    assert csvsafe.values([True, False, None, -0.5, -3, "=1+1", "-x", "ok", when]) == [
        "TRUE", "FALSE", "", -0.5, -3, "'=1+1", "'-x", "ok", "2026-11-24T02:30:00+00:00"]


def test_logical_turns_boolean_columns_into_true_false_and_keeps_the_rest():
    frame = pd.DataFrame({"flag": [True, False, True], "maybe": pd.array([True, None, False], dtype="boolean"),
                          "mixed": [True, None, False], "n": [-0.5, 1.0, 2.0], "text": ["a", "b", "True"]})
    out = csvsafe.logical(frame)
    assert list(out["flag"]) == ["TRUE", "FALSE", "TRUE"] and list(out["maybe"]) == ["TRUE", "", "FALSE"]
    assert list(out["mixed"]) == ["TRUE", "", "FALSE"] and list(out["text"]) == ["a", "b", "True"]
    assert out["n"].dtype == float and frame["flag"].dtype == bool  # numbers untouched, the input unchanged
    back = pd.read_csv(io.StringIO(out.to_csv(index=False)))
    assert back["flag"].dtype == bool and back["n"].tolist() == [-0.5, 1.0, 2.0]
    assert [v for v in back["maybe"] if not pd.isna(v)] == [True, False]
