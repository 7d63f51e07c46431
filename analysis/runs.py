"""Which model runs a report reads: one explicit run set, decided here and nowhere else (issue 15).

`select_runs(study, run_ids)` lists every run of the study, of every kind, each with `used` and `why`.

* Default rule (no run ids): per configuration (language model) and run kind, the latest run (by
  finished_at, then id) that is done and not partial. A partial run (--limit) is a check run: it is
  never picked by the default rule, so an 8-item run cannot hide a 96-item one; pass it with --runs.
  Knowledge-probe runs follow the same rule and are read by the sections of the designs that declare a probe
  (the design registry's Design.knowledge_probe).
* Explicit run ids: exactly those runs go into the analysis. Each must be a run of the study, done,
  and of a scoring kind (items, multiple_choice); two runs of one configuration whose items overlap
  are refused (two runs of one configuration over the same items are never mixed). Probe runs still
  follow the default rule.
* Run variation (001 Table 2, variation across repeated runs): several complete runs of one
  configuration are the point there, so that table reads every done, complete run of each
  configuration in use (`run_variation`), whatever the mode; nothing else reads those extra runs.

`choose` is the rule as a pure function over `RunFacts`; `select_runs` reads the database and calls it.
"""
from __future__ import annotations

import dataclasses
import datetime as dt
import math
from collections import defaultdict
from collections.abc import Iterable, Mapping

SCORING = ("items", "multiple_choice")  # inference.selectors.SCORING_KINDS, without importing inference
PROBE = "knowledge_probe"
DONE = "done"

class RunSelectionError(ValueError):
    """A run set that cannot be used; the message names the runs and why."""


RULE = ("Default rule: per configuration and run kind, the latest run (by finish time, then id) that is done and "
        "not partial; a partial run (one cut short by an item limit) is used only when asked for by its id. "
        "Knowledge-probe runs follow "
        "the same rule (the sections of the designs a probe asks about read them). The multiple-choice run-variation table (001 Table 2) "
        "reads every done, complete run of each configuration in use.")
EXPLICIT = ("Asked for by id ({ids}): exactly these runs are analysed (knowledge probes and the run-variation "
            "table follow the default rule).")

RUN_COLUMNS = {
    "run_id": "database id of the model run",
    "configuration": "the model configuration (language model) the run scored with",
    "kind": "items (yes/no), multiple_choice (001) or knowledge_probe (000 §4.1)",
    "status": "the run's status (only done runs are read)",
    "items_done": "items (or probes) scored",
    "items_total": "items (or probes) the run was asked to score",
    "partial": "True when an item limit cut the run short of its scope's items (a check run)",
    "scope": "which of the study's items the run scored, as it was when the run was made: what people could be "
             "shown (with its rule), every item, or a stated subset of factor values (inference/scopes.py)",
    "prompt_format": "raw or chat (from the configuration stored with the run)",
    "dtype": "the weights' dtype (from the configuration stored with the run)",
    "created_at": "when the run was created (UTC)",
    "finished_at": "when the run finished (UTC)",
    "used": "True when the report's analyses read this run's scores",
    "why": "why the run is used or not",
    "run_variation": "True when the multiple-choice run-variation table (001 Table 2) reads the run",
}


@dataclasses.dataclass(frozen=True)
class RunFacts:
    """What the database says about one run."""

    run_id: int
    configuration: str
    language_model_id: int
    kind: str
    status: str
    items_done: int = 0
    items_total: int = 0
    item_limit: int | None = None
    partial: bool = False
    scope: str = ""
    scope_items: int | None = None  # the items its scope held when it was made (None: not recorded)
    prompt_format: str = ""
    dtype: str = ""
    answers: tuple[str, str] = ("", "")
    answer_forms: str = "paper"  # what the configuration asked: 'paper' (each design's) or its own forms
    decision_rule: str = "paper"  # likewise
    created_at: dt.datetime | None = None
    finished_at: dt.datetime | None = None


@dataclasses.dataclass(frozen=True)
class Run(RunFacts):
    """A run with the rule's verdict."""

    used: bool = False
    why: str = ""
    run_variation: bool = False


