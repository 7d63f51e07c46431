"""python manage.py run_task TASK_NAME [ARG ...]: the embedded worker that common.dispatch starts."""
from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError


class Command(BaseCommand):
    help = ("Run one registered background task (e.g. analysis.build_report REPORT_ID) in this process and exit: "
            "the worker DUET_TASK_MODE=embedded starts for each task it sends. Exits non-zero when it fails.")

    def add_arguments(self, parser):
        parser.add_argument("task_name", help="the task's registered name, e.g. analysis.build_report")
        parser.add_argument("task_args", nargs="*", type=int, metavar="ARG", help="the task's integer arguments (ids)")

    def handle(self, *args, **options):
        from common.dispatch import registered

        name, task_args = options["task_name"], options["task_args"]
        try:
            task = registered(name)
        except LookupError as error:
            raise CommandError(str(error)) from None
        result = task.apply(args=task_args)
        call = f"{name}({', '.join(map(str, task_args))})"
        if result.failed():
            if result.traceback:
                self.stderr.write(result.traceback)
            raise CommandError(f"{call} failed: {type(result.result).__name__}: {result.result}")
        self.stdout.write(f"{call}: {result.result}")
