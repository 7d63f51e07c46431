"""Built-in effects for simulated pilots (issue 47 item 5): an accuracy, and a response-time shift, per level of
one of the study's declared factors, so a pilot carries the effect a study expects (rulebreakers vs
non-rulebreakers, valid vs invalid forms) and its report and power analysis can show it.

One way in, one parser: the command's repeatable `--accuracy-by FACTOR=LEVEL:ACCURACY` and
`--rt-shift-by FACTOR=LEVEL:MS`, and the admin pilot form's text fields (one such line each), all go through
`parse`, then `for_study` checks the names against the study (a declared factor, a level its items have) and
writes them as the items store them. Both refuse with a message naming what is wrong; nothing is created.

How a bot answers an item (BotProfile.accuracy_on): right with the accuracy named for the item's level; an item
whose levels are named for several factors combines them additively on the logit scale around the overall
accuracy (one factor named: exactly its accuracy); levels not named keep the overall accuracy. Response-time
shifts add up (ms) on top of the log-normal draw. Catch items keep the catch-item accuracy.
"""
from __future__ import annotations

import math
import re

from .. import design_registry as registry
from .. import factors as declared
from ..design_registry import CATCH_ITEMS

ACCURACY, RT_SHIFT = "accuracy", "rt_shift"
EXAMPLES = {ACCURACY: "pair_role=rulebreaker:0.35", RT_SHIFT: "pair_role=rulebreaker:300"}
FLAGS = {ACCURACY: "--accuracy-by FACTOR=LEVEL:ACCURACY", RT_SHIFT: "--rt-shift-by FACTOR=LEVEL:MS"}
STATED = "--effect-by FACTOR=LEVEL:ACCURACY"  # the power analysis's stated people's effect (analysis/power_people.py)
MAX_RT_SHIFT_MS = 30_000.0  # a shift past half a minute is not a response-time effect
MIN_RT_MS = 150.0  # a shifted response time never falls below this
_LINE = re.compile(r"^\s*([^=:\s]+)\s*=\s*(.+?)\s*:\s*([^:]+?)\s*$")


def parse(entries, kind: str, *, flag: str = "") -> dict[str, dict[str, float]]:
    """{factor: {level: value}} from FACTOR=LEVEL:VALUE entries (a list of them, or text with one per line;
    blank lines and lines starting with # skipped). `kind`: ACCURACY (a probability in [0, 1]) or RT_SHIFT
    (milliseconds, ±MAX_RT_SHIFT_MS). ValueError naming every malformed, out-of-range or repeated entry, after
    `flag` (the option's words; FLAGS[kind] by default)."""
    if kind not in FLAGS:
        raise ValueError(f"unknown kind {kind!r}")
    if entries is None:
        return {}
    if isinstance(entries, str):
        entries = entries.splitlines()
    found: dict[str, dict[str, float]] = {}
    problems = []
    for entry in entries:
        text = str(entry).strip()
        if not text or text.startswith("#"):
            continue
        match = _LINE.match(text)
        if not match:
            problems.append(f"{text!r} is not FACTOR=LEVEL:{'ACCURACY' if kind == ACCURACY else 'MS'} "
                            f"(e.g. {EXAMPLES[kind]})")
            continue
        factor, level, raw = match.groups()
        try:
            value = float(raw)
        except ValueError:
            problems.append(f"{text!r}: {raw!r} is not a number")
            continue
        if not math.isfinite(value):
            problems.append(f"{text!r}: {raw!r} is not a finite number")
        elif kind == ACCURACY and not 0.0 <= value <= 1.0:
            problems.append(f"{text!r}: an accuracy is a probability between 0 and 1 (got {value:g})")
        elif kind == RT_SHIFT and abs(value) > MAX_RT_SHIFT_MS:
            problems.append(f"{text!r}: a response-time shift is at most ±{MAX_RT_SHIFT_MS:.0f} ms (got {value:g})")
        elif level in found.get(factor, {}):
            problems.append(f"{text!r}: {factor}={level} is named twice")
        else:
            found.setdefault(factor, {})[level] = value
    if problems:
        raise ValueError(f"{flag or FLAGS[kind]}: " + "; ".join(problems) + ".")
    return found


