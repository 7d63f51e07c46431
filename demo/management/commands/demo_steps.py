"""python manage.py demo_steps — the slow half of `manage.py demo`: the embedded model scores the
demo subset, then the pilot study is scored with two configurations, walked by simulated
participants and reported (demo/pilot.py). Each step prints its
progress (items done, items/s, time left) as it goes, and is skipped when done already.

`manage.py demo` starts it in the background once it serves (its lines appear among the server's);
with --no-serve the demo runs it first, in its own process."""
from __future__ import annotations

from django.core.management.base import BaseCommand


class Command(BaseCommand):
    help = "The demo's scoring, simulated pilot and first report (what `manage.py demo` starts in the background)."

    def add_arguments(self, parser):
        from demo.model_arm import DEMO_ITEMS
        from demo.pilot import BOTS, INTERPRETATIONS

        parser.add_argument("--model-items", type=int, default=DEMO_ITEMS)
        parser.add_argument("--pilot-interpretations", type=int, default=INTERPRETATIONS)
        parser.add_argument("--pilot-participants", type=int, default=BOTS)
        parser.add_argument("--address", default="", help="the server's address, to print the report's link")

    def handle(self, *args, model_items, pilot_interpretations, pilot_participants, address, **options):
        from demo.model_arm import demo_model_scores
        from demo.pilot import pilot_demo
        from demo import DEMO_SLUG
        from experiments.models import Study

        demo_model_scores(study=Study.objects.get(slug=DEMO_SLUG), stdout=self.stdout, style=self.style,
                          limit=model_items)
        report = pilot_demo(stdout=self.stdout, style=self.style, interpretations=pilot_interpretations,
                            participants=pilot_participants)
        if report is not None and address:
            self.stdout.write(self.style.SUCCESS(
                f"The first report is built: http://{address}/admin/analysis/report/{report.pk}/report.html"))
