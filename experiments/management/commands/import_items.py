"""python manage.py import_items [yes-no] FILE.csv [STUDY | --study SLUG] [--factors COLUMN …]
python manage.py import_items dual-sided FILE.csv [STUDY | --study SLUG] [--templates 1 2 3 4 5] [--factors …]
python manage.py import_items multiple-choice FILE.csv [STUDY | --study SLUG]
python manage.py import_items KIND FILE STUDY --format NAME [--skip-problems]
python manage.py import_items rulebreakers RULEBREAKERS_finegrained_format.csv STUDY

KIND is any design of the registry that takes a file (designs/<family>/design.py); "yes-no" names
the yes/no bank (design csv-import). A design's import options are the registry's (`Design.import_options`), as
flags (--templates, --variants …), as generate_items takes a generated design's.

yes-no (the default): a yes/no item bank, columns in experiments/item_csv.py.
dual-sided: a rule bank of seed 004 (premise, conclusion, flipped_conclusion, optional rule_id,
length and descriptive columns; see designs/paired/dual_sided.py); each rule gives an original
(gold yes) and a flipped (gold no) item under each chosen template of Table 9.
--format names a published format the design reads (experiments/items/sources/: ulogic-json
for dual-sided, logiqa-text for multiple-choice, rulebreakers-finegrained for rulebreakers, which
reads no bank and takes it by default); "bank" names the design's own CSV columns (the default where
it has them). Rows of a published format that cannot be read or transformed are listed by id and
refuse the import; --skip-problems writes the others and lists those left out.
--factors COLUMN … works for every design (docs/designs.md): the names are checked against the
imported items' fields and descriptive columns and stored in the study's settings, in the import's
transaction (a wrong name imports nothing).
Every error names its row and column; nothing is written when any row is wrong.
"""
from __future__ import annotations

import inspect
import time
from pathlib import Path

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from experiments import design_registry as registry
from experiments import selectors, services
from experiments.items import sources
from experiments.factors import SETTING, validate
from experiments.item_csv import CsvImportError
from experiments.management.team_option import add_team_argument, check_team, team_named
from experiments.models import LogicSystem

from .generate_items import add_design_options

YES_NO = "yes-no"  # the yes/no bank's name on the command line
KINDS = (YES_NO, *(d.name for d in registry.importable() if not d.generic))
FACTORS = "factors"  # --factors works for every design (the bank's own option where it declares one)


def _import_options(design: registry.Design) -> tuple:
    """A design's import options taken as flags of their own (--factors aside: every design takes it)."""
    return tuple(o for o in design.import_options if o.name != FACTORS)


def _design(kind: str) -> registry.Design:
    if kind == YES_NO:  # the generic yes/no bank (the registry's one generic design)
        return registry.generic_bank()
    return registry.get(kind)


def _known_kinds() -> str:
    return ", ".join(KINDS)


def _format(kind: str, design: registry.Design, named: str | None) -> str:
    """The format to read: the one named (checked against the design's), else the design's default."""
    if named is None:
        return design.default_format
    known = design.import_formats
    if named in known:
        return named
    try:
        other = sources.get(named).design
    except ValueError:
        every = ", ".join(r.name for r in sources.all_readers())
        raise CommandError(f"Unknown format '{named}'. {kind} reads: {', '.join(known)}. "
                           f"Every published format: {every}.") from None
    raise CommandError(f"The format '{named}' reads into {other}, not {kind}; {kind} reads: {', '.join(known)}.")


def _store_factors(study, names) -> None:
    """The factors checked against every item of the study (the ones just imported among them) and
    stored in its settings, as the admin's upload form does for any design (ValueError naming the
    columns there are)."""
    study.refresh_from_db(fields=["settings"])
    study.settings = {**(study.settings or {}), SETTING: validate(study, names)}
    study.save(update_fields=["settings", "updated_at"])


