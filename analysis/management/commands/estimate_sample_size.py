"""python manage.py estimate_sample_size STUDY [--sizes 10 20 40 80 160] [--nsim 100] [--alpha 0.05]
[--target 0.8] [--seed 0] [--effect-by FACTOR=LEVEL:ACCURACY ...] [--models-only] [--real-only] [--out DIR]: power
by simulation from the study's pilot, for each model − human contrast and the people's own effects by each declared
factor (--effect-by states the people's accuracy per level instead of the pilot's; --models-only leaves the people's
effects out)."""
from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError


class Command(BaseCommand):
    help = ("Estimate how many participants the study needs to detect each model's difference from the humans, per "
            "level of the factors its humans-vs-models model is by (the one its designs register, else its declared "
            "factors), by simulating from the report's human-vs-model GLMM fitted on its pilot (analysis/power.py); "
            "and the power for the people's own "
            "effects by each declared factor, from the people's GLMM fitted on the pilot or from stated accuracies "
            "(analysis/power_people.py).")

    def add_arguments(self, parser):
        parser.add_argument("study", help="the study's slug")
        parser.add_argument("--sizes", type=int, nargs="+", default=[10, 20, 40, 80, 160], help="participants to try")
        parser.add_argument("--nsim", type=int, default=100, help="simulated studies per size (default 100)")
        parser.add_argument("--alpha", type=float, default=0.05)
        parser.add_argument("--target", type=float, default=0.8, help="the power wanted (default 0.8)")
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--effect-by", action="append", default=[], metavar="FACTOR=LEVEL:ACCURACY",
                            help="the people's accuracy on one level of a declared factor, simulated instead of the "
                                 "pilot's effect (repeatable; name every level of the factor, by its value or "
                                 "its code)")
        parser.add_argument("--models-only", action="store_true",
                            help="the model − human contrasts alone, without the people's own effects by each declared "
                                 "factor (each a set of simulated studies as long as the model − human one)")
        parser.add_argument("--real-only", action="store_true", help="the pilot is the real participants only (no bots)")
        parser.add_argument("--out", help="also write power_curve.csv, power_needed.csv and power_curve.png here")

    def handle(self, *args, **options):
        from analysis import plots
        from common import csvsafe
        from analysis.power import PowerPlan
        from analysis.power_services import power_execute, power_request
        from experiments.models import Study
        from experiments.participation import pilot_effects

        study = Study.objects.filter(slug=options["study"]).first()
        if study is None:
            raise CommandError(f"No study with slug '{options['study']}'.")
        try:
            plan = PowerPlan(sizes=tuple(sorted(set(options["sizes"]))), nsim=options["nsim"], alpha=options["alpha"],
                             target=options["target"], seed=options["seed"], people=not options["models_only"],
                             stated=pilot_effects.parse(options["effect_by"], pilot_effects.ACCURACY,
                                                        flag=pilot_effects.STATED))
        except ValueError as error:
            raise CommandError(str(error)) from error
        try:
            analysis = power_request(study=study, plan=plan, pilot=not options["real_only"], run=False)
            analysis = power_execute(analysis_id=analysis.pk)
        except ValueError as error:
            raise CommandError(str(error)) from error
        import pandas as pd

        needed = pd.DataFrame(analysis.needed)
        self.stdout.write(analysis.message)
        for row in needed.itertuples():
            n = f"{int(row.needed)}" if row.needed == row.needed and row.needed is not None else f"more than {row.max_n}"
            self.stdout.write(f"  {row.factor} {row.level}, {row.contrast}: {n} participants "
                              f"(power at {row.max_n}: {row.power_at_max:.2f})")
        if options["out"]:
            out = Path(options["out"])
            out.mkdir(parents=True, exist_ok=True)
            curve = pd.DataFrame(analysis.curve)
            csvsafe.logical(csvsafe.frame(curve)).to_csv(out / "power_curve.csv", index=False)
            csvsafe.logical(csvsafe.frame(needed)).to_csv(out / "power_needed.csv", index=False)
            (out / "power_curve.png").write_bytes(plots.power_curve(curve, plan.target).png)
            self.stdout.write(self.style.SUCCESS(f"Wrote {out}/power_curve.csv, power_needed.csv and power_curve.png."))
