"""python manage.py generate_items DESIGN [STUDY | --study SLUG] [options]

DESIGN is any generated design of the registry (designs/<family>/design.py); its options are
the registry's, as flags:
003's designs:   [--interpretations N] [--seed S] [--nonsense] [--system S5] [--consequence paper|local|global]
                 [--paper-lexicon] [--replace]
rulebreakers:    [--pairs N] [--seed S] [--rules MT DS] [--entity-kinds geographical categorical]
                 [--names-per-combination 5] [--variants all | ID ...] [--replace]
any design:      [--perturb names|entities|nonsense|mapping:FILE.csv] [--perturb-seed S] [--perturb-label L]
                 [--export items.csv]
"""
from __future__ import annotations

import time
from pathlib import Path

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from experiments import design_registry as registry
from experiments import selectors, services
from experiments.items import perturbing
from experiments.item_csv import write_items_csv
from experiments.management.team_option import add_team_argument, check_team, team_named
from logic import perturb
from logic.csv_table import CsvImportError
from experiments.models import LogicSystem, Study


def _help(option) -> str:
    """An option's help; one that defaults to a study field says so, and that field's default for a new study."""
    if not option.study_field:
        return option.help
    field = Study._meta.get_field(option.study_field)
    return f"{option.help} (default: the study's {field.verbose_name}; a new study's is {field.default})"


def add_design_options(parser, chosen, options=lambda design: design.options) -> None:
    """Each design's options (`options(design)`: its generation's, or its import's) as flags (an option several
    designs share is added once)."""
    added = set()
    for design in chosen:
        group = parser.add_argument_group(f"{design.name} (seed {design.paper})")
        for option in options(design):
            if option.name in added:
                continue
            added.add(option.name)
            kwargs = {"dest": option.name, "help": _help(option)}
            if option.kind is bool:
                group.add_argument(option.flag, action="store_true", **kwargs)
            elif option.kind is list:
                group.add_argument(option.flag, nargs="+", type=option.item, metavar=option.name.upper(), **kwargs)
            else:
                group.add_argument(option.flag, type=option.kind, choices=option.choices or None, **kwargs)


def parse_perturbation(value: str | None) -> tuple[str | None, perturb.TokenMapping | None]:
    """'names' → ('names', None); 'mapping:FILE.csv' → ('mapping', the file's mapping)."""
    if not value:
        return None, None
    kind, _, path = value.partition(":")
    if kind not in perturb.KINDS:
        raise CommandError(f"--perturb {value!r}: choose names, entities, nonsense or mapping:FILE.csv")
    if kind == "mapping":
        if not path or not Path(path).is_file():
            raise CommandError(f"--perturb mapping:FILE.csv needs an existing file (got {path!r})")
        try:
            return kind, perturb.parse_mapping_csv(Path(path).read_bytes())
        except CsvImportError as exc:
            raise CommandError(f"{path}: {exc}") from None
    if path:
        raise CommandError(f"--perturb {kind} takes no file")
    return kind, None


class Command(BaseCommand):
    help = ("Generate a design's items into a study (created if missing): 003's designs (gold answers from "
            "the model checker) or RULEBREAKERS (seed 000); optionally add a perturbation (seed 002).")

    def add_arguments(self, parser):
        parser.add_argument("design", choices=[d.name for d in registry.generated()])
        parser.add_argument("study_slug", nargs="?", metavar="STUDY", help="study slug (or --study)")
        parser.add_argument("--study", help="study slug (a new study is created if none has it)")
        parser.add_argument("--title", help="title for a new study")
        add_team_argument(parser)
        parser.add_argument("--export", metavar="CSV", help="also write the study's items of this design to a CSV file")
        add_design_options(parser, registry.generated())
        group = parser.add_argument_group("perturbation (seed 002), any design")
        group.add_argument("--perturb", metavar="KIND", help="names, entities, nonsense or mapping:FILE.csv")
        group.add_argument("--perturb-seed", type=int, default=0)
        group.add_argument("--perturb-label", help="condition label of the perturbed items (default: the kind)")
        group.add_argument("--perturb-only", action="store_true",
                           help="only add the perturbation to the study's existing items (no generation)")

    def handle(self, *args, design, study_slug, study, title, export, team=None, **options):
        design = registry.get(design)
        team = team_named(team)
        slug = study_slug or study
        if not slug or (study_slug and study and study_slug != study):
            raise CommandError("Name one study: generate_items DESIGN STUDY (or --study SLUG).")
        given = {name: value for name, value in options.items() if value is not None}
        foreign = sorted(name for name, value in given.items() if value not in (False, [])
                         and name in {o.name for d in registry.generated() for o in d.options}
                         and name not in {o.name for o in design.options})
        if foreign:
            raise CommandError(f"{design.name} takes no {', '.join('--' + n.replace('_', '-') for n in foreign)}.")
        kind, mapping = parse_perturbation(options["perturb"])
        if options["perturb_only"] and not kind:
            raise CommandError("--perturb-only needs --perturb KIND.")
        started = time.perf_counter()
        try:
            with transaction.atomic():  # a refused generation leaves no new study behind
                target = selectors.study_by_slug(slug=slug)
                created = target is None
                if created:
                    target = services.study_create(
                        slug=slug, title=title or slug.replace("-", " ").title(), design=design.name,
                        logic_system=options.get("system") or LogicSystem.S5, team=team,
                    )
                else:
                    check_team(target, team)
                report = None
                if not options["perturb_only"]:
                    report = design.make(study=target, **design.option_values(given))
                perturbed = None
                if kind:
                    perturbed = perturbing.items_perturb(
                        study=target, kind=kind, seed=options["perturb_seed"], mapping=mapping,
                        label=options["perturb_label"], designs=(design.name,),
                    )
        except ValidationError as exc:
            raise CommandError(" ".join(exc.messages)) from None
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        elapsed = time.perf_counter() - started
        if created:
            self.stdout.write(f"Created study '{target.slug}'.")
        if report is not None:
            if report.replaced:
                self.stdout.write(f"Replaced {report.replaced} earlier items.")
            self.stdout.write(self.style.SUCCESS(f"{design.describe(report)[:-1]} in {elapsed:.1f} s."))
            for line in design.warnings(report):
                self.stderr.write(self.style.WARNING(f"WARNING {line}"))
        if perturbed is not None:
            self.stdout.write(self.style.SUCCESS(
                f"Added {perturbed.items} perturbed items ('{perturbed.label}', {perturbed.kind}), each linked to "
                "its original."
            ))
        if export:
            with open(export, "w", newline="", encoding="utf-8") as handle:
                count = write_items_csv(handle, selectors.items_for_export(study=target, design=design.name))
            self.stdout.write(f"Wrote {count} items to {export}.")
