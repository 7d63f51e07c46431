"""Which of a study's items a model run scores: its scope (issue 43 item 4).

- `shown`: the items people could be shown — what the study's participant lists hold (for a closed study, what people
  answered): `experiments.participation.selectors.items_people_can_be_shown`, the one definition the report reads too.
  The default wherever it holds items of the run's kind (`asked`): a RULEBREAKERS import stores ten phrasings,
  people see one, and a run scores that one unless asked for more.
- `all`: every item of the study.
- `subset`: the items whose factor values are among those stated, `{factor: [values]}`; a factor is an item
  field (variant — the phrasing —, condition, design, modality, argument_form, form_id, pair_role) or one of
  the items' descriptive columns (experiments/factors.py names them). An item is in when each factor's value is
  one of those listed.

An item limit (the first N by id) applies on top of any of them. Knowledge probes ask about the facts of the
study's items, whatever their phrasing: their scope is every item. A run stores its scope, the subset and what
the scope held when it was made (`ModelRun.scope_detail`); a run of scope `shown` whose population changed before
it finished stops (`refuse_changed`) rather than mix two populations in one run.
"""
from __future__ import annotations

from dataclasses import dataclass

from django.core.exceptions import ValidationError
from django.db.models import Q, QuerySet

from experiments import factors
from experiments.models import Item, Study
from experiments.participation.selectors import items_people_can_be_shown

from .models import RunScope

ITEM_FIELDS = frozenset(factors.FIELD_SOURCES.values())  # the item fields a subset may name
ALIASES = {"phrasing": "variant"}  # the researcher's word for an item's variant
SHOWN_VALUES = 12  # the values a refusal lists of a factor


class ScopeChanged(RuntimeError):
    """The items people could be shown are not those the run was made for."""


@dataclass(frozen=True)
class Scope:
    name: str = RunScope.ALL
    subset: tuple[tuple[str, tuple], ...] = ()  # (factor, its values), as stored in ModelRun.subset

    @classmethod
    def of(cls, run) -> Scope:
        return cls(run.scope or RunScope.ALL, frozen(run.subset) if run.scope == RunScope.SUBSET else ())

    def subset_dict(self) -> dict[str, list]:
        return {name: list(values) for name, values in self.subset}

    def items(self, study: Study) -> QuerySet[Item]:
        """The study's items in this scope (every kind: a run kind's strategy keeps its own)."""
        if self.name == RunScope.SHOWN:
            return Item.objects.filter(study=study).filter(ids_q(items_people_can_be_shown(study).item_ids))
        items = Item.objects.filter(study=study)
        return items.filter(subset_q(self.subset_dict())) if self.name == RunScope.SUBSET else items

    def words(self, study: Study) -> str:
        """The scope in words, with its rule: what the run's page, its provenance and the refusals say."""
        if self.name == RunScope.SHOWN:
            return f"what people could be shown: {items_people_can_be_shown(study).describe()}"
        if self.name == RunScope.SUBSET:
            return f"the stated subset: {subset_text(self.subset_dict())}"
        return "every item of the study"


EVERY = Scope()


def ids_q(ids) -> Q:
    """A filter holding exactly `ids`, written as runs of consecutive ids (a study's items are made in runs), so
    that a study of 48,000 items is a few ranges, not 48,000 query parameters (SQLite allows 32,766)."""
    runs: list[list[int]] = []
    for item_id in sorted(ids):
        if runs and item_id == runs[-1][1] + 1:
            runs[-1][1] = item_id
        else:
            runs.append([item_id, item_id])
    if not runs:
        return Q(pk__in=[])
    singles = [low for low, high in runs if low == high]
    ranges = [Q(pk__range=(low, high)) for low, high in runs if low != high]
    found = Q(pk__in=singles) if singles else Q(pk__in=[])
    for each in ranges:
        found |= each
    return found


def frozen(subset: dict | None) -> tuple[tuple[str, tuple], ...]:
    return tuple((name, tuple(values)) for name, values in sorted((subset or {}).items()))


def subset_q(subset: dict[str, list]) -> Q:
    """Each factor's value among its listed values, as a filter on items."""
    found = Q()
    for name, values in sorted(subset.items()):
        field = name if name in ITEM_FIELDS else f"attributes__{name}"
        found &= Q(**{f"{field}__in": list(values)})
    return found


def subset_parse(text: str) -> dict[str, list[str]]:
    """'variant = follow/yes-no, follow/true-false; condition = real' (a factor per line or between ';') as
    {factor: [values]}; empty text: {}. ValidationError saying what cannot be read."""
    subset: dict[str, list[str]] = {}
    for part in (text or "").replace("\r", "\n").replace(";", "\n").split("\n"):
        if not part.strip():
            continue
        name, equals, values = part.partition("=")
        listed = [v.strip() for v in values.split(",") if v.strip()]
        if not equals or not name.strip() or not listed:
            raise ValidationError(f"Write each factor of a subset as 'name = value, value' (one per line, or "
                                  f"separated by ';'), e.g. 'variant = follow/yes-no'; not {part.strip()!r}.")
        values = subset.setdefault(name.strip(), [])
        values += [v for v in dict.fromkeys(listed) if v not in values]
    return subset


def subset_text(subset: dict[str, list]) -> str:
    return "; ".join(f"{name} = {', '.join(str(v) for v in values)}" for name, values in sorted(subset.items()))