def _latest_first(facts: RunFacts) -> tuple:
    finished = facts.finished_at or facts.created_at
    return (finished is not None, finished or dt.datetime.min, facts.run_id)


def _ids(ids: Iterable[int]) -> str:
    return ", ".join(str(i) for i in sorted(ids))


def _partial(facts: RunFacts, totals: Mapping[str, int]) -> str:
    total = facts.scope_items or totals.get(facts.kind)
    of = f" of {total}" if total else ""
    return f"partial: an item limit of {facts.item_limit or facts.items_total}{of} items; ask for it by id to use it"


def check_requested(facts: list[RunFacts], run_ids: Iterable[int], *, items: Mapping[int, Iterable[int]],
                    study: str = "the study") -> list[int]:
    """The requested ids, sorted and unique, or RunSelectionError (a ValueError) naming every run refused and why.
    `items` holds the scored item ids of the requested runs (at least where one configuration has
    more than one)."""
    wanted = sorted(set(int(i) for i in run_ids))
    by_id = {f.run_id: f for f in facts}
    problems = []
    foreign = [i for i in wanted if i not in by_id]
    if foreign:
        problems.append(f"run(s) {_ids(foreign)} are not runs of {study}")
    asked = [by_id[i] for i in wanted if i in by_id]
    not_done = [f for f in asked if f.status != DONE]
    if not_done:
        problems.append("run(s) " + ", ".join(f"{f.run_id} ({f.status})" for f in not_done)
                        + " are not done: only finished runs go into a report")
    other_kind = [f for f in asked if f.kind not in SCORING]
    if other_kind:
        problems.append("run(s) " + ", ".join(f"{f.run_id} ({f.kind})" for f in other_kind)
                        + f" are not scoring runs ({', '.join(SCORING)}): knowledge probes follow the default rule")
    by_configuration: dict[int, list[RunFacts]] = defaultdict(list)
    for f in asked:
        if f.status == DONE and f.kind in SCORING:
            by_configuration[f.language_model_id].append(f)
    for group in by_configuration.values():
        for n, first in enumerate(group):
            for second in group[n + 1:]:
                common = set(items.get(first.run_id, ())) & set(items.get(second.run_id, ()))
                if common:
                    problems.append(
                        f"runs {first.run_id} and {second.run_id} are both of configuration '{first.configuration}' "
                        f"and score {len(common)} of the same items: two runs of one configuration over the same "
                        "items are never mixed; pass one of them")
    if problems:
        raise RunSelectionError("Cannot use these runs: " + "; ".join(problems) + ".")
    return wanted


def choose(facts: list[RunFacts], run_ids: Iterable[int] | None = None, *,
           items: Mapping[int, Iterable[int]] | None = None, totals: Mapping[str, int] | None = None,
           multiple_choice: Iterable[int] = (), study: str = "the study") -> list[Run]:
    """Every run with `used`, `why` and `run_variation` (see the module docstring), by id.

    `totals`: the study's item (probe) count per run kind, for the partial runs' reason;
    `multiple_choice`: the runs holding multiple-choice scores (the candidates for run variation)."""
    totals = totals or {}
    explicit = check_requested(facts, run_ids, items=items or {}, study=study) if run_ids else None
    latest: dict[tuple[int, str], RunFacts] = {}
    for f in sorted(facts, key=_latest_first):
        if f.status == DONE and not f.partial:
            latest[(f.language_model_id, f.kind)] = f
    if explicit is None:
        used = {f.run_id for f in latest.values()}
    else:
        used = set(explicit) | {f.run_id for key, f in latest.items() if key[1] == PROBE}
    in_use = {(f.language_model_id, f.kind) for f in facts if f.run_id in used}
    multiple_choice = set(multiple_choice)
    variation = {f.run_id for f in facts if f.run_id in multiple_choice and f.status == DONE and not f.partial
                 and (f.language_model_id, f.kind) in in_use and f.kind in SCORING}
    out = []
    for f in sorted(facts, key=lambda f: f.run_id):
        why = _why(f, used, latest, explicit, totals)
        if f.run_id in variation:
            why += "; read by the run-variation table (001 Table 2), which uses every complete run of a configuration"
        out.append(Run(**dataclasses.asdict(f), used=f.run_id in used, why=why, run_variation=f.run_id in variation))
    return out


