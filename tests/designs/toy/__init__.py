"""A toy design in one package (docs/designs.md, "How to add a design"): its registry entry and its own report
section, and `register()`, which a real package's report_parts.py holds and designs/apps.py runs at start-up (here
the test runs it, and `unregister()` takes it out again).

The toy: yes/no items whose report section counts each respondent's answers and its share of gold answers given,
read from the report's frames, with `given` (what its `read` took from the database) said in a note."""
from __future__ import annotations

import pandas as pd

from analysis.sections import Section, SectionBuilder, StudyFrames
from experiments import design_registry as registry

NAME = "toy-yes-no"
KEY = "toy_counts"
TITLE = "Toy design: answers and gold answers given per respondent"


def _make(*, study, **options):
    raise ValueError("the toy design makes no items; its tests hand the report frames")


TOY = registry.Design(
    name=NAME, title="Toy yes/no design", paper="any", source=registry.GENERATE, make=_make,
    describe=lambda report: "nothing made",
    wording=registry.Wording(participant="Is it so?", model="Is it so?\nAnswer:", answer_cue="Answer:",
                             source="tests/designs/toy"),
)


def build(frames: StudyFrames, given) -> list[Section]:
    section = Section(KEY, TITLE, unit="one answer; a descriptive count, no interval")
    scores = frames.scores[frames.scores["design"] == NAME] if len(frames.scores) else frames.scores
    if not len(scores):
        section.absent = "needs model scores on the toy items"
        return [section]
    table = (scores.groupby("model", sort=True)
             .agg(answers=("item_id", "size"), gold_given=("correct", "sum")).reset_index())
    section.tables["counts"] = table
    if given is not None:
        section.notes.append(f"Read besides the frames: {given}.")
    return [section]


TOY_SECTION = SectionBuilder(key=KEY, title=TITLE, build=build)


def register() -> None:
    registry.register(TOY)
    registry.report_part_add(TOY_SECTION, designs=[NAME])


def unregister() -> None:
    registry.unregister(NAME)
    registry.report_part_remove(KEY)
