"""A study's declared factors: what its items vary by, and so what Table 1 and the humans-vs-models
model are by (issue 25 item 2). `declared_factors(study)` is the one reader; it and the checks live in
experiments/factors.py (the app's import and settings editor use them) and are re-exported here.

Where they come from, first found:
1. `study.settings["factors"]`: names a researcher gave at import (`import_items … --factors a b`, the
   admin's upload form) or in the study's settings editor;
2. the design registry (designs/<family>/design.py): each design a study's items come from
   declares its factors, with their levels and how the report names them (Design.factors, factor_levels).

A factor is an item field (a column of the report's frames, such as condition) or one of a CSV bank's
descriptive columns (kept in Item.attributes). Names are checked against the
study's items with a message that lists what exists; nothing is stored when one is wrong.
"""
from __future__ import annotations

import re

import pandas as pd

from experiments import design_registry as registry
from experiments.factors import (  # noqa: F401  (re-exported: the one reader and its checks)
    FIELD_SOURCES, FIELDS, PARTICIPANT_SETTING, RESERVED, SETTING, attribute_keys, check, check_participant,
    declared_factors, for_designs, normalise, participant_factors, study_designs, validate,
)


def values_frame(study, names, analysed=None) -> pd.DataFrame:
    """item_id and one column per descriptive-column factor in `names` (item fields are in the frames);
    `analysed` (a query of item ids, frames.analysed_item_ids): only those items' rows, read in chunks."""
    wanted = [n for n in names if n not in FIELD_SOURCES]
    items = study.items.order_by("id") if analysed is None else study.items.filter(pk__in=analysed).order_by("id")
    rows = items.values_list("id", "attributes").iterator(chunk_size=2000) if wanted else []
    return pd.DataFrame([(pk, *((attrs or {}).get(n, "") for n in wanted)) for pk, attrs in rows],
                        columns=["item_id", *wanted])


def join(frame: pd.DataFrame, values: pd.DataFrame | None) -> pd.DataFrame:
    """`frame` with the descriptive-column factors of `values` joined by item_id (a copy; `frame` if none)."""
    if values is None or len(values.columns) <= 1 or not len(frame) or "item_id" not in frame:
        return frame
    extra = values.drop(columns=[c for c in values.columns if c != "item_id" and c in frame.columns])
    if len(extra.columns) <= 1:
        return frame
    joined = frame.merge(extra.astype({"item_id": frame["item_id"].dtype}), on="item_id", how="left")
    joined.index = frame.index
    return joined


def r_name(name: str) -> str:
    """A factor's name as a syntactic R name for a formula (letters, digits, _ and .; not a digit first)."""
    safe = re.sub(r"[^0-9A-Za-z_.]", "_", name)
    return safe if safe and not safe[0].isdigit() and not safe.startswith("_") else f"f_{safe}"


def spoken(name: str) -> str:
    """How the report's text, legends and titles name factor `name`: as its design declares it (Factor.spoken),
    else by its name."""
    return registry.spoken(name)
