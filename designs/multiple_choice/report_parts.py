"""What the multiple-choice design (seed 001) adds to the design registry: its report section, read from the
repeated runs of each configuration in use."""
from __future__ import annotations

from analysis.sections import SectionBuilder, StudyFrames
from experiments import design_registry as registry
from .items import DESIGN

from . import report


def report_inputs(*, study, chosen, analysed=None):
    """The multiple-choice scores of every done, complete run of each configuration in use (Table 2's variation)."""
    from analysis import frames, runs

    return frames.mc_runs_frame(study, runs.variation_ids(chosen))


def build(frames: StudyFrames, given) -> list:
    return report.sections(frames.scores, frames.kept, given)


MULTIPLE_CHOICE = SectionBuilder(key="multiple_choice", build=build, read=report_inputs,
                                 title="Multiple choice (001): Accuracy, Circular, PartialCircular")


def register() -> None:
    registry.report_part_add(MULTIPLE_CHOICE, designs=[DESIGN])
