"""Each population is defined once (issue 44 item 6; DESIGN.md rule 22): the participants' manager
(experiments/models/participants.py) says who is real, completed, a preview or a pilot's bot, and no other module
of the project spells those filters or the "completed" status again."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from experiments.models import Participant, ParticipantStatus, Trial
from tests.factories import ParticipantFactory, StudyFactory, TrialFactory

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("experiments", "analysis", "prolific", "inference", "designs", "studyserver", "demo", "logic")
HOME = ROOT / "experiments" / "models" / "participants.py"  # where the populations are defined
# a filter on who took part (`is_preview=False`, `participant__is_simulated=True`, `is_preview__exact=…` as a
# keyword), or a status compared with a spelled-out word ("completed"), anywhere but HOME
RESTATED = (
    re.compile(r"is_(preview|simulated)(__\w+)?\s*=\s*(True|False)\b"),
    re.compile(r"""[!=]=\s*["'](started|completed|no_consent|failed_attention|returned|excluded)["']"""),
    re.compile(r"""status\s*=\s*["'](started|completed|no_consent|failed_attention|returned|excluded)["']"""),
)


def _sources():
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            if "migrations" not in path.parts and path != HOME:
                yield path


def test_no_module_restates_who_a_participant_is():
    found = [f"{path.relative_to(ROOT)}:{n}: {line.strip()}"
             for path in _sources()
             for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             if any(pattern.search(line) for pattern in RESTATED)]
    assert not found, "use Participant.objects.real()/completed()/previews()/simulated() or audience_q:\n" + \
        "\n".join(found)


def test_the_check_would_see_a_restatement():
    assert any(p.search('Trial.objects.filter(participant__is_preview=False)') for p in RESTATED)
    assert any(p.search('rows.filter(is_simulated = True)') for p in RESTATED)
    assert any(p.search('if seen.duet_status != "completed":') for p in RESTATED)
    assert not any(p.search('chosen["is_preview"] = False') for p in RESTATED)  # a frame's column, not a filter


@pytest.mark.django_db
def test_each_audience():
    study = StudyFactory()
    person = ParticipantFactory(study=study, status=ParticipantStatus.COMPLETED)
    started = ParticipantFactory(study=study, status=ParticipantStatus.STARTED)
    returned = ParticipantFactory(study=study, status=ParticipantStatus.RETURNED)
    preview = ParticipantFactory(study=study, status=ParticipantStatus.COMPLETED, is_preview=True)
    bot = ParticipantFactory(study=study, status=ParticipantStatus.COMPLETED, is_simulated=True)
    ParticipantFactory(status=ParticipantStatus.COMPLETED)  # another study's
    mine = Participant.objects.filter(study=study)
    assert set(mine.real()) == {person, started, returned}
    assert set(mine.real(include_simulated=True)) == {person, started, returned, bot}
    assert set(mine.audience(include_preview=True)) == {person, started, returned, preview}
    assert set(mine.real().completed()) == {person}
    assert set(mine.completed()) == {person, preview, bot}
    assert set(mine.real().holding()) == {person, started}
    assert set(mine.previews()) == {preview} and set(mine.simulated()) == {bot}
    answers = {p: TrialFactory(participant=p, correct=True, rt_ms=900.0) for p in (person, preview, bot)}
    theirs = Trial.objects.filter(participant__study=study)
    assert set(theirs.by_real()) == {answers[person]}
    assert set(theirs.by_real(include_simulated=True)) == {answers[person], answers[bot]}
    assert set(theirs.by_audience(include_preview=True)) == {answers[person], answers[preview]}
