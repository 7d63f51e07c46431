"""A study's human arm, made when first needed with its design's defaults: its practice set and its catch
items (the design's registry entry). Here, with the designs (whose importers give a new study its arm) and
below the participant flow (experiments/participation/), which reads the arm."""
from __future__ import annotations

from ..models import HumanArm, Questionnaire, Study
from ..models.questionnaires import shows_annotations
from .. import design_registry as registry


def human_arm_ensure(*, study: Study) -> HumanArm:
    """The study's human arm; a new one gets its design's default practice set and catch items (the
    design's registry entry) and the default questionnaires, switched off (logic/questions.py), whoever
    makes it (a command, the admin, an import)."""
    arm, created = HumanArm.objects.annotate(**shows_annotations()).get_or_create(study=study, defaults={
        "practice": registry.practice_for(study.design),
        "attention_checks": registry.catch_items_for(study.design),
    })
    if created:  # the default questionnaires (demographics, aid use), off until the researcher turns them on
        Questionnaire.objects.add_defaults(arm=arm)
    return arm
