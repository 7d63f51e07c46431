from django.apps import AppConfig
from django.utils import timezone


class AnalysisConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "analysis"
    verbose_name = "Analyses and reports"

    def ready(self) -> None:
        from experiments.participation.erasure import participant_erased

        participant_erased.connect(_withdraw_reports, dispatch_uid="analysis.withdraw_reports")


def _withdraw_reports(sender, *, study, label: str, **kwargs) -> int:
    """A participant's data was erased: every report of the study held its rows (as `label`)."""
    from .services import reports_withdraw

    return reports_withdraw(study=study, reason=f"Withdrawn {timezone.now():%Y-%m-%d %H:%M} UTC: built from data "
                                                f"of participant {label}, erased on request. Run the analysis again.")
