"""python manage.py demo — the embedded default's main job.

Migrates the database, generates the demo study from paper 003's design if it is missing, sets up
the pilot study (demo/pilot.py), prints a staff login for the admin, the participant link and the
first report's address, and serves on 127.0.0.1:8000 at once. The slow half — the embedded model
scoring a subset, then the pilot study's two model runs, its simulated participants and its report
(every section of the report) — runs meanwhile in a background process (`manage.py demo_steps`),
printing its progress among the server's lines; the admin shows the same progress on each model
run and on the report. With --no-serve it runs first, in the foreground.
"""
from __future__ import annotations

import secrets
import subprocess
import sys

from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError

from experiments import design_registry as registry

from experiments import services
from experiments.models import Study
from common.env import BASE_DIR

from demo import DEMO_SLUG


class Command(BaseCommand):
    help = "Set up the demo study and a staff login, then serve on 127.0.0.1:8000 (use --no-serve to skip serving)."

    def add_arguments(self, parser):
        parser.add_argument("--addrport", default="127.0.0.1:8000")
        from demo.model_arm import DEMO_ITEMS
        from demo.pilot import BOTS, INTERPRETATIONS

        parser.add_argument("--interpretations", type=int, default=1000,
                            help="the demo study's interpretations of the 24 forms (default 1000)")
        parser.add_argument("--model-items", type=int, default=DEMO_ITEMS,
                            help=f"how many of its items the embedded model scores (default {DEMO_ITEMS})")
        parser.add_argument("--pilot-interpretations", type=int, default=INTERPRETATIONS,
                            help=f"the pilot study's interpretations, each with its nonsense mirror (default "
                                 f"{INTERPRETATIONS}; used when the pilot study is made)")
        parser.add_argument("--pilot-participants", type=int, default=BOTS,
                            help=f"simulated participants in the pilot (default {BOTS})")
        parser.add_argument("--no-serve", action="store_true", help="set up and print, but do not serve")

    def handle(self, *args, addrport, interpretations, model_items, pilot_interpretations, pilot_participants,
               no_serve, **options):
        for name, value in (("--interpretations", interpretations), ("--model-items", model_items),
                            ("--pilot-interpretations", pilot_interpretations),
                            ("--pilot-participants", pilot_participants)):
            if value < 1:
                raise CommandError(f"{name} must be at least 1, not {value}.")
        call_command("migrate", interactive=False, verbosity=0)
        call_command("collectstatic", interactive=False, verbosity=0)
        study = Study.objects.filter(slug=DEMO_SLUG).first()
        if study is None:
            design = registry.demo_design()  # 003's modal syllogisms (their Design.demo)
            study = services.study_create(
                slug=DEMO_SLUG,
                title="Modal syllogisms (paper 003 demo)",
                design=design.name,
                description="24 logical forms × interpretations, gold answers from the S5 checker, nonsense mirror.",
            )
            report = design.make(
                study=study, interpretations=interpretations, seed=0, nonsense=True
            )
            self.stdout.write(f"Generated {report.items} items into '{study.slug}'.")
            for line in report.disagreement_lines():
                self.stdout.write(self.style.WARNING(f"checker disagrees with the template: {line}"))
        from analysis.models import ReportStatus
        from demo.pilot import pilot_setup  # the first report: a pilot showing every section
        from demo.login import demo_login

        host = addrport if ":" in addrport else f"127.0.0.1:{addrport}"
        steps = ["demo_steps", "--model-items", str(model_items), "--pilot-interpretations", str(pilot_interpretations),
                 "--pilot-participants", str(pilot_participants)]
        _, pilot_report = pilot_setup(interpretations=pilot_interpretations)
        if no_serve:  # the slow half first, here (the model arm, then the pilot's runs, bots and report)
            call_command(*steps, stdout=self.stdout)
            pilot_report.refresh_from_db()
        login = demo_login()  # the same password at every start (kept under var/, printed once)
        from experiments.models import StudyStatus
        from experiments.participation.consent import consent_review
        from experiments.participation.services import human_arm_ensure

        arm = human_arm_ensure(study=study)
        if not arm.completion_code:
            arm.completion_code = "DEMOCODE"
            arm.save(update_fields=["completion_code"])
        if arm.items_per_participant > interpretations and study.status == StudyStatus.DRAFT:
            arm.items_per_participant = interpretations  # a list takes at most one item per interpretation
            arm.save(update_fields=["items_per_participant"])
            self.stdout.write(f"Demo: {interpretations} interpretations, so {interpretations} items per participant.")
        if study.status == StudyStatus.DRAFT:  # open the demo so the participant link works
            if not arm.consent_reviewed_at:  # a real study's consent is reviewed by a researcher in the admin
                arm.contact = arm.contact or "the researcher running this demo (set a contact under Human arm › Consent)"
                arm.save(update_fields=["contact"])
                consent_review(arm=arm, by=None)
                self.stdout.write("Demo: consent text marked reviewed by this command (a real study needs a "
                                  "researcher to review it in the admin).")
            services.study_transition(study=study, to=StudyStatus.OPEN)
        visit = secrets.token_hex(6)  # a fresh pseudonymous participant every start
        self.stdout.write(self.style.SUCCESS(
            f"\nStart:  http://{host}/   (the admin, the documentation and the demo study)\n"
            f"Admin:  http://{host}/admin/   {login.line()}\n"
            f"Study:  {study.title}: {study.items.count()} items, status {study.status}\n"
            f"Participant link: http://{host}/s/{study.slug}/?PROLIFIC_PID=demo-{visit}"
            f"&STUDY_ID={study.slug}&SESSION_ID=demo-session-{visit}\n"
            f"Staff preview (records nothing as data): http://{host}/s/{study.slug}/preview/\n"
            + (f"First report, a PILOT (simulated participants, two model configurations of the embedded model): "
               f"http://{host}/admin/analysis/report/{pilot_report.pk}/report.html\n"
               if pilot_report.status == ReportStatus.DONE else "")
        ))
        if no_serve:
            return
        if pilot_report.status != ReportStatus.DONE:
            self.stdout.write(
                f"Serving now. Being built in the background: the model scores, then the PILOT report "
                f"(simulated participants, two model configurations of the embedded model), at "
                f"http://{host}/admin/analysis/report/{pilot_report.pk}/report.html once done (a few minutes). "
                f"Progress below, and in the admin: http://{host}/admin/inference/modelrun/ and "
                f"http://{host}/admin/analysis/report/\n")
            # the same terminal: its progress lines appear among the server's; Ctrl-C stops both
            subprocess.Popen([sys.executable, str(BASE_DIR / "manage.py"), *steps, "--address", host], cwd=BASE_DIR)
        call_command("runserver", host, use_reloader=False, use_threading=True)
