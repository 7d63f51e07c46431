"""python manage.py import_items [yes-no] FILE.csv [STUDY | --study SLUG] [--factors COLUMN …]
python manage.py import_items dual-sided FILE.csv [STUDY | --study SLUG] [--templates 1 2 3 4 5]
python manage.py import_items multiple-choice FILE.csv [STUDY | --study SLUG]

KIND is any imported design of the registry (experiments/designs/catalog.py); "yes-no" names the
yes/no bank (design csv-import).

yes-no (the default): a yes/no item bank, columns in experiments/item_csv.py.
dual-sided: a rule bank of seed 004 (premise, conclusion, flipped_conclusion, optional rule_id,
length and descriptive columns; see experiments/logic/dual_sided.py); each rule gives an original
(gold yes) and a flipped (gold no) item under each chosen template of Table 9.
Every error names its row and column; nothing is written when any row is wrong.
"""
from __future__ import annotations

from pathlib import Path

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from experiments import designs, selectors, services
from experiments.item_csv import CsvImportError
from experiments.models import LogicSystem

YES_NO = "yes-no"  # the yes/no bank's name on the command line
KINDS = (YES_NO, *(d.name for d in designs.imported() if not d.generic))


def _design(kind: str) -> designs.Design:
    if kind == YES_NO:  # the generic yes/no bank (the registry's one generic design)
        return next(d for d in designs.imported() if d.generic)
    return designs.get(kind)


class Command(BaseCommand):
    help = "Import a yes/no item bank or a dual-sided rule bank (seed 004) from CSV. All rows or none."

    def add_arguments(self, parser):
        parser.add_argument("arguments", nargs="+", metavar="[KIND] FILE.csv [STUDY]",
                            help=f"KIND is one of {', '.join(KINDS)} (default yes-no)")
        parser.add_argument("--study", help="study slug (created if missing)")
        parser.add_argument("--title", help="title for a new study")
        parser.add_argument("--system", choices=LogicSystem.values, default=LogicSystem.S5,
                            help="modal logic for rows with a logical_form (new study only; default S5)")
        parser.add_argument("--templates", nargs="+", type=int, default=[1, 2, 3, 4, 5], metavar="N",
                            help="dual-sided: Table 9's templates to use (default 1 2 3 4 5)")
        parser.add_argument("--factors", nargs="+", default=None, metavar="COLUMN",
                            help="yes-no: the bank's factor columns (e.g. modality, or a descriptive column); Table 1 "
                                 "and the humans-vs-models model are by these (stored in the study's settings)")

    def handle(self, *args, arguments, study, title, system, templates, factors, **options):
        kind, rest = ("yes-no", arguments)
        if arguments[0] in KINDS:
            kind, rest = arguments[0], arguments[1:]
        if not rest or len(rest) > 2:
            raise CommandError("Usage: import_items [KIND] FILE.csv [STUDY] (or --study SLUG).")
        csv = Path(rest[0])
        slug = rest[1] if len(rest) == 2 else study
        if not slug or (len(rest) == 2 and study and study != rest[1]):
            raise CommandError("Name one study: import_items [KIND] FILE.csv STUDY (or --study SLUG).")
        if not csv.is_file():
            raise CommandError(f"{csv}: no such file")
        design = _design(kind)
        declared = {o.name for o in design.options}
        options = {"templates": templates} if "templates" in declared else {}
        if factors:
            if "factors" not in declared:
                raise CommandError(f"--factors is for the yes-no bank; {kind} declares its own factors.")
            options["factors"] = factors
        try:
            with transaction.atomic():  # a failed import leaves no new study behind either
                target = selectors.study_by_slug(slug=slug)
                if target is None:
                    target = services.study_create(slug=slug, title=title or slug, design=design.name,
                                                   logic_system=system)
                report = design.make(study=target, data=csv.read_bytes(), **options)
        except CsvImportError as exc:
            raise CommandError(f"{csv}: {exc}") from None
        except ValidationError as exc:
            raise CommandError(" ".join(exc.messages)) from None
        self.stdout.write(self.style.SUCCESS(design.describe(report)))
