"""python manage.py perturb_items STUDY names|entities|nonsense|mapping:FILE.csv [--seed S] [--label L] [--design D ...]

Adds a perturbed copy of the study's real items (seed 002): same logic, other tokens; each new item
is linked to its original (same prompt variant). Validated first; nothing is written on an error.
"""
from __future__ import annotations

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from experiments import selectors
from experiments.items import perturbing

from .generate_items import parse_perturbation


class Command(BaseCommand):
    help = "Add a matched-pair perturbation (names, entities, nonsense mirror or a custom mapping) to a study's items."

    def add_arguments(self, parser):
        parser.add_argument("study", help="study slug")
        parser.add_argument("perturbation", metavar="KIND", help="names, entities, nonsense or mapping:FILE.csv")
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--label", help="condition label of the new items (default: the kind)")
        parser.add_argument("--design", nargs="+", help="perturb only these designs (default: every design the study has)")

    def handle(self, *args, study, perturbation, seed, label, design, **options):
        target = selectors.study_by_slug(slug=study)
        if target is None:
            raise CommandError(f"No study with slug '{study}'.")
        kind, mapping = parse_perturbation(perturbation)
        try:
            report = perturbing.items_perturb(
                study=target, kind=kind, seed=seed, mapping=mapping, label=label,
                designs=tuple(design) if design else None,
            )
        except ValidationError as exc:
            raise CommandError(" ".join(exc.messages)) from None
        self.stdout.write(self.style.SUCCESS(
            f"Added {report.items} '{report.label}' items ({report.kind}) of {', '.join(report.designs)} to "
            f"'{target.slug}', each linked to its original."
        ))
