"""What must hold before a study takes participants (read by study_transition and participant_start).

* its consent has been reviewed by a researcher as it stands now (consent.py);
* no practice question shares a logical form with the study's items (practice.py): the forms the
  design declares and those its items carry (a CSV or multiple-choice bank's own rows);
* participants' lists can be drawn with the arm's settings;
* it has a completion code (without one a participant who finishes cannot be paid on Prolific);
* the researcher's texts pass the checks item wording passes (texts.py), and on-screen answer buttons are
  asked for only where the trials are yes/no (four-option trials are answered by their keys).
"""
from __future__ import annotations

from ..models import Study
from . import choice, consent, practice, texts
from .item_summary import item_summary
from .services import human_arm_ensure, lists_problem


def practice_problem(study: Study, arm, *, summary=None) -> str | None:
    tested = list((summary or item_summary(study=study)).logical_forms)
    tested += practice.tested_forms(study.design) or ()
    shared = practice.shared_forms(arm.practice or [], tested)
    if not shared:
        return None
    listed = "; ".join(f"#{n} ({form})" for n, form in shared)
    return (f"Practice question(s) {listed} share a logical form with the study's items, so the practice "
            "would teach the answer to a tested form: change them under Human arm › Trials › Practice.")


def open_problems(study: Study, *, fresh: bool = False) -> list[str]:
    """Why `study` cannot open for participants (empty when it can). The item figures come from the
    study's item summary (item_summary.py), or with `fresh` from its items (opening a study does so)."""
    arm = human_arm_ensure(study=study)
    summary = item_summary(study=study, fresh=fresh)
    lists = lists_problem(study=study, arm=arm, summary=summary) if study.items.exists() else None
    if lists:
        lists = f"Participants' lists cannot be drawn: {lists}"
    code = None if arm.completion_code.strip() else (
        "It has no completion code: set the code Prolific shows for this study under Human arm › Prolific › "
        "Completion code (participants who finish are sent back to Prolific with it).")
    practice_shared = practice_problem(study, arm, summary=summary)
    wording = texts.texts_problem(arm)
    wording = f"Participants' texts: {wording}" if wording else None
    buttons = ("Its answer input offers on-screen buttons, which answer yes/no trials only, and its items are "
               "four-option questions: set Human arm › Answering › Answer input to keys only."
               if arm.input_mode().buttons and choice.is_mc_study(study) else None)
    return [problem for problem in (consent.consent_problem(arm), practice_shared, lists, code, wording, buttons)
            if problem]
