"""What a server says about itself, as a run's record keeps it (issue 34 item 3): chosen keys only,
every value capped. Pure Python.

A run stores its servers' model entry (/v1/models), version (/version, /openapi.json) and settings
(/props) in `ModelRun.versions`, shown on the run's page. A server may answer anything there (a
10 MB /props); what is kept is the keys below, each value capped by `capped` (a string to
STRING_MAX characters, a list to LIST_MAX entries, a mapping to KEYS_MAX keys, nesting to DEPTH_MAX
levels; a number that is not finite becomes its text, as JSON holds no NaN), and a record over
RECORD_MAX bytes of JSON has its largest values replaced by a note saying so (`fitted`).
"""
from __future__ import annotations

import json
import math

STRING_MAX = 200
LIST_MAX = 20
KEYS_MAX = 40
DEPTH_MAX = 3
RECORD_MAX = 16_000  # bytes of JSON per server entry, and per key of a run's record

MODEL_KEYS = ("id", "object", "owned_by", "created", "root", "parent", "max_model_len", "meta")
PROPS_KEYS = ("model_path", "total_slots", "n_ctx", "build_info", "modalities", "default_generation_settings")
VERSION_KEYS = ("version", "build_number", "build_commit", "commit")


def capped(value, depth: int = 0):
    """`value` as a run's record keeps it: JSON types only, every part within the caps above."""
    if value is None or isinstance(value, bool | int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, str):
        return value if len(value) <= STRING_MAX else value[:STRING_MAX] + f"… ({len(value)} characters)"
    if depth >= DEPTH_MAX:
        return f"({type(value).__name__} nested deeper than {DEPTH_MAX} levels, not kept)"
    if isinstance(value, list | tuple):
        kept = [capped(v, depth + 1) for v in value[:LIST_MAX]]
        return kept + ([f"… {len(value) - LIST_MAX} more"] if len(value) > LIST_MAX else [])
    if isinstance(value, dict):
        items = list(value.items())
        kept = {capped(str(k)): capped(v, depth + 1) for k, v in items[:KEYS_MAX]}
        if len(items) > KEYS_MAX:
            kept["…"] = f"{len(items) - KEYS_MAX} more keys"
        return kept
    return capped(str(value), depth)


def chosen(answer, keys: tuple[str, ...]) -> dict:
    """The `keys` of a server's answer (a mapping; anything else gives {}), each value capped."""
    if not isinstance(answer, dict):
        return {}
    return {key: capped(answer[key], 1) for key in keys if key in answer}


def size(value) -> int:
    return len(json.dumps(value, ensure_ascii=False, default=str).encode())


def fitted(record: dict, limit: int = RECORD_MAX) -> dict:
    """`record` with any key whose value is over `limit` bytes of JSON, and then the largest values
    until the whole is within 4 × `limit`, replaced by a note of their size."""
    out = dict(record)
    sizes = {key: size(value) for key, value in out.items()}
    for key, n in sorted(sizes.items(), key=lambda kv: -kv[1]):
        if n <= limit and sum(sizes.values()) <= 4 * limit:
            break
        out[key] = f"(not kept: {n} bytes, over Duet's cap of {limit} bytes)"
        sizes[key] = size(out[key])
    return out
