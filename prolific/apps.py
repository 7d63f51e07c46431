from django.apps import AppConfig


class ProlificConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "prolific"
    verbose_name = "Prolific (publish, follow, review, bonuses)"
