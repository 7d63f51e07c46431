from django.apps import AppConfig


class ProlificConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "prolific"
    verbose_name = "Prolific (publish, follow, review, bonuses)"

    def ready(self):
        from experiments.participation.launch import panel_line

        from .eligibility import launch_line
        panel_line(launch_line)
