from importlib import import_module

from django.apps import AppConfig


class ExperimentsConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "experiments"
    verbose_name = "Studies and items"
    # Models declared beside their services, outside models.py, that import models.py themselves:
    # loaded here, with the app's models, so models.py need not import them back (issue 29 item 4).
    model_modules = ("experiments.participation.pilot", "experiments.designs.presets",
                     "experiments.participation.list_store")

    def import_models(self) -> None:
        super().import_models()
        for name in self.model_modules:
            import_module(name)
