"""python manage.py generate_items DESIGN [STUDY | --study SLUG] [options]

003's designs:   [--interpretations N] [--seed S] [--nonsense] [--system S5] [--consequence paper|local|global]
                 [--paper-lexicon] [--export items.csv]
rulebreakers:    [--pairs N] [--seed S] [--rules MT DS] [--entity-kinds geographical categorical]
                 [--names-per-combination 5] [--variants all | ID ...]
any design:      [--perturb names|entities|nonsense|mapping:FILE.csv] [--perturb-seed S] [--perturb-label L]
"""
from __future__ import annotations

import time
from pathlib import Path

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from experiments import paired_services, perturb_services, selectors, services
from experiments.item_csv import write_items_csv
from experiments.logic import perturb, rulebreakers
from experiments.logic.csv_table import CsvImportError
from experiments.logic.designs import DESIGNS
from experiments.models import LogicSystem

PAIRED = (rulebreakers.DESIGN,)


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
        parser.add_argument("design", choices=sorted([*DESIGNS, *PAIRED]))
        parser.add_argument("study_slug", nargs="?", metavar="STUDY", help="study slug (or --study)")
        parser.add_argument("--study", help="study slug (a new study is created if none has it)")
        parser.add_argument("--title", help="title for a new study")
        parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
        parser.add_argument("--replace", action="store_true", help="regenerate a design the study already has")
        parser.add_argument("--export", metavar="CSV", help="also write the study's items of this design to a CSV file")
        group = parser.add_argument_group("003's designs")
        group.add_argument("--interpretations", type=int, default=1000, help="number of interpretations (default 1000)")
        group.add_argument("--nonsense", action="store_true", help="also generate the nonsense mirror of every item")
        group.add_argument("--system", choices=LogicSystem.values, help="modal logic for the checker (default: the study's, S5)")
        group.add_argument("--paper-lexicon", action="store_true",
                           help="draw from the first 200 names and 204 verb phrases (003 §3.4's counts) instead of "
                                "all 336 names and 283 verb phrases")
        group.add_argument("--consequence", choices=("paper", "local", "global"),
                           help="consequence relation that keys the items (default: the study's, 'paper': global for "
                                "Appendix C.1's necessitation, local otherwise); each item stores the other's answer too")
        group = parser.add_argument_group("rulebreakers (seed 000)")
        group.add_argument("--pairs", type=int, help="keep a random subset of this many pairs (default: the full design)")
        group.add_argument("--rules", nargs="+", default=list(rulebreakers.RULES), metavar="RULE",
                           help="MT and/or DS (default both)")
        group.add_argument("--entity-kinds", nargs="+", default=list(rulebreakers.ENTITY_KINDS), metavar="KIND",
                           help="geographical and/or categorical (default both)")
        group.add_argument("--names-per-combination", type=int, default=rulebreakers.NAMES_PER_COMBINATION)
        group.add_argument("--variants", nargs="+", default=["all"], metavar="ID",
                           help="prompt variants to store: all (default) or ids such as follow/yes-no entail/true-false")
        group = parser.add_argument_group("perturbation (seed 002), any design")
        group.add_argument("--perturb", metavar="KIND", help="names, entities, nonsense or mapping:FILE.csv")
        group.add_argument("--perturb-seed", type=int, default=0)
        group.add_argument("--perturb-label", help="condition label of the perturbed items (default: the kind)")
        group.add_argument("--perturb-only", action="store_true",
                           help="only add the perturbation to the study's existing items (no generation)")

    def handle(self, *args, design, study_slug, study, title, system, export, **options):
        slug = study_slug or study
        if not slug or (study_slug and study and study_slug != study):
            raise CommandError("Name one study: generate_items DESIGN STUDY (or --study SLUG).")
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
                        slug=slug, title=title or slug.replace("-", " ").title(), design=design,
                        logic_system=system or LogicSystem.S5,
                    )
                report = None
                if not options["perturb_only"]:
                    report = self._generate(design, target, system, options)
                perturbed = None
                if kind:
                    perturbed = perturb_services.items_perturb(
                        study=target, kind=kind, seed=options["perturb_seed"], mapping=mapping,
                        label=options["perturb_label"], designs=(design,),
                    )
        except ValidationError as exc:
            raise CommandError(" ".join(exc.messages)) from None
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        elapsed = time.perf_counter() - started
        if created:
            self.stdout.write(f"Created study '{target.slug}'.")
        if report is not None:
            self._say(design, report, options, elapsed)
        if perturbed is not None:
            self.stdout.write(self.style.SUCCESS(
                f"Added {perturbed.items} perturbed items ('{perturbed.label}', {perturbed.kind}), each linked to "
                "its original."
            ))
        if export:
            with open(export, "w", newline="", encoding="utf-8") as handle:
                count = write_items_csv(handle, selectors.items_for_export(study=target, design=design))
            self.stdout.write(f"Wrote {count} items to {export}.")

    def _generate(self, design, target, system, options):
        if design == rulebreakers.DESIGN:
            return paired_services.rulebreakers_generate(
                study=target, pairs=options["pairs"], seed=options["seed"], rules=options["rules"],
                entity_kinds=options["entity_kinds"], names_per_combination=options["names_per_combination"],
                variants=options["variants"], replace=options["replace"],
            )
        return services.items_generate(
            study=target, design=design, interpretations=options["interpretations"], seed=options["seed"],
            nonsense=options["nonsense"], system=system, consequence=options.get("consequence"),
            lexicon="paper" if options.get("paper_lexicon") else None,
            replace=options["replace"],
        )

    def _say(self, design, report, options, elapsed):
        if report.replaced:
            self.stdout.write(f"Replaced {report.replaced} earlier items.")
        if design == rulebreakers.DESIGN:
            self.stdout.write(self.style.SUCCESS(
                f"Generated {report.pairs} pairs of '{design}' into '{report.study.slug}': {report.items} items "
                f"({len(report.variants)} prompt variant(s) each; participants see "
                f"'{report.study.settings.get(paired_services.HUMAN_VARIANT)}') in {elapsed:.1f} s."
            ))
            return
        self.stdout.write(self.style.SUCCESS(
            f"Generated {report.items} items ({report.interpretations} interpretations"
            f"{' + nonsense mirror' if options['nonsense'] else ''}) of '{design}' into '{report.study.slug}' "
            f"under {report.system}, keyed by {report.consequence_text()} in {elapsed:.1f} s."
        ))
        for line in report.disagreement_lines():
            self.stderr.write(self.style.WARNING(f"WARNING checker disagrees with the template: {line}"))
        if report.disagreements:
            self.stderr.write(self.style.WARNING(
                "Those items carry the checker's gold answer; filter them in admin with "
                "'checker disagrees'."
            ))