def _why(f: RunFacts, used: set[int], latest: dict, explicit: list[int] | None, totals: Mapping[str, int]) -> str:
    probe = f.kind == PROBE
    if f.run_id in used:
        if probe:
            from experiments import design_registry as registry

            return (f"knowledge probe: read by the sections of the designs it asks about ({registry.probed_designs()}); "
                    "the latest complete probe run of this configuration")
        if explicit is not None:
            return "asked for by id" + (" (a partial run)" if f.partial else "")
        return "the latest complete run of this configuration and kind"
    prefix = "knowledge probe, " if probe else ""
    if f.status != DONE:
        return f"{prefix}status {f.status}"
    if f.partial and (explicit is None or probe):
        return prefix + _partial(f, totals)
    if explicit is not None and not probe:
        return f"not asked for (runs asked for: {' '.join(map(str, explicit))})"
    newer = latest.get((f.language_model_id, f.kind))
    return f"{prefix}an earlier complete run of the same configuration (run {newer.run_id} is used)"


def used_ids(runs: Iterable[Run], kinds: Iterable[str] = SCORING) -> list[int]:
    kinds = set(kinds)
    return sorted(r.run_id for r in runs if r.used and r.kind in kinds)


def variation_ids(runs: Iterable[Run]) -> list[int]:
    return sorted(r.run_id for r in runs if r.run_variation)


def table(runs: Iterable[Run]):
    """The runs as a frame with RUN_COLUMNS (the report's runs table and tables/runs.csv)."""
    import pandas as pd

    def value(run: Run, name: str):
        found = getattr(run, name)
        if isinstance(found, dt.datetime):
            return found.isoformat(timespec="seconds")
        return "" if found is None else found

    return pd.DataFrame([{name: value(r, name) for name in RUN_COLUMNS} for r in runs], columns=list(RUN_COLUMNS))


# --------------------------------------------------------------------------- the one database read


def select_runs(study, run_ids: list[int] | None = None) -> list[Run]:
    """Every run of `study` (all kinds) with whether the report uses it and why; RunSelectionError (a
    ValueError) for a bad explicit selection. `run_ids` empty or None: the default rule."""
    try:
        from inference.models import ModelRun, ModelScore
    except ImportError:
        if run_ids:
            raise RunSelectionError("Cannot use these runs: the inference app is not installed.") from None
        return []
    facts = []
    for run in ModelRun.objects.filter(study=study).select_related("language_model").order_by("pk"):
        config, lm = run.configuration or {}, run.language_model
        facts.append(RunFacts(
            run_id=run.pk, configuration=lm.name, language_model_id=lm.pk, kind=str(run.kind),
            status=str(run.status), items_done=run.items_done, items_total=run.items_total,
            item_limit=run.item_limit, partial=bool(run.partial),
            scope=(run.scope_detail or {}).get("rule") or run.get_scope_display(),
            scope_items=(run.scope_detail or {}).get("items"),
            prompt_format=config.get("prompt_format") or lm.prompt_format, dtype=config.get("dtype") or lm.dtype,
            answers=(config.get("answer_yes", lm.answer_yes), config.get("answer_no", lm.answer_no)),
            answer_forms=config.get("answer_forms") or lm.answer_forms,
            decision_rule=config.get("decision_rule") or lm.decision_rule,
            created_at=run.created_at, finished_at=run.finished_at,
        ))
    items: dict[int, set[int]] = defaultdict(set)
    if run_ids:
        wanted = set(run_ids)
        counts = defaultdict(int)
        for f in facts:
            if f.run_id in wanted:
                counts[f.language_model_id] += 1
        shared = [f.run_id for f in facts if f.run_id in wanted and counts[f.language_model_id] > 1]
        for run_id, item_id in ModelScore.objects.filter(run_id__in=shared).values_list("run_id", "item_id"):
            items[run_id].add(item_id)
    totals = {}
    for kind in {f.kind for f in facts if f.partial}:
        totals[kind] = _study_total(study, kind)
    multiple_choice: set[int] = set()
    if study.items.filter(kind="multiple_choice").exists():
        multiple_choice = set(ModelScore.objects.filter(run__study=study, item__kind="multiple_choice")
                              .order_by().values_list("run_id", flat=True).distinct())
    return choose(facts, run_ids, items=items, totals=totals, multiple_choice=multiple_choice,
                  study=f"study '{study.slug}'")


