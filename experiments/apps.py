from django.apps import AppConfig


class ExperimentsConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "experiments"
    verbose_name = "Studies and items"
    # Every model is in experiments/models/ (a package: one module per concern), loaded by Django from there.
