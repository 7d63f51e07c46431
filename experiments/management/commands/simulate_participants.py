"""python manage.py simulate_participants STUDY --n 40 [--accuracy P] [--attention-accuracy P]
[--accuracy-by FACTOR=LEVEL:P ...] [--rt-shift-by FACTOR=LEVEL:MS ...] [--rt-median MS] [--rt-log-sd S]
[--seed N]: a simulated pilot, run here and now; --accuracy-by and --rt-shift-by build an effect into it
(experiments/participation/pilot_effects.py)."""
from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from experiments.models import Study
from experiments.participation import pilot_effects
from experiments.participation.pilot import BotError, BotProfile, pilot_create, pilot_execute
from common.jobs import ProgressPrinter


class Command(BaseCommand):
    help = ("Run a simulated pilot: N bots take the study through the participant pages (consent, instructions, "
            "practice, every trial, completion). Bots are never data: they are left out of the study page's counts, "
            "the exports and every report but a pilot report (analyze --pilot).")

    def add_arguments(self, parser):
        parser.add_argument("study", help="the study's slug (it may still be a draft)")
        parser.add_argument("--n", type=int, default=40, help="how many simulated participants (default 40)")
        parser.add_argument("--accuracy", type=float, default=0.8, help="P(right answer) on the items (default 0.8)")
        parser.add_argument("--attention-accuracy", type=float, default=1.0,
                            help="P(right answer) on the catch items (default 1)")
        parser.add_argument("--accuracy-by", action="append", default=[], metavar="FACTOR=LEVEL:ACCURACY",
                            help="P(right answer) on the items of one level of a declared factor, e.g. "
                                 "pair_role=rulebreaker:0.35 (repeatable; levels not named keep --accuracy)")
        parser.add_argument("--rt-shift-by", action="append", default=[], metavar="FACTOR=LEVEL:MS",
                            help="response-time shift in ms on the items of one level of a declared factor, e.g. "
                                 "pair_role=rulebreaker:300 (repeatable)")
        parser.add_argument("--rt-median", type=float, default=1800.0, help="median response time in ms (default 1800)")
        parser.add_argument("--rt-log-sd", type=float, default=0.4, help="SD of log response time (default 0.4)")
        parser.add_argument("--seed", type=int, help="random seed (default: a fresh one, recorded on the pilot)")

    def handle(self, *args, **options):
        study = Study.objects.filter(slug=options["study"]).first()
        if study is None:
            raise CommandError(f"No study with slug '{options['study']}'.")
        try:
            profile = BotProfile(accuracy=options["accuracy"], attention_accuracy=options["attention_accuracy"],
                                 rt_median_ms=options["rt_median"], rt_log_sd=options["rt_log_sd"],
                                 accuracy_by=pilot_effects.parse(options["accuracy_by"], pilot_effects.ACCURACY),
                                 rt_shift_by=pilot_effects.parse(options["rt_shift_by"], pilot_effects.RT_SHIFT))
            pilot = pilot_create(study=study, participants=options["n"], profile=profile, seed=options["seed"], run=False)
            printer = ProgressPrinter(self.stdout.write, label=f"Pilot {pilot.pk}", unit="simulated participants",
                                      every=15.0)
            printer(0, pilot.participants)
            pilot = pilot_execute(pilot_id=pilot.pk, on_progress=printer)
        except (ValueError, BotError) as error:
            raise CommandError(str(error)) from error
        except Exception as error:  # the flow refused: the pilot row says why too
            raise CommandError(f"The pilot failed: {type(error).__name__}: {error}") from error
        self.stdout.write(self.style.SUCCESS(f"Pilot {pilot.pk} of '{study.slug}' (seed {pilot.seed}): {pilot.message}"))