def _study_total(study, kind: str) -> int | None:
    """How many units (items, probes) a complete run of `kind` scores: the run kind's own rule."""
    from inference import strategies

    try:
        return len(strategies.for_kind(kind).units(study))
    except ValueError:  # a kind without a strategy
        return None


# --------------------------------------------------------------------------- what each configuration used

MASS_WARNING = 0.5
RULE_TEXT = {
    ("relative", "yes_no"): "relative: p(Yes) vs p(No) (003 §4.1)",
    ("relative", "multiple_choice"): "relative: the likeliest of the letters A–D (001)",
    ("top_token", "yes_no"): "top token over the whole vocabulary (000 §4.2)",
    ("top_token", "multiple_choice"): "top token over the whole vocabulary (000 §4.2)",
    ("generated", "yes_no"): "generated: the answer written, the most frequent of n samples (p(Yes): share of yes)",
    ("generated", "multiple_choice"): "generated: the letter written, the most frequent of n samples",
}
RULE_NAMES = {"relative": "relative", "top_token": "top token"}
CONFIGURATION_COLUMNS = {
    "configuration": "the model configuration",
    "run_id": "the run used",
    "kind": "the run's kind",
    "prompt_format": "raw or chat",
    "dtype": "the weights' dtype",
    "answers": "the configuration's answers",
    "variants": "per design, the answer variants whose probabilities were summed (each distinct set the scores "
                "used), which forms those are, and whether that is the design's paper's setting or the "
                "configuration's own",
    "scores": "scores read",
    "mean_answer_mass": "mean of p(Yes) + p(No) (the letters' sum for multiple choice): the share of the "
                        "next-token distribution the answers take",
    "decision_rules": "the decision rule each design's scores were decided by (ModelScore.decision_rule), and "
                      "whether that is the design's paper's rule or the configuration's own",
    "other_share": "the share of the run's decisions that are 'other' (neither answer: under the top-token rule, "
                   "the most probable token was none of the answers); a warning above 10 %",
    "other_by_rule": "per decision rule, the share of decisions that are 'other' (how many of how many)",
    "warning": "",
}


def _variant_text(variants: dict) -> str:
    """'yes: …, … | no: …' (letters in order): labels ordered here, since PostgreSQL's jsonb does not
    keep a stored object's key order."""
    order = sorted(variants, key=lambda label: ({"yes": 0, "no": 1}.get(label, 2), label))
    return " | ".join(f"{label}: {', '.join(repr(t) for t in variants[label])}" for label in order)


OTHER_WARNING = 0.10  # more 'other' decisions than this share, and a configuration's accuracy says little
OTHER = "other"


def other_by_rule(part) -> list[tuple[str, int, int]]:
    """(decision rule, 'other' decisions, decisions) of a run's scores, by rule (sorted)."""
    if not len(part) or "decision" not in part:
        return []
    rules = part["decision_rule"].fillna("relative")
    return [(rule, int((group["decision"] == OTHER).sum()), len(group))
            for rule, group in part.groupby(rules, sort=True)]


def other_text(counts: list[tuple[str, int, int]]) -> str:
    """'top token: 75.0 % other (30 of 40); relative: 0.0 % other (0 of 40)'."""
    return "; ".join(f"{RULE_NAMES.get(rule, rule)}: {100 * other / n:.1f} % other ({other} of {n})"
                     for rule, other, n in counts if n)


def other_warning(counts: list[tuple[str, int, int]]) -> str:
    over = [(rule, other, n) for rule, other, n in counts if n and other / n > OTHER_WARNING]
    if not over:
        return ""
    return (f"{other_text(over)} of the decisions (over {OTHER_WARNING:.0%}): the model's most probable token is "
            "mostly neither answer, so its accuracy counts those items as wrong; read its answer mass and its "
            "relative decisions too")


