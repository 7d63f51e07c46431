"""Fixtures for the analysis tests: the R stack (fails under CI=true when missing) and a study
populated with generated items, model scores and human trials with known effects."""
from __future__ import annotations

import math
import os
import random

import pytest


@pytest.fixture(scope="session")
def r_stack():
    """The R bridge. Missing R fails the test under CI=true and skips it elsewhere."""
    from analysis import rbridge

    try:
        with rbridge.r_session():
            pass
    except (ImportError, rbridge.RUnavailable) as error:
        if os.environ.get("CI") == "true":
            pytest.fail(f"R / rpy2 / pymer4 must be installed under CI: {error}")
        pytest.skip(f"R stack not installed: {error}")
    return rbridge


MODALITY = {"none": 0.0, "box": -0.15, "dia": 0.05}
ARGFORM = {"∨⊢": 0.0, "→ᴸ⊢": 0.1, "→ᴿ⊢": -0.1, "∨⊬": -0.05, "→ᴸ⊬": -0.1, "→ᴿ⊬": 0.0}


def _populate(study, *, models: int, participants: int, seed: int = 0, model_noise: float = 0.1) -> None:
    from experiments.models import Item, Participant, ParticipantStatus, Trial
    from inference.models import LanguageModel, ModelRun, ModelScore

    rng = random.Random(seed)
    items = list(Item.objects.filter(study=study).order_by("pk"))
    for m in range(models):
        lm, _ = LanguageModel.objects.get_or_create(name=f"lm-{m + 1}", defaults={"source": f"test/lm-{m + 1}"})
        run = ModelRun.objects.create(study=study, language_model=lm, status="done")
        scores = []
        for item in items:
            nonsense = item.condition == "nonsense"
            perplexity = math.exp(rng.gauss(3.4 if nonsense else 2.3, 0.2))
            soft = (0.6 + MODALITY[item.modality] + ARGFORM.get(item.argument_form, 0.0) + 0.03 * m
                    + rng.gauss(0, model_noise))
            soft = min(0.99, max(0.01, soft))
            mass = rng.uniform(0.5, 0.9)
            p_yes = soft * mass if item.gold_answer == "yes" else (1 - soft) * mass
            scores.append(ModelScore(
                run=run, item=item, logprobs={}, token_ids={}, p_yes=p_yes, p_no=mass - p_yes,
                relative_p_yes=p_yes / mass, soft_accuracy=soft, decision="yes" if p_yes >= mass / 2 else "no",
                perplexity=perplexity, prompt_tokens=70, answer_mass=mass,
            ))
        ModelScore.objects.bulk_create(scores)
    real = [item for item in items if item.condition == "real" and item.design == "modal-syllogisms"]
    for p in range(participants):
        participant = Participant.objects.create(
            study=study, prolific_pid=f"{seed:04d}{p:020x}", key_mapping="f_yes",
            status=ParticipantStatus.COMPLETED,
        )
        chosen = rng.sample(real, min(24, len(real)))
        trials = []
        for index, item in enumerate(chosen):
            logit = 1.0 + 4 * MODALITY[item.modality] + 4 * ARGFORM[item.argument_form] + rng.gauss(0, 0.3)
            correct = rng.random() < 1 / (1 + math.exp(-logit))
            answer = item.gold_answer if correct else ("no" if item.gold_answer == "yes" else "yes")
            trials.append(Trial(participant=participant, item=item, index=index, key="f", answer=answer,
                                correct=correct, rt_ms=math.exp(rng.gauss(8.2, 0.4))))
        Trial.objects.bulk_create(trials)
    # One preview session and one fast trial: both must be excluded and counted.
    preview = Participant.objects.create(study=study, prolific_pid=f"previewpid{seed:014d}", key_mapping="j_yes",
                                         is_preview=True, status=ParticipantStatus.COMPLETED)
    Trial.objects.create(participant=preview, item=real[0], index=0, key="j", answer="yes", correct=True, rt_ms=900.0)


def study_make(*, number: int, models: int, participants: int, appendix: bool = False, model_noise: float = 0.1):
    """A modal-syllogism study (4 interpretations, nonsense mirror), slug analysis-NUMBER, populated with
    seed NUMBER (make_study's; a module's fixture may call it inside a transaction it rolls back).
    model_noise: the SD of the noise on each fake model's soft accuracy; at the default 0.1 a fake model
    answers whole cells one way (separation: the report fits the human-vs-model model with blme), at 0.3
    its decisions vary within every cell (glmer fits it, in a fraction of the time)."""
    from designs.modal.items import items_generate
    from experiments import services

    study = services.study_create(slug=f"analysis-{number}", title="Analysis test", design="modal-syllogisms")
    items_generate(study=study, design="modal-syllogisms", interpretations=4, seed=0, nonsense=True)
    if appendix:  # Appendix C's designs
        items_generate(study=study, design="necessitation", interpretations=6, seed=0)
        items_generate(study=study, design="modal-distribution", interpretations=6, seed=0)
    _populate(study, models=models, participants=participants, seed=number, model_noise=model_noise)
    return study


@pytest.fixture
def make_study(db):
    """make_study(models=N, participants=M): a modal-syllogism study (4 interpretations, nonsense mirror)."""
    counter = {"n": 0}

    def make(*, models: int, participants: int, appendix: bool = False, model_noise: float = 0.1):
        counter["n"] += 1
        return study_make(number=counter["n"], models=models, participants=participants, appendix=appendix,
                          model_noise=model_noise)

    return make
