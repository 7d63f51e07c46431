"""A questionnaire answer as a participant factor of the report (issue 47 item 2): the answers written as
data/questionnaire.csv and described in the codebook, the factor joined into the people's model frame, and a
section of people by its levels fitted in R."""
from __future__ import annotations

import pandas as pd
import pytest
from django.core.management import call_command

from logic.questions import AID_USE_KEY

pytestmark = pytest.mark.django_db


def test_the_report_splits_people_by_their_aid_use_answer(r_stack, tmp_path):
    from experiments.models import Question, QuestionnaireAnswer
    from experiments.schema import pseudonym
    from tests.analysis.conftest import study_make

    from experiments.participation.services import human_arm_ensure

    study = study_make(number=71, models=1, participants=6, model_noise=0.5)
    arm = human_arm_ensure(study=study)
    arm.questionnaires.update(enabled=True)
    aid = Question.objects.get(questionnaire__arm=arm, key=AID_USE_KEY)
    people = list(study.participants.filter(is_preview=False).order_by("pk"))
    for n, person in enumerate(people):
        QuestionnaireAnswer.objects.create(participant=person, question=aid, value="Yes" if n % 2 else "No")
    study.settings = {**(study.settings or {}), "participant_factors": [AID_USE_KEY]}
    study.save(update_fields=["settings"])
    folder = tmp_path / "report"
    call_command("analyze", study.slug, "--out", str(folder))
    answers = pd.read_csv(folder / "data" / "questionnaire.csv", keep_default_na=False)
    assert list(answers["participant"]) == [pseudonym(p.pk) for p in people]
    assert list(answers[AID_USE_KEY]) == ["No", "Yes"] * 3
    book = pd.read_csv(folder / "codebook.csv", keep_default_na=False)
    row = book[(book["file"] == "data/questionnaire.csv") & (book["column"] == AID_USE_KEY)].iloc[0]
    assert "ChatGPT" in row["description"] and row["allowed_values"] == "Yes | No | Prefer not to say"
    frame = pd.read_csv(folder / "data" / "model_frames" / "people_by_aid_use.csv")
    assert set(frame[AID_USE_KEY]) == {"Yes", "No"} and frame["participant"].nunique() == 6
    by_level = pd.read_csv(folder / "tables" / "people_by_aid_use_by_level.csv")
    assert dict(zip(by_level["level"], by_level["participants"])) == {"No": 3, "Yes": 3}
    assert (folder / "tables" / "people_by_aid_use_emmeans_aid_use.csv").exists()
    html = (folder / "report.html").read_text(encoding="utf-8")
    assert "People by their answer to “aid_use” (questionnaire)" in html