def check_values(by: dict, kind: str) -> list[str]:
    """Problems with an already parsed {factor: {level: value}} (BotProfile's own check; "" when none)."""
    if not isinstance(by, dict) or not all(isinstance(f, str) and isinstance(levels, dict) and levels
                                           for f, levels in by.items()):
        return [f"{kind}_by must map each factor to {{level: value}}"]
    problems = []
    for factor, levels in by.items():
        for level, value in levels.items():
            if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value):
                problems.append(f"{kind}_by {factor}={level}: {value!r} is not a number")
            elif kind == ACCURACY and not 0.0 <= value <= 1.0:
                problems.append(f"{kind}_by {factor}={level}: an accuracy is between 0 and 1 (got {value!r})")
            elif kind == RT_SHIFT and abs(value) > MAX_RT_SHIFT_MS:
                problems.append(f"{kind}_by {factor}={level}: at most ±{MAX_RT_SHIFT_MS:.0f} ms (got {value!r})")
    return problems


def combined_accuracy(overall: float, named: list[float]) -> float:
    """The accuracy of an item whose levels name `named` accuracies: the one named when there is one, else
    each named level's logit departure from the overall accuracy added up (none named: the overall)."""
    if not named:
        return overall
    if len(named) == 1:
        return named[0]

    def logit(p: float) -> float:
        p = min(max(p, 1e-9), 1 - 1e-9)
        return math.log(p / (1 - p))

    eta = logit(overall) + sum(logit(p) - logit(overall) for p in named)
    return 1 / (1 + math.exp(-eta))


def item_value(item, factor: str) -> str:
    """An item's level of a factor (the frames' column name): its field, or its descriptive column."""
    source = declared.FIELD_SOURCES.get(factor)
    value = getattr(item, source, "") if source else (item.attributes or {}).get(factor, "")
    return "" if value is None else str(value)


def study_levels(study, factor: str) -> list[str]:
    """The levels the study's items (its catch items left out) have for `factor`, as the items store them."""
    items = study.items.exclude(design=CATCH_ITEMS)
    source = declared.FIELD_SOURCES.get(factor)
    if source:
        values = items.order_by().values_list(source, flat=True).distinct()
    else:
        values = {(a or {}).get(factor) for a in items.exclude(attributes={}).values_list("attributes", flat=True)}
    return sorted({str(v) for v in values if v not in (None, "")})


def _codes(factor: str, level: str) -> set[str]:
    """The ways a level may be written: as stored, and its ASCII code as its design declares it
    (design_registry.level_code)."""
    return {level, registry.level_code(factor, level)}


def for_study(study, by: dict[str, dict[str, float]], kind: str, *, flag: str = "",
              every_level: bool = False) -> dict[str, dict[str, float]]:
    """`by` (parse's result) checked against `study`: each factor one of the study's declared factors (any of the
    names experiments/factors.py accepts, written as the frames name it), each level one its items have (also by
    the ASCII code its design declares), written as the items store them. ValueError naming each
    unknown factor or level and listing what the study has; `every_level`: each factor named must name every level
    its items have (a stated effect of the power analysis)."""
    if not by:
        return {}
    factors = declared.declared_factors(study)
    out: dict[str, dict[str, float]] = {}
    problems = []
    for name, levels in by.items():
        try:
            factor = declared.validate(study, [name])[0]
        except ValueError:
            factor = None
        if factor not in factors:
            problems.append(f"{name!r} is not one of the study's declared factors "
                            f"({', '.join(factors) or 'it declares none'})")
            continue
        have = study_levels(study, factor)
        written = {code: level for level in have for code in _codes(factor, level)}
        for level, value in levels.items():
            if level not in written:
                problems.append(f"{factor} has no level {level!r} among the study's items (its levels: "
                                f"{', '.join(have) or 'none'})")
            elif written[level] in out.get(factor, {}):
                problems.append(f"{factor}={written[level]} is named twice")
            else:
                out.setdefault(factor, {})[written[level]] = value
        missing = [level for level in have if level not in out.get(factor, {})]
        if every_level and factor in out and missing:
            problems.append(f"{factor}: name every level (missing {', '.join(missing)})")
    if problems:
        raise ValueError(f"{flag or FLAGS[kind]}: " + "; ".join(problems) + ".")
    return out


def describe(by: dict[str, dict[str, float]], kind: str) -> str:
    """'pair_role=rulebreaker:0.35, pair_role=non-rulebreaker:0.95' (the form's lines, joined)."""
    unit = "" if kind == ACCURACY else " ms"
    return ", ".join(f"{f}={level}:{value:g}{unit}" for f, levels in by.items() for level, value in levels.items())


def lines(by: dict[str, dict[str, float]]) -> str:
    """The form's text for `by`: one FACTOR=LEVEL:VALUE per line."""
    return "\n".join(f"{f}={level}:{value:g}" for f, levels in by.items() for level, value in levels.items())
