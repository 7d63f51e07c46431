"""python manage.py check_argument "□(p∨q), ◇¬p ⊢ ◇q" --system K"""
from __future__ import annotations

import json

from django.core.management.base import BaseCommand, CommandError

from experiments.logic.checker import System, entails
from experiments.logic.kripke import describe
from experiments.logic.parser import ParseError, parse_sequent


class Command(BaseCommand):
    help = "Decide whether an argument is valid (local consequence) in K, T, S4 or S5; show a countermodel if not."

    def add_arguments(self, parser):
        parser.add_argument("sequent", help='premises and conclusion, e.g. "□(p∨q), ◇¬p ⊢ ◇q" or "[](p|q), <>~p |- <>q"')
        parser.add_argument("--system", default="S5", help="K, T, S4 or S5 (default S5)")
        parser.add_argument("--json", dest="as_json", action="store_true", help="print the verdict as JSON")

    def handle(self, *args, sequent, system, as_json: bool = False, **options):
        try:
            parsed = parse_sequent(sequent)
            logic = System.parse(system)
        except (ParseError, ValueError) as exc:
            raise CommandError(str(exc)) from None
        verdict = entails(parsed.premises, parsed.conclusion, logic)
        if as_json:
            self.stdout.write(_json_dump(parsed, verdict))
            return
        status = "valid" if verdict.valid else "invalid"
        self.stdout.write(f"{parsed.to_unicode()}  is {status} in {logic.value}")
        if not verdict.valid:
            self.stdout.write("Countermodel (premises true, conclusion false at the actual world):")
            self.stdout.write(describe(verdict.countermodel))


def _json_dump(parsed, verdict) -> str:
    return json.dumps({
        "sequent": parsed.to_unicode(),
        "system": verdict.system.value,
        "valid": verdict.valid,
        "countermodel": verdict.countermodel.to_dict() if verdict.countermodel else None,
    }, ensure_ascii=False, indent=2)
