from django.apps import AppConfig


class StudyserverConfig(AppConfig):
    """The project package as an app, for its management commands (run_task); it has no models."""

    name = "studyserver"
    verbose_name = "Duet"
