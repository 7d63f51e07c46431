"""python manage.py check_argument "□(p∨q), ◇¬p ⊢ ◇q" --system K [--consequence local|global]"""
from __future__ import annotations

import json

from django.core.management.base import BaseCommand, CommandError

from logic.checker import Consequence, System, TooComplex, entails
from logic.kripke import describe
from logic.parser import ParseError, parse_sequent


class Command(BaseCommand):
    help = "Decide whether an argument is valid (local or global consequence) in K, T, S4 or S5; show a countermodel if not."

    def add_arguments(self, parser):
        parser.add_argument("sequent", help='premises and conclusion, e.g. "□(p∨q), ◇¬p ⊢ ◇q" or "[](p|q), <>~p |- <>q"')
        parser.add_argument("--system", default="S5", help="K, T, S4 or S5 (default S5)")
        parser.add_argument("--consequence", default="local",
                            help="local (default: premises true at a world ⇒ conclusion true there) or global "
                                 "(premises true at every world ⇒ conclusion true at every world; 003 §3.1's ⊢)")
        parser.add_argument("--json", dest="as_json", action="store_true", help="print the verdict as JSON")

    def handle(self, *args, sequent, system, consequence="local", as_json: bool = False, **options):
        try:
            parsed = parse_sequent(sequent)
            logic = System.parse(system)
            relation = Consequence.parse(consequence)
        except (ParseError, ValueError) as exc:
            raise CommandError(str(exc)) from None
        try:
            verdict = entails(parsed.premises, parsed.conclusion, logic, relation)
        except TooComplex as exc:  # past the checker's budget
            raise CommandError(str(exc)) from None
        if as_json:
            self.stdout.write(_json_dump(parsed, verdict))
            return
        status = "valid" if verdict.valid else "invalid"
        self.stdout.write(f"{parsed.to_unicode()}  is {status} in {logic.value} ({relation.value} consequence)")
        if not verdict.valid:
            where = "at every world" if relation is Consequence.GLOBAL else "at the actual world"
            self.stdout.write(f"Countermodel (premises true {where}, conclusion false at the actual world):")
            self.stdout.write(describe(verdict.countermodel))


def _json_dump(parsed, verdict) -> str:
    return json.dumps({
        "sequent": parsed.to_unicode(),
        "system": verdict.system.value,
        "consequence": verdict.consequence.value,
        "valid": verdict.valid,
        "countermodel": verdict.countermodel.to_dict() if verdict.countermodel else None,
    }, ensure_ascii=False, indent=2)