def _values(study: Study, name: str) -> list:
    field = name if name in ITEM_FIELDS else f"attributes__{name}"
    found = Item.objects.filter(study=study).order_by().values_list(field, flat=True).distinct()
    return sorted({value for value in found if value is not None}, key=str)


def subset_check(study: Study, subset: dict[str, list]) -> dict[str, list]:
    """`subset` with each factor named as stored (an item field or a descriptive column, checked against the
    study's items) and each value as the items hold it; ValidationError naming what is unknown and what exists."""
    if not subset:
        raise ValidationError("A subset names at least one factor and its values, e.g. 'variant = follow/yes-no'.")
    named = {ALIASES.get(name, name): values for name, values in subset.items()}
    try:
        columns = factors.validate(study, list(named))
    except ValueError as exc:
        raise ValidationError(str(exc).replace("Factors:", "Subset:", 1)) from None
    checked: dict[str, list] = {}
    problems = []
    for (name, values), column in zip(named.items(), columns, strict=True):
        field = factors.FIELD_SOURCES.get(column, column)
        known = _values(study, field)
        by_text = {str(value): value for value in known}
        unknown = [str(v) for v in values if str(v) not in by_text]
        if unknown:
            listed = ", ".join(str(v) or "(empty)" for v in known[:SHOWN_VALUES]) + (", …" if len(known) > SHOWN_VALUES
                                                                                    else "")
            problems.append(f"{name}: no item has {', '.join(repr(v) for v in unknown)} (its values: {listed or 'none'})")
            continue
        checked[field] = [by_text[str(v)] for v in values]
    if problems:
        raise ValidationError(f"Subset of study '{study.slug}': " + "; ".join(problems) + ".")
    return checked


def asked(*, study: Study, strategy, scope: str | None = None, subset: dict | str | None = None) -> Scope:
    """The scope a run of `strategy`'s kind is asked for, checked. `scope` None or "": what people could be
    shown where that holds items of the kind, else every item. `subset` (a dict, or text as subset_parse
    reads it) only with scope 'subset' (given alone, it means that scope)."""
    if isinstance(subset, str):
        subset = subset_parse(subset)
    if subset and not scope:
        scope = RunScope.SUBSET
    if scope and scope not in RunScope.values:
        raise ValidationError(f"'{scope}' is not a run scope; choose one of {', '.join(RunScope.values)}.")
    if subset and scope != RunScope.SUBSET:
        raise ValidationError(f"A subset is scope 'subset', not '{scope}'.")
    if not getattr(strategy, "scoped", False):
        if scope not in (None, "", RunScope.ALL):
            raise ValidationError("A knowledge probe asks about the facts of every item of the study, whatever its "
                                  "phrasing: its scope is every item.")
        return EVERY
    if scope == RunScope.SUBSET:
        return Scope(RunScope.SUBSET, frozen(subset_check(study, subset or {})))
    if scope:
        return Scope(scope)
    shown = Scope(RunScope.SHOWN)
    return shown if strategy.count(study, shown) else EVERY


def nothing(*, study: Study, strategy, scope: Scope, kind_words: str) -> str:
    """Why a run of this scope has nothing to score, in words."""
    if scope == EVERY or not strategy.count(study):
        return strategy.nothing(study)
    other = " or another subset" if scope.name == RunScope.SUBSET else ""
    return f"Study '{study.slug}' has no {kind_words} in {scope.words(study)}; choose every item{other}."


def detail(*, study: Study, scope: Scope, strategy, items: int) -> dict:
    """What a run stores of its scope when it is made (ModelRun.scope_detail)."""
    return {"scope": scope.name, "rule": scope.words(study), "items": items, "study_items": strategy.count(study)}


def refuse_changed(run) -> None:
    """ScopeChanged where the run scores what people could be shown and that is no longer what it was when
    the run was made (another phrasing chosen, perturbed copies drawn or not): its scores would mix two."""
    if run.scope != RunScope.SHOWN or not (run.scope_detail or {}).get("rule"):
        return
    now = Scope(RunScope.SHOWN).words(run.study)
    if now != run.scope_detail["rule"]:
        raise ScopeChanged(f"What people could be shown changed since run {run.pk} was made (then {run.scope_detail['rule']}; "
                           f"now {now}), so its scores would mix two sets of items. Launch a new run.")


@dataclass(frozen=True)
class ScopeCount:
    """One scope a run could take on a study, and how many items of the run's kind it holds (None: a subset
    not stated yet)."""

    scope: str
    items: int | None
    words: str
    default: bool = False


def counts(*, study: Study, strategy, subset: dict | None = None) -> list[ScopeCount]:
    """Each scope a run of `strategy`'s kind could take on `study`, with its items; a probe run: every item."""
    default = asked(study=study, strategy=strategy).name
    if not getattr(strategy, "scoped", False):
        return [ScopeCount(RunScope.ALL, strategy.count(study), EVERY.words(study), default=True)]
    found = []
    for name in RunScope.values:
        scope = Scope(name)
        if name == RunScope.SUBSET:
            if not subset:
                found.append(ScopeCount(name, None, "the factor values stated below"))
                continue
            scope = Scope(name, frozen(subset))
        found.append(ScopeCount(name, strategy.count(study, scope), scope.words(study), default=name == default))
    return found