class Command(BaseCommand):
    def _printer(self, every: float = 5.0):
        """on_progress for a streamed import: a line at most every `every` seconds and after the last batch
        (rows read, items written, rate, time left); the import is one transaction, so a refusal or an
        interruption rolls it back whole."""
        from experiments.items.paired_batches import Progress

        progress, last = Progress(), [None]

        def printed(meter) -> None:
            now = time.monotonic()
            finished = bool(meter.total_bytes) and meter.bytes_read >= meter.total_bytes  # the last batch
            if last[0] is None or now - last[0] >= every or finished:
                last[0] = now
                self.stdout.write(f"Importing: {progress.text(meter)}")
        return printed

    help = ("Import items from a file: a yes/no bank, a dual-sided rule bank (seed 004), a multiple-choice "
            "bank, or a published dataset in its own format (--format). All rows or none.")

    def add_arguments(self, parser):
        parser.add_argument("arguments", nargs="+", metavar="[KIND] FILE [STUDY]",
                            help=f"KIND is one of {_known_kinds()} (default yes-no)")
        parser.add_argument("--study", help="study slug (created if missing)")
        parser.add_argument("--title", help="title for a new study")
        add_team_argument(parser)
        parser.add_argument("--format", dest="format_name", metavar="NAME",
                            help="the file's format: 'bank' (the design's own CSV columns) or a published format "
                                 f"({', '.join(r.name for r in sources.all_readers())}); default: the kind's")
        parser.add_argument("--skip-problems", action="store_true",
                            help="a published format: write the rows that can be read and list those left out")
        parser.add_argument("--system", choices=LogicSystem.values, default=LogicSystem.S5,
                            help="modal logic for rows with a logical_form (new study only; default S5)")
        parser.add_argument("--factors", nargs="+", default=None, metavar="COLUMN",
                            help="any design: the bank's factor columns (e.g. modality, pair_role, or a descriptive "
                                 "column such as domain); Table 1 and the humans-vs-models model are by these (stored "
                                 "in the study's settings; a name the imported items lack imports nothing)")
        add_design_options(parser, registry.importable(), options=_import_options)

    def handle(self, *args, arguments, study, title, format_name, skip_problems, system, factors, team=None,
               **options):
        team = team_named(team)
        kind, rest = (YES_NO, arguments)
        if arguments[0] in KINDS:
            kind, rest = arguments[0], arguments[1:]
        elif len(arguments) == 3 or (len(arguments) == 2 and not Path(arguments[0]).is_file()
                                     and Path(arguments[1]).is_file()):
            raise CommandError(f"Unknown kind '{arguments[0]}'; known kinds: {_known_kinds()}.")
        if not rest or len(rest) > 2:
            raise CommandError("Usage: import_items [KIND] FILE [STUDY] (or --study SLUG).")
        path = Path(rest[0])
        slug = rest[1] if len(rest) == 2 else study
        if not slug or (len(rest) == 2 and study and study != rest[1]):
            raise CommandError("Name one study: import_items [KIND] FILE STUDY (or --study SLUG).")
        if not path.is_file():
            raise CommandError(f"{path}: no such file")
        design = _design(kind)
        chosen = _format(kind, design, format_name)
        published = chosen != sources.BANK
        declared = {o.name for o in design.import_options}
        flagged = {o.name for d in registry.importable() for o in _import_options(d)}
        values = {name: value for name, value in options.items() if name in flagged and value is not None}
        foreign = sorted(name for name, value in values.items() if name not in declared and value not in (False, []))
        if foreign:
            raise CommandError(f"{kind} takes no {', '.join('--' + n.replace('_', '-') for n in foreign)}.")
        values = {name: value for name, value in values.items() if name in declared}
        bank_factors = []  # a design without a factors option: checked against the imported items, then stored
        if factors:
            if FACTORS in declared:
                values["factors"] = factors
            else:
                bank_factors = factors
        if published:
            values.update(format=chosen, skip_problems=skip_problems, filename=path.name)
            if "on_progress" in inspect.signature(design.importer).parameters:  # a streamed import
                values["on_progress"] = self._printer()
        elif skip_problems:
            raise CommandError("--skip-problems is for a published format (--format); a bank imports all rows or none.")
        started = time.monotonic()
        try:
            with transaction.atomic():  # a failed import leaves no new study behind either
                target = selectors.study_by_slug(slug=slug)
                if target is None:
                    target = services.study_create(slug=slug, title=title or slug, design=design.name,
                                                   logic_system=system, team=team)
                else:
                    check_team(target, team)
                if published:  # a published file is read a line at a time (sources/), never whole
                    with path.open("rb") as handle:
                        report = design.importer(study=target, data=handle, **values)
                else:
                    report = design.importer(study=target, data=path.read_bytes(), **values)
                if bank_factors:
                    _store_factors(target, bank_factors)
        except CsvImportError as exc:
            raise CommandError(f"{path}: {exc}") from None
        except sources.RowProblems as exc:
            raise CommandError(f"{path}: " + "\n  ".join(exc.messages)) from None
        except ValidationError as exc:
            raise CommandError(" ".join(exc.messages)) from None
        except ValueError as exc:  # a factor the items lack (experiments/factors.py); the transaction undid the import
            raise CommandError(f"{exc} Nothing was imported.") from None
        self.stdout.write(self.style.SUCCESS(design.describe(report)))
        if "on_progress" in values:
            self.stdout.write(f"Read and written in {time.monotonic() - started:.1f} s, as one transaction.")
        for line in design.warnings(report):
            self.stdout.write(self.style.WARNING(line))
