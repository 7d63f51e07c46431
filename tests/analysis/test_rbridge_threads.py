"""R calls work from any thread: rpy2 keeps its conversion rules in a ContextVar set only in the
thread that imported it, so a report built in a server thread (DUET_TASK_MODE=eager, as the admin's
"Build a pilot report" runs under tests) failed with "Conversion rules for `rpy2.robjects` appear to
be missing" once another thread had loaded R first. r_session() now sets them for every call."""
from __future__ import annotations

import threading

import numpy as np
import pandas as pd

from analysis import rbridge as rb


def test_a_fit_from_another_thread_after_r_was_loaded_in_this_one():
    assert rb.available()  # R and rpy2 loaded here, in the test's thread
    rng = np.random.default_rng(0)
    group = np.repeat([f"g{i}" for i in range(8)], 10)
    x = np.tile(["a", "b"], 40)
    y = (x == "b") * 0.5 + np.repeat(rng.normal(0, 0.3, 8), 10) + rng.normal(0, 0.2, 80)
    data = pd.DataFrame({"y": y, "x": x, "g": group})
    outcome = {}

    def fit_elsewhere():
        try:
            fitted = rb.fit("y ~ x + (1 | g)", data)
            outcome["means"] = rb.emmeans(fitted, "~ x")
        except Exception as error:  # reported to the test's thread
            outcome["error"] = error

    worker = threading.Thread(target=fit_elsewhere)
    worker.start()
    worker.join(timeout=900)
    assert "error" not in outcome, repr(outcome.get("error"))
    assert len(outcome["means"]) == 2