def mass_warning(mass: float, kind: str) -> str:
    if math.isnan(mass) or mass >= MASS_WARNING:
        return ""
    read = "the letters' probabilities are" if kind == "multiple_choice" else "p(Yes) and p(No) are"
    return (f"mean answer mass {mass:.3g} < {MASS_WARNING}: the model mostly predicts other tokens: {read} read "
            "from a small share of its distribution")


FORMS_TEXT = {"answers": "the answers only", "cases": "the answers in three cases",
              "all": "every surface form (spacing × case)"}


def _origin(asked: str, used: str, paper: str, source: str, text: dict) -> str:
    """'the paper's setting (003 §4.1: …)' or 'set by the configuration (the paper's: …)'."""
    if asked in ("", "paper"):
        return f"the paper's setting ({source})" if used == paper else \
            f"the paper's setting when scored (now {text.get(paper, paper)}: {source})"
    same = "; the same as the paper's" if used == paper else f"; the paper's: {text.get(paper, paper)}"
    return f"set by the configuration{same}"


def _variants_by_design(run: Run, variants) -> str:
    """'design: yes: …; yes: … — the answers only, the paper's setting (003 §4.1: …) · design: …'."""
    from experiments import design_registry as registry

    found: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    part = variants[variants["run_id"] == run.run_id]
    for design, forms, sets in zip(part["design"].tolist(), part["answer_forms"].tolist(), part["variants"].tolist()):
        found[design or ""][forms or ""].append(_variant_text(sets or {}))
    out = []
    for design in sorted(found):
        paper = registry.scoring(design)
        for forms, texts in sorted(found[design].items()):
            said = f"{design or '(no design)'}: {'; '.join(texts)}"
            if not forms:  # a score from before scores recorded their forms
                out.append(f"{said} — forms not recorded")
                continue
            origin = _origin(run.answer_forms, forms, paper.answer_forms, paper.forms_source, FORMS_TEXT)
            out.append(f"{said} — {FORMS_TEXT.get(forms, forms)}, {origin}")
    return " · ".join(out)


def _rule_origin(run: Run, design: str, rule: str) -> str:
    from experiments import design_registry as registry

    paper = registry.scoring(design)
    return _origin(run.decision_rule, rule, paper.decision_rule, paper.decision_source,
                   {"relative": "relative", "top_token": "top token", "generated": "generated"})


def configurations(runs: Iterable[Run], scores, variants):
    """One row per used scoring run: how its configuration asked and answered (prompt format, dtype,
    answers, the variants summed per design), its mean answer mass with a warning below 0.5, and the
    decision rule per design; the variants and the rule each say whether they are the design's
    paper's setting (designs/<family>/design.py) or the configuration's own. `scores`: the
    report's scores frame; `variants`: frames.variants_frame."""
    import pandas as pd

    rows = []
    for r in runs:
        if not (r.used and r.kind in SCORING):
            continue
        part = scores[scores["run_id"] == r.run_id] if len(scores) else scores
        mass = float(part["answer_mass"].mean()) if len(part) else float("nan")
        rules = []
        if len(part):
            for (design, item_kind), group in part.groupby(["design", "kind"], sort=True):
                for rule in sorted(set(group["decision_rule"].fillna("relative"))):
                    rules.append(f"{design}: {RULE_TEXT.get((rule, item_kind), rule)}, "
                                 f"{_rule_origin(r, design, rule)}")
        others = other_by_rule(part)
        warning = [mass_warning(mass, "multiple_choice" if r.kind == "multiple_choice" else "yes_no"),
                   other_warning(others)]
        rows.append({
            "configuration": r.configuration, "run_id": r.run_id, "kind": r.kind, "prompt_format": r.prompt_format,
            "dtype": r.dtype, "answers": " / ".join(repr(a) for a in r.answers),
            "variants": _variants_by_design(r, variants) or "(none stored)", "scores": len(part),
            "mean_answer_mass": mass, "decision_rules": "; ".join(rules),
            "other_share": (float((part["decision"] == OTHER).mean()) if len(part) and "decision" in part
                            else float("nan")),
            "other_by_rule": other_text(others),
            # generated answers: the mass is the share of samples parsed (analysis/generated.py says it)
            "warning": "" if r.decision_rule == "generated" else "; ".join(w for w in warning if w),
        })
    return pd.DataFrame(rows, columns=list(CONFIGURATION_COLUMNS))
