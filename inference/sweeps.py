"""A sweep (issue 37 item 3): one study scored by several model configurations at once, each its own
normal run (services.model_run_launch: queued, progress, cancel, retry and resume as any run). The
admin's "Run on a study" action over the selected configurations calls `model_runs_sweep`."""
from __future__ import annotations

from dataclasses import dataclass, field

from django.core.exceptions import ValidationError

from experiments.models import Study

from . import services
from .models import LanguageModel, ModelRun

MAX_SWEEP = 50  # configurations in one sweep: each is a run over every item of the study


@dataclass
class Sweep:
    """What a sweep launched: the runs, and each configuration refused with why (nothing launched for it)."""

    runs: list[ModelRun] = field(default_factory=list)
    refused: list[tuple[LanguageModel, str]] = field(default_factory=list)


def model_runs_sweep(*, study: Study, language_models: list[LanguageModel], kind: str | None = None,
                     batch_size: int = 16, scope: str | None = None) -> Sweep:
    """Launch one run of `study` per configuration in `language_models` (in the order given), each
    queued once its own transaction commits, each over the items of `scope` (services.model_run_create). A configuration whose run is refused (ValidationError:
    no items of its kind, a bad batch size) is listed in `refused` with the reason; the others run.
    ValidationError, launching nothing, for an empty sweep or one over MAX_SWEEP configurations."""
    models = list(language_models)
    if not models:
        raise ValidationError("Select at least one model configuration to run.")
    if len(models) > MAX_SWEEP:
        raise ValidationError(f"A sweep runs at most {MAX_SWEEP} configurations at once ({len(models)} selected); "
                              "select fewer and run the rest as a second sweep.")
    sweep = Sweep()
    for model in models:
        try:
            sweep.runs.append(services.model_run_launch(study=study, language_model=model, kind=kind,
                                                        batch_size=batch_size, scope=scope))
        except ValidationError as exc:
            sweep.refused.append((model, " ".join(exc.messages)))
    return sweep
