"""Writes of linked pairs, whatever their design (issue 6): logic/pairs.py's PairedItems into Item rows, and
the study's human variant (the phrasing participants see). The paired designs (designs/paired/) and a yes/no bank
with pair columns (designs/csv_bank/) store their pairs here.

A ``PairedItem`` carries every prompt variant of one pair member; each variant becomes its own
Item (same pair id and role, its own ``variant``, prompt and answer words), so models score every
phrasing as ordinary items and a participant sees one (``study.settings["human_variant"]``).
A perturbed item is linked to its original of the same variant (``Item.original``).

Everything is validated before anything is written — pairing (``link_pairs``), codes, originals,
variants — and a refusal raises ValidationError naming every problem, with nothing written.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from django.core.exceptions import ValidationError
from django.db import transaction

from ..item_limits import length_errors
from logic.pairs import PairedItem, PairingError, PromptVariant, gold_by_role, link_pairs, perturbation_links
from ..models import Item, Study
from .. import design_registry as registry
from ..design_registry import Preview
from .storage import BULK_BATCH, insert_items, refuse_if_locked

HUMAN_VARIANT = "human_variant"  # study.settings key: the variant id participants see
YES_NO = ("Yes", "No")
MAX_PROBLEMS = 20


@dataclass(frozen=True)
class PairedReport:
    study: Study
    design: str
    pairs: int
    items: int  # Item rows written (members × variants)
    variants: tuple[str, ...]
    condition: str = "real"
    replaced: int = 0
    source: str = ""  # the published format it was imported from ('' when generated or from a bank)
    left_out: tuple = ()  # sources.Problem of the rows left out (skip_problems)


def item_code(paired_code: str, variant_id: str) -> str:
    """The Item code of one variant of a pair member: '<member code>#<variant id>'."""
    return f"{paired_code}#{variant_id}"


def answer_words(variant: PromptVariant) -> dict[str, str]:
    """{} for the Yes/No phrasings (the model's default answers), else the words meaning yes and no."""
    if (variant.positive, variant.negative) == YES_NO:
        return {}
    return {"yes": variant.positive, "no": variant.negative}


def choose_variants(available: Sequence[str], wanted: Sequence[str] | str | None) -> tuple[str, ...]:
    """'all' / None → every variant; else the named ones, in the generator's order."""
    if wanted is None or wanted == "all" or list(wanted) == ["all"]:
        return tuple(available)
    wanted = list(wanted)
    unknown = [w for w in wanted if w not in available]
    if unknown or not wanted:
        raise ValidationError(
            f"Unknown prompt variant(s) {unknown or wanted}; choose 'all' or some of: {', '.join(available)}."
        )
    return tuple(v for v in available if v in wanted)


def member_values(paired: PairedItem) -> dict:
    """The Item fields a pair member gives every one of its variants (the one rulebook of a member's row:
    _row, and paired_batches' rows written without model instances)."""
    attrs = dict(paired.attributes)
    return dict(
        design=paired.design, form_id=paired.form_id, logical_form=str(attrs.get("logical_form", "")),
        gold_answer=paired.gold_answer, premises=list(paired.premises), condition=paired.condition,
        pair_id=paired.pair_id, pair_role=paired.role,
        attributes={**attrs, "rule": paired.rule, "conclusion": paired.conclusion, "member": paired.code},
    )


def variant_values(paired: PairedItem, variant: PromptVariant) -> dict:
    """The Item fields of one variant of a member (besides member_values)."""
    return dict(code=item_code(paired.code, variant.variant_id), question=variant.question, prompt=variant.text,
                variant=variant.variant_id, answer_words=answer_words(variant))


def _row(study: Study, paired: PairedItem, variant: PromptVariant, original_id: int | None) -> Item:
    return Item(study=study, original_id=original_id, **member_values(paired), **variant_values(paired, variant))


def _problems(study: Study, items: Sequence[PairedItem], chosen: Sequence[str], before=None
              ) -> list[str]:
    """Every problem of pair members about to be stored; `before` (paired_batches.Before, a batched import):
    the study's items from before it, instead of querying the study as it is now."""
    problems: list[str] = []
    try:
        link_pairs(items)
    except PairingError as exc:
        problems.append(str(exc))
    seen: set[str] = set()
    for item in items:
        if item.code in seen:
            problems.append(f"item {item.code} appears twice")
        seen.add(item.code)
        gold = gold_by_role()
        if gold.get(item.role) not in (None, item.gold_answer):
            problems.append(f"item {item.code}: a '{item.role}' has gold answer {gold[item.role]!r}, "
                            f"not {item.gold_answer!r}")
        ids = [v.variant_id for v in item.variants]
        missing = [v for v in chosen if v not in ids]
        if missing:
            problems.append(f"item {item.code} lacks the prompt variant(s) {missing}")
    codes = [item_code(i.code, v) for i in items for v in chosen]
    taken = set()  # .order_by(): Item's ordering by study joins Study, and the (study, code) index goes unused
    if before is None or before.any_items:
        taken = set(Item.objects.filter(study=study, code__in=codes).order_by().values_list("code", flat=True))
    if taken:
        problems.append(f"the study already has {len(taken)} of these items (e.g. {sorted(taken)[0]})")
    pair_ids = {i.pair_id for i in items}
    if before is None:
        clash = set(Item.objects.filter(study=study, pair_id__in=pair_ids).order_by()
                    .values_list("pair_id", flat=True))
    else:
        clash = pair_ids & before.pair_ids
    if clash:
        problems.append(f"the study already has {len(clash)} of these pair ids (e.g. {sorted(clash)[0]})")
    return problems


def _originals(study: Study, items: Sequence[PairedItem], chosen: Sequence[str]) -> tuple[dict[str, int], list[str]]:
    """(Item code → pk of every original a perturbed item names, problems)."""
    perturbed = [i for i in items if i.original_code is not None]
    if not perturbed:
        return {}, []
    wanted = {item_code(i.original_code, v) for i in perturbed for v in chosen}
    found = dict(Item.objects.filter(study=study, code__in=wanted).values_list("code", "pk"))

    @dataclass(frozen=True)
    class Known:
        code: str

    present = {code.rsplit("#", 1)[0] for code in found}
    problems = []
    try:
        perturbation_links([Known(c) for c in present], perturbed)
    except PairingError as exc:
        problems.append(str(exc))
    missing = sorted(wanted - set(found))
    if missing and not problems:
        problems.append(f"{len(missing)} original item(s) lack a variant the perturbation asks for (e.g. {missing[0]})")
    return found, problems


def _plan(study: Study, items: tuple[PairedItem, ...], variants,
          refuse=refuse_if_locked) -> tuple[tuple[str, ...], dict[str, int]]:
    """(the chosen variants, Item code → pk of the originals) once every check passes (reads only);
    ValidationError naming every problem otherwise. `refuse(study)`: the rule on the study's answers
    (storage.refuse_if_answered for perturbed copies, which change no item there is)."""
    refuse(study)
    if not items:
        raise ValidationError("There are no items to store.")
    designs = {i.design for i in items}
    conditions = {i.condition for i in items}
    if len(designs) != 1 or len(conditions) != 1:
        raise ValidationError(f"Store one design and condition at a time (got {sorted(designs)}, {sorted(conditions)}).")
    chosen = choose_variants([v.variant_id for v in items[0].variants], variants)
    problems = _problems(study, items, chosen)
    originals, more = _originals(study, items, chosen)
    problems += more
    for paired in items:  # every text within its column's length (a longer one: DataError on PostgreSQL)
        by_id = {v.variant_id: v for v in paired.variants}
        rows = [(0, _row(study, paired, by_id[v], None)) for v in chosen if v in by_id]
        problems += [f"{paired.code}: {e.column} {e.message}" for e in length_errors(rows, {})]
    if problems:
        shown = problems[:MAX_PROBLEMS] + ([f"… and {len(problems) - MAX_PROBLEMS} more"] if len(problems) > MAX_PROBLEMS else [])
        raise ValidationError("Nothing was stored: " + "; ".join(shown))
    return chosen, originals


def paired_items_preview(*, study: Study, items: Iterable[PairedItem], variants: Sequence[str] | str | None = "all",
                         rows: int = 10) -> Preview:
    """What paired_items_store would write (the same checks), without writing: the count and the first rows."""
    items = tuple(items)
    chosen, originals = _plan(study, items, variants)
    shown = []
    for paired in items:
        by_id = {v.variant_id: v for v in paired.variants}
        for variant_id in chosen:
            if len(shown) >= rows:
                break
            original = (originals[item_code(paired.original_code, variant_id)]
                        if paired.original_code is not None else None)
            shown.append(_row(study, paired, by_id[variant_id], original))
    return Preview(count=len(items) * len(chosen), items=shown)


@transaction.atomic
def paired_items_store(
    *, study: Study, items: Iterable[PairedItem], variants: Sequence[str] | str | None = "all",
    refuse=refuse_if_locked,
) -> PairedReport:
    """Store pair members, one Item per chosen variant; all or nothing."""
    items = tuple(items)
    study = Study.objects.select_for_update().get(pk=study.pk)
    chosen, originals = _plan(study, items, variants, refuse)
    designs, conditions = {i.design for i in items}, {i.condition for i in items}  # one each (_plan)
    created, batch, done = 0, [], {}
    for paired in items:
        by_id = {v.variant_id: v for v in paired.variants}
        for variant_id in chosen:
            original = None
            if paired.original_code is not None:
                original = originals[item_code(paired.original_code, variant_id)]
            batch.append(_row(study, paired, by_id[variant_id], original))
            if len(batch) >= BULK_BATCH:
                created += insert_items(batch, done)
                batch = []
    created += insert_items(batch, done)
    settings = dict(study.settings or {})
    if settings.get(HUMAN_VARIANT) not in paired_variants(study=study):
        first = items[0].variants
        yes_no = [v.variant_id for v in first if v.variant_id in chosen and not answer_words(v)]
        settings[HUMAN_VARIANT] = (yes_no or list(chosen))[0]  # people answer with Yes/No keys
    study.settings = settings
    if registry.is_generic(study.design) and not study.items.exclude(design__in=designs).exists():
        study.design = next(iter(designs))
    study.save(update_fields=["settings", "design", "updated_at"])
    return PairedReport(study=study, design=next(iter(designs)), pairs=len({i.pair_id for i in items}),
                        items=created, variants=chosen, condition=next(iter(conditions)))


def paired_variants(*, study: Study) -> set[str]:
    return set(study.items.exclude(pair_id="").order_by().values_list("variant", flat=True).distinct())


def human_variant_problem(*, study: Study, variant: str) -> str:
    """Why participants cannot see `variant` ('' when they can): it must be one of the study's prompt
    variants and ask for Yes/No (participants answer with the Yes/No keys)."""
    available = paired_variants(study=study)
    if variant not in available:
        return f"'{variant}' is not one of the study's prompt variants: {', '.join(sorted(available)) or 'none'}."
    words = study.items.filter(variant=variant).exclude(answer_words={}).values_list("answer_words", flat=True).first()
    if words:
        return (f"'{variant}' asks for {words['yes']}/{words['no']}, but participants answer with the Yes/No keys; "
                "choose a Yes/No phrasing.")
    return ""


def human_variant_set(*, study: Study, variant: str) -> Study:
    """Choose the prompt variant participants see (one of the study's variants)."""
    problem = human_variant_problem(study=study, variant=variant)
    if problem:
        raise ValidationError(problem)
    study.settings = {**(study.settings or {}), HUMAN_VARIANT: variant}
    study.save(update_fields=["settings", "updated_at"])
    return study
