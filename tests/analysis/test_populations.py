"""The study page's "usable (analysed)" count and the report's analysed participants are one population
(issue 44 item 6; DESIGN.md rule 22): the page reads the report's exclusion rules (report_rules.Exclusions.steps)
in the database, the report applies them to its frame (analysis/prep.py). Random studies under random exclusion
settings drive both paths and compare every participant; a report built under changed exclusions is compared
with the page."""
from __future__ import annotations

import random
import re

import pytest
from django.core.management import call_command

from analysis import frames, prep
from analysis.services import exclusions_for
from experiments.models import Item, Participant, ParticipantStatus, Trial
from experiments.participation import selectors
from experiments.participation.admin_views import progress_html
from experiments.participation.services import human_arm_ensure
from experiments.schema import pseudonym
from tests.analysis.conftest import study_make

pytestmark = pytest.mark.django_db

STATUSES = list(ParticipantStatus.values)


def _people(study, rng: random.Random, n: int) -> None:
    """n sessions of every kind: previews, a pilot's bots, each status, failed checks, all-fast or all-timed-out
    answers, attention-check trials."""
    items = list(Item.objects.filter(study=study, condition="real").order_by("pk")[:12])
    for p in range(n):
        person = Participant.objects.create(
            study=study, prolific_pid=f"pop{study.pk}x{p:018d}", key_mapping="f_yes", status=rng.choice(STATUSES),
            is_preview=rng.random() < 0.15, is_simulated=rng.random() < 0.1,
            attention_failures=rng.choice([0, 0, 1, 2]))
        kind = rng.choice(["mixed", "mixed", "fast", "timed_out", "none"])
        rows = []
        for index, item in enumerate(rng.sample(items, rng.randint(1, 8)) if kind != "none" else []):
            timed_out = kind == "timed_out" or rng.random() < 0.1
            rt = rng.uniform(50, 190) if kind == "fast" else rng.lognormvariate(7.5, 0.6)
            rows.append(Trial(participant=person, item=item, index=index, key="" if timed_out else "f",
                              answer="" if timed_out else item.gold_answer, correct=not timed_out, rt_ms=rt,
                              timed_out=timed_out, is_attention_check=rng.random() < 0.1))
        Trial.objects.bulk_create(rows)


def _settings(rng: random.Random) -> dict:
    return {"drop_preview": rng.random() < 0.7, "drop_failed_attention": rng.random() < 0.6,
            "completed_only": rng.random() < 0.6, "rt_min_ms": rng.choice([None, 200.0, 150.0]),
            "rt_log_sd": rng.choice([None, 1.0, 2.0, 3.0])}


@pytest.mark.parametrize("seed", range(6))
def test_the_page_and_the_reports_exclusions_keep_the_same_participants(seed):
    rng = random.Random(seed)
    study = study_make(number=100 + seed, models=0, participants=0)
    human_arm_ensure(study=study)
    _people(study, rng, 30)
    for _ in range(4):
        study.settings = {**(study.settings or {}), "analysis_exclusions": _settings(rng)}
        study.save()
        kept, _ = prep.apply_exclusions(frames.trials_frame(study), exclusions_for(study=study))
        page = {pseudonym(pk) for pk in selectors.analysed_participants(study=study).values_list("pk", flat=True)}
        assert page == set(kept["participant"]), study.settings["analysis_exclusions"]
        assert selectors.study_progress(study=study).usable == len(page)


def test_a_cut_nearer_the_mean_than_one_sd_is_refused():
    from experiments.report_rules import exclusion_settings

    with pytest.raises(ValueError, match="at least 1"):
        exclusion_settings({"analysis_exclusions": {"rt_log_sd": 0.5}})
    assert exclusion_settings({"analysis_exclusions": {"rt_log_sd": 1}})["rt_log_sd"] == 1


def _kept(out) -> list[str]:
    html = (out / "report.html").read_text(encoding="utf-8")
    found = re.search(r"<h3>Participants kept \((\d+)\)</h3><p>([^<]*)</p>", html)
    labels = [] if found.group(2) == "—" else found.group(2).split(", ")
    assert int(found.group(1)) == len(labels)
    return labels


def test_the_study_pages_usable_count_is_the_reports_analysed_participants_under_changed_exclusions(
        r_stack, tmp_path):
    study = study_make(number=120, models=0, participants=10)  # and one preview session (conftest)
    human_arm_ensure(study=study)
    people = list(Participant.objects.filter(study=study).real().order_by("pk"))
    Participant.objects.filter(pk=people[0].pk).update(status=ParticipantStatus.RETURNED)
    Participant.objects.filter(pk=people[1].pk).update(attention_failures=1)  # fails the default rule
    Trial.objects.filter(participant=people[2]).update(rt_ms=150.0)  # every answer faster than 200 ms
    changes = [
        {},  # the defaults: 7 of the 10, no preview
        {"completed_only": False, "drop_failed_attention": False},  # 9
        {"completed_only": False, "drop_failed_attention": False, "rt_min_ms": None, "drop_preview": False},  # 11
        {"rt_min_ms": 100.0, "rt_log_sd": 1.0},  # 8
    ]
    counts = []
    for n, change in enumerate(changes):
        study.settings = {**(study.settings or {}), "analysis_exclusions": change}
        study.save()
        out = tmp_path / str(n)
        call_command("analyze", study.slug, "--out", str(out))
        kept = _kept(out)
        progress = selectors.study_progress(study=study)
        assert progress.usable == len(kept), change
        page = {pseudonym(pk) for pk in selectors.analysed_participants(study=study).values_list("pk", flat=True)}
        assert page == set(kept)
        assert f"<td>{len(kept)} (the report leaves out: " in progress_html(study)
        counts.append(len(kept))
    assert counts == [7, 9, 11, 8]
