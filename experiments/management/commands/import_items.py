"""python manage.py import_items items.csv --study SLUG"""
from __future__ import annotations

from pathlib import Path

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from experiments import selectors, services
from experiments.item_csv import CsvImportError
from experiments.models import LogicSystem


class Command(BaseCommand):
    help = "Import a yes/no item bank from CSV (see experiments/item_csv.py for the columns). All rows or none."

    def add_arguments(self, parser):
        parser.add_argument("csv", type=Path)
        parser.add_argument("--study", required=True, help="study slug (created if missing)")
        parser.add_argument("--title", help="title for a new study")
        parser.add_argument("--system", choices=LogicSystem.values, default=LogicSystem.S5,
                            help="modal logic for rows with a logical_form (new study only; default S5)")

    def handle(self, *args, csv: Path, study: str, title: str | None, system: str, **options):
        if not csv.is_file():
            raise CommandError(f"{csv}: no such file")
        try:
            with transaction.atomic():  # a failed import leaves no new study behind either
                target = selectors.study_by_slug(slug=study)
                if target is None:
                    target = services.study_create(
                        slug=study, title=title or study, design="csv-import", logic_system=system
                    )
                report = services.items_import_csv(study=target, data=csv.read_bytes())
        except CsvImportError as exc:
            raise CommandError(f"{csv}: {exc}") from None
        except ValidationError as exc:
            raise CommandError(" ".join(exc.messages)) from None
        self.stdout.write(self.style.SUCCESS(
            f"Imported {report.items} items into '{target.slug}' ({report.disagreements} where the "
            "checker disagrees with the stated gold answer)."
        ))
