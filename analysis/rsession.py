"""This process's R: loaded once, on first use, and entered under one lock. rpy2 is imported here only.

R is single-threaded and rpy2's converters are process-global, so every R call goes through
`r_session()`: the process's one `RBridge` (its lock, its loaded R, R's console output), with
conversions inside `localconverter` blocks. The two conversions the analysis needs (`to_r`,
`to_pandas`) and the call of a helper of analysis/r/helpers.R (`call`) are here too; what is fitted
and asked of a fit is in analysis/rbridge.py.
"""
from __future__ import annotations

import logging
import os
import threading
import warnings
from collections import deque
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

HELPERS = Path(__file__).with_name("r") / "helpers.R"
PACKAGES = ("suppressPackageStartupMessages({library(lme4); library(lmerTest); library(emmeans); "
            "library(performance)}); emm_options(lmer.df = \"satterthwaite\", msg.interaction = FALSE, "
            "msg.nesting.d = FALSE)")


class RUnavailable(RuntimeError):
    """R, its packages or rpy2 cannot be loaded (the analysis dependency group is not installed)."""


@dataclass(frozen=True)
class LoadedR:
    """rpy2's pieces once R is up; `messages` keeps R's last console lines (bounded, for long-lived workers)."""

    ro: object
    callbacks: object
    pandas2ri: object
    localconverter: object
    messages: deque


class RBridge:
    """The process's one R: `load` starts it once (later calls return the same `LoadedR`); `session`
    holds the lock. Everything R needs from the process's environment is set or put back in `load`."""

    def __init__(self, helpers: Path = HELPERS) -> None:
        self.helpers = helpers
        self.lock = threading.RLock()
        self.loaded: LoadedR | None = None

    def load(self) -> LoadedR:
        with self.lock:
            if self.loaded is None:
                self.loaded = self._start()
            return self.loaded

    @contextmanager
    def session(self):
        """Hold the lock; yield the loaded R with rpy2's default conversion rules set. Those rules live in
        a ContextVar that rpy2 sets only in the thread that first imported it, so an R call from any other
        thread (a report built in a server thread, DUET_TASK_MODE=eager) would find none. Re-entrant
        within one thread."""
        with self.lock:
            r = self.load()
            with r.localconverter(r.ro.default_converter):
                yield r

    def _start(self) -> LoadedR:
        os.environ.setdefault("TZ", "UTC")
        logging.getLogger("rpy2").setLevel(logging.WARNING)  # its at-exit INFO line hits closed streams
        with _environment_kept("LD_LIBRARY_PATH"):
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    import rpy2.robjects as ro
                    from rpy2.rinterface_lib import callbacks
                    from rpy2.robjects import pandas2ri
                    from rpy2.robjects.conversion import localconverter
            except Exception as error:  # ImportError, or rpy2 failing to find R
                raise RUnavailable(
                    "The statistics stack is not available: install R (scripts/apt/analysis.txt) and the "
                    f"'analysis' dependency group (pip install --group analysis). Cause: {error}"
                ) from error
            messages: deque[str] = deque(maxlen=200)
            callbacks.consolewrite_warnerror = messages.append
            callbacks.consolewrite_print = messages.append
            ro.r(PACKAGES)
            ro.r(f"source('{self.helpers.as_posix()}')")
        return LoadedR(ro=ro, callbacks=callbacks, pandas2ri=pandas2ri, localconverter=localconverter,
                       messages=messages)


@contextmanager
def _environment_kept(name: str):
    """rpy2 prepends R's library folders to LD_LIBRARY_PATH when R starts; child processes started later
    (workers, browsers, another Python) must not inherit that, so the variable is put back afterwards."""
    saved = os.environ.get(name)
    try:
        yield
    finally:
        if saved is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = saved


BRIDGE = RBridge()


def r_session():
    """The process's R, under its lock (RBridge.session)."""
    return BRIDGE.session()


def available() -> bool:
    try:
        with r_session():
            return True
    except RUnavailable:
        return False


def call(name: str, *args, **kwargs):
    """Call one of the helpers.R functions; returns the raw R object."""
    with r_session() as r:
        return r.ro.globalenv[name](*args, **kwargs)


def to_pandas(r, obj) -> pd.DataFrame:
    with r.localconverter(r.ro.default_converter + r.pandas2ri.converter):
        frame = r.ro.conversion.get_conversion().rpy2py(obj)
    frame = pd.DataFrame(frame).reset_index(drop=True)
    for column in frame.columns:  # R factors arrive as categoricals; plain strings read better
        if isinstance(frame[column].dtype, pd.CategoricalDtype):
            frame[column] = frame[column].astype(str)
    return frame


def to_r(r, frame: pd.DataFrame):
    """A pandas frame as an R data.frame, column by column from numpy buffers.

    rpy2's pandas2ri sends every column with the frame's index as string names (one Python string
    per cell, seconds for 24,000 rows); here numbers go as numpy arrays and categoricals as factor
    codes with their levels. Object columns become factors; NaN/NA stay missing."""
    import numpy as np

    ri, ro = r.ro.rinterface, r.ro
    columns = []
    for name in frame.columns:
        column = frame[name]
        if column.dtype == object or isinstance(column.dtype, pd.StringDtype):
            column = column.astype("category")
        if isinstance(column.dtype, pd.CategoricalDtype):
            codes = column.cat.codes.to_numpy().astype(np.int32) + 1
            vector = ro.baseenv["structure"](
                ri.IntSexpVector(np.where(codes == 0, ri.NA_Integer, codes).tolist()),
                levels=ri.StrSexpVector([str(c) for c in column.cat.categories]), **{"class": "factor"})
        elif column.dtype == bool:
            vector = ri.BoolSexpVector(column.tolist())
        elif pd.api.types.is_integer_dtype(column.dtype) and not column.isna().any():
            vector = ri.IntSexpVector(column.to_numpy().astype(np.int32).tolist())
        else:
            values = pd.to_numeric(column, errors="raise").astype(float).to_numpy()
            vector = ri.FloatSexpVector(np.where(np.isnan(values), ri.NA_Real, values).tolist())
        columns.append(vector)
    listed = ri.ListSexpVector(columns)
    listed.do_slot_assign("names", ri.StrSexpVector([str(c) for c in frame.columns]))
    return ro.baseenv["list2DF"](listed, nrow=len(frame))


def factors_for_r(data: pd.DataFrame) -> pd.DataFrame:
    """String columns become categoricals: they go to R as factor codes, not one string per row."""
    data = data.copy()
    for column in data.columns:
        if data[column].dtype == object:
            data[column] = data[column].astype("category")
    return data
