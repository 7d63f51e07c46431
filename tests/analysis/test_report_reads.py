"""A report reads the item rows it analyses (issue 37 item 2): the items people answered and the items
the runs used scored, not every item of the study. The restricted reading gives the paired sections
exactly the answers the whole reading gives (the report's numbers: tests/analysis/test_paired_*golden.py,
test_published_rulebreakers.py)."""
from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from django.core.management import call_command
from django.db import connection

from analysis import factors, frames
from designs.paired import frames as paired_frames
from designs.paired.report import responses
from experiments.models import Item, Study
from tests.experiments.test_page_cost import RowCounter

pytestmark = pytest.mark.django_db

RULEBREAKERS = Path(__file__).resolve().parents[1] / "data" / "published" / "rulebreakers" / \
    "RULEBREAKERS_finegrained_excerpt.csv"


@pytest.fixture
def answered_study():
    """The excerpt's 26 pairs in ten phrasings (520 items) with entity-perturbed copies (1,040), answered by
    one simulated participant (a pilot: their answers are what a pilot report reads)."""
    call_command("import_items", "rulebreakers", str(RULEBREAKERS), "reads")
    call_command("perturb_items", "reads", "entities", "--seed", "2")
    call_command("simulate_participants", "reads", "--n", "1", "--seed", "1")
    return Study.objects.get(slug="reads")


def _sorted(frame: pd.DataFrame) -> pd.DataFrame:
    columns = [c for c in frame.columns if c != "attributes"]
    return frame[columns].astype(str).sort_values(columns).reset_index(drop=True)


def test_the_report_reads_the_answered_items_only(answered_study):
    study = answered_study
    trials = frames.trials_frame(study, include_simulated=True)
    answered = set(trials["item_id"])
    assert 0 < len(answered) <= 26 and study.items.count() >= 1040  # and the catch items
    analysed = frames.analysed_item_ids(study, [], include_simulated=True)
    assert set(analysed.values_list("pk", flat=True)) == answered
    assert not frames.analysed_item_ids(study, []).exists()  # a real report: the pilot's bots are no data

    counter = RowCounter()
    with connection.execute_wrapper(counter):
        some = paired_frames.items_frame(study, analysed)
    whole = paired_frames.items_frame(study)
    assert set(some["item_id"]) == answered & set(whole["item_id"]) and len(some) and len(whole) == 1040
    assert max(rows for rows, _ in counter.rows()) == len(some)  # no query read more items than it kept
    assert _sorted(responses(pd.DataFrame(), trials, some)).equals(_sorted(responses(pd.DataFrame(), trials, whole)))
    designs, perturbed, any_linked = paired_frames.linked_designs(study)
    assert designs == set(whole.loc[whole["pair_id"] != "", "design"]) and any_linked
    assert perturbed == bool(paired_frames.perturbed(whole).any()) and perturbed

    # descriptive-column factors: the analysed items' values only, as the whole reading has them
    names = [k for k in (Item.objects.filter(study=study).first().attributes or {}) if k not in factors.FIELD_SOURCES]
    assert names
    some, whole = factors.values_frame(study, names[:1], analysed), factors.values_frame(study, names[:1])
    assert set(some["item_id"]) == set(analysed.values_list("pk", flat=True))
    assert some.reset_index(drop=True).equals(whole[whole["item_id"].isin(some["item_id"])].reset_index(drop=True))
