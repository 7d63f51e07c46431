from django.apps import AppConfig


class ExperimentsConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "experiments"
    verbose_name = "Studies and items"
    # Every model is in experiments/models/ (a package: one module per concern), loaded by Django from there.

    def ready(self) -> None:
        # The stored lists are dropped when an item is edited or deleted, whichever process does it
        # (participation/list_store.py's signal receivers).
        from .participation import list_store  # noqa: F401
        # A study's item summary is rebuilt when a transaction that created items commits (item_summary.py).
        from .participation import item_summary  # noqa: F401
        # The designs are declared into the registry (experiments/design_registry/) by the design packages' app
        # (designs/apps.py), whose ready() runs after this one: the app names no design.
