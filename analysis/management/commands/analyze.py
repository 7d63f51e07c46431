"""python manage.py analyze STUDY --out DIR [--runs ID …]: the report, tables and tidy data for one study."""
from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError


class Command(BaseCommand):
    help = ("Fit a study's analyses (its designs' registered report parts, Table 1 and the humans-vs-models model) on "
            "its trials and model scores and write report.html, tables and data.")

    def add_arguments(self, parser):
        parser.add_argument("study", nargs="?", help="the study's slug")
        parser.add_argument("--out", help="output folder (created if missing)")
        parser.add_argument("--report", type=int, help="build this queued Report (what run_task analysis.build_report ID does)")
        parser.add_argument("--min-rt", type=float, help="drop trials faster than this many ms (default 200)")
        parser.add_argument("--rt-sd", type=float, help="drop trials this many SD from the participant's mean log RT (default 3)")
        parser.add_argument("--keep-incomplete", action="store_true", help="keep sessions that were not completed")
        parser.add_argument("--pilot", action="store_true",
                            help="a pilot report: include the simulated participants of the study's pilots (never data)")
        parser.add_argument("--runs", type=int, nargs="+", metavar="ID",
                            help="analyse exactly these model runs (done, scoring runs of the study; never two runs of "
                            "one configuration over the same items); default: each configuration's latest complete run")

    def handle(self, *args, **options):
        from experiments.models import Study

        from analysis import services

        if options["report"] is not None:
            report = services.report_execute(report_id=options["report"])
            self.stdout.write(f"report {report.pk}: {report.status} {report.error or report.message}")
            return
        if not options["study"] or not options["out"]:
            raise CommandError("Give a study slug and --out DIR (or --report ID).")
        study = Study.objects.filter(slug=options["study"]).first()
        if study is None:
            raise CommandError(f"No study with slug '{options['study']}'.")
        from analysis.factors import declared_factors

        try:
            rules = services.exclusions_for(study=study)
            declared_factors(study)  # stored factor names the items no longer have: said before anything is read
        except ValueError as error:
            raise CommandError(str(error)) from error
        changes = {}
        if options["min_rt"] is not None:
            changes["rt_min_ms"] = options["min_rt"]
        if options["rt_sd"] is not None:
            changes["rt_log_sd"] = options["rt_sd"]
        if options["keep_incomplete"]:
            changes["completed_only"] = False
        if any(v is not None and v < 0 for v in (options["min_rt"], options["rt_sd"])):
            raise CommandError("--min-rt and --rt-sd must not be negative.")
        if changes:
            import dataclasses

            rules = dataclasses.replace(rules, **changes)
        out = Path(options["out"])
        if out.exists() and not out.is_dir():
            raise CommandError(f"--out {out} exists and is not a folder.")
        from analysis.runs import RunSelectionError

        try:
            result = services.report_build(study=study, out_dir=out, rules=rules, run_ids=options["runs"],
                                           pilot=options["pilot"])
        except RunSelectionError as error:
            raise CommandError(str(error)) from error
        self.stdout.write(f"  model runs used: {', '.join(str(i) for i in result.runs_used) or 'none'} "
                          f"(tables/runs.csv says why each run is used or not)")
        if not result.runs_used:
            from analysis.runs import select_runs

            left = [f"{r.run_id} ({r.why})" for r in select_runs(study, options["runs"] or None) if not r.used]
            if left:
                self.stdout.write(self.style.WARNING(f"  no complete model run is used; left out: {'; '.join(left)}"))
        for section in result.sections:
            state = f"not fitted yet: {section.absent}" if section.absent else f"fitted on {section.n_obs} rows"
            self.stdout.write(f"  {section.title}: {state}")
        for warning in result.warnings:
            self.stdout.write(self.style.WARNING(f"  warning: {warning}"))
        timings = ", ".join(f"{name} {seconds:.1f} s" for name, seconds in result.timings.items())
        self.stdout.write(f"  time: {timings}")
        self.stdout.write(self.style.SUCCESS(f"Wrote {result.html} and {len(result.tables)} tables."))
