"""python manage.py demo — the embedded default's main job.

Migrates the database, generates the demo study from paper 003's design if it is missing, scores a
subset with the embedded model, builds the first report — a pilot study with every section of the
report (demo/pilot.py) — prints a staff login for the admin, the participant link and the report's
address, and serves on 127.0.0.1:8000.
"""
from __future__ import annotations

import secrets

from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError

from experiments import designs, services
from experiments.logic.modal_forms import SYLLOGISMS  # 003's design, the demo's
from experiments.models import Study

DEMO_SLUG = "modal-syllogisms-demo"


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
            study = services.study_create(
                slug=DEMO_SLUG,
                title="Modal syllogisms (paper 003 demo)",
                design=SYLLOGISMS,
                description="24 logical forms × interpretations, gold answers from the S5 checker, nonsense mirror.",
            )
            report = designs.items_generate(
                study=study, design=SYLLOGISMS, interpretations=interpretations, seed=0, nonsense=True
            )
            self.stdout.write(f"Generated {report.items} items into '{study.slug}'.")
            for line in report.disagreement_lines():
                self.stdout.write(self.style.WARNING(f"checker disagrees with the template: {line}"))
        from demo.model_arm import demo_model_scores  # the model arm: SmolLM2 over a demo subset

        demo_model_scores(study=study, stdout=self.stdout, style=self.style, limit=model_items)
        from demo.pilot import pilot_demo  # the first report: a pilot showing every section

        pilot_report = pilot_demo(stdout=self.stdout, style=self.style, interpretations=pilot_interpretations,
                                  participants=pilot_participants)
        from studyserver.demo_login import demo_login

        login = demo_login()  # the same password at every start (kept under var/, printed once)
        host = addrport if ":" in addrport else f"127.0.0.1:{addrport}"
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
               f"http://{host}/admin/analysis/report/{pilot_report.pk}/report.html\n" if pilot_report else "")
        ))
        if not no_serve:
            call_command("runserver", host, use_reloader=False, use_threading=True)
