"""What the paired designs add to the design registry: one report part reading the study's linked items —
τ and Π⁺ over RULEBREAKERS' pairs (000), both sides right for dual-sided rules (004), 002's matched-pair test
over perturbed copies (so it reads every perturbable design too) and how people were shown the pairs."""
from __future__ import annotations

import dataclasses

from analysis.sections import SectionBuilder, StudyFrames
from experiments import design_registry as registry

from . import frames, report


def report_inputs(*, study, chosen, analysed=None):
    """The study's linked items (those analysed: answered or scored by the runs used), the knowledge-probe
    answers of the probe runs the report uses, its options."""
    from analysis import runs

    return frames.inputs(study, runs.used_ids(chosen, kinds=[runs.PROBE]), analysed)


def build(study_frames: StudyFrames, given) -> list:
    """The paired sections, saying which model rows are like for like by the report's items people could be shown."""
    if given is not None and study_frames.shown is not None:
        given = dataclasses.replace(given, shown=study_frames.shown)
    return report.sections(study_frames.scores, study_frames.kept, given)


PAIRED = SectionBuilder(key="paired", title="Paired designs and perturbed copies", build=build, read=report_inputs)


def register() -> None:
    registry.report_part_add(PAIRED, designs=[*report.TAU_DESIGNS, *report.DUAL_SIDED_DESIGNS,
                                              *registry.perturbable()])
