"""python manage.py generate_items DESIGN --study SLUG [--interpretations N] [--seed S] [--nonsense]
[--system S5] [--export items.csv]"""
from __future__ import annotations

import time

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from experiments import selectors, services
from experiments.item_csv import write_items_csv
from experiments.logic.designs import DESIGNS
from experiments.models import LogicSystem


class Command(BaseCommand):
    help = "Generate a design's items into a study (created if missing); gold answers come from the model checker."

    def add_arguments(self, parser):
        parser.add_argument("design", choices=sorted(DESIGNS))
        parser.add_argument("--study", required=True, help="study slug (a new study is created if none has it)")
        parser.add_argument("--title", help="title for a new study")
        parser.add_argument("--interpretations", type=int, default=1000, help="number of interpretations (default 1000)")
        parser.add_argument("--seed", type=int, default=0, help="random seed for the interpretations (default 0)")
        parser.add_argument("--nonsense", action="store_true", help="also generate the nonsense mirror of every item")
        parser.add_argument("--system", choices=LogicSystem.values, help="modal logic for the checker (default: the study's, S5)")
        parser.add_argument("--replace", action="store_true", help="regenerate a design the study already has")
        parser.add_argument("--export", metavar="CSV", help="also write the study's items of this design to a CSV file")

    def handle(self, *args, design, study, title, interpretations, seed, nonsense, system, replace, export, **options):
        started = time.perf_counter()
        try:
            with transaction.atomic():  # a refused generation leaves no new study behind
                target = selectors.study_by_slug(slug=study)
                created = target is None
                if created:
                    target = services.study_create(
                        slug=study, title=title or study.replace("-", " ").title(), design=design,
                        logic_system=system or LogicSystem.S5,
                    )
                report = services.items_generate(
                    study=target, design=design, interpretations=interpretations, seed=seed,
                    nonsense=nonsense, system=system, replace=replace,
                )
        except ValidationError as exc:
            raise CommandError(" ".join(exc.messages)) from None
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        elapsed = time.perf_counter() - started
        if created:
            self.stdout.write(f"Created study '{target.slug}'.")
        if report.replaced:
            self.stdout.write(f"Replaced {report.replaced} earlier items.")
        self.stdout.write(self.style.SUCCESS(
            f"Generated {report.items} items ({report.interpretations} interpretations"
            f"{' + nonsense mirror' if nonsense else ''}) of '{design}' into '{report.study.slug}' "
            f"under {report.system} in {elapsed:.1f} s."
        ))
        for line in report.disagreement_lines():
            self.stderr.write(self.style.WARNING(f"WARNING checker disagrees with the template: {line}"))
        if report.disagreements:
            self.stderr.write(self.style.WARNING(
                "Those items carry the checker's gold answer; filter them in admin with "
                "'checker disagrees'."
            ))
        if export:
            with open(export, "w", newline="", encoding="utf-8") as handle:
                count = write_items_csv(handle, selectors.items_for_export(study=report.study, design=design))
            self.stdout.write(f"Wrote {count} items to {export}.")
