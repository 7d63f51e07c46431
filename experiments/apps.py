from django.apps import AppConfig


class ExperimentsConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "experiments"
    verbose_name = "Studies and items"

    def ready(self) -> None:
        from . import study_jobs

        def pilot():
            from .participation.pilot import Pilot

            return Pilot

        study_jobs.register("simulated pilot", pilot)
