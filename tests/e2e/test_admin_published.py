"""A published dataset into its design through the admin only, in a real headless Chromium at 1366 px
(issue 27, "Done when"): create a rulebreakers study, upload the RULEBREAKERS excerpt as its authors
published it (tests/data/published/rulebreakers/), see the mapping filled in by the known source
and then the preview (premises, question, gold answer), write it; the study has its design's
default practice and attention checks (the same as a study made on the command line); a model run
(the fake scorer), a pilot with bots, the pilot report with the paired (RULEBREAKERS) section; the
study opened, and a participant's pages show the participant wording, never the model's
"Answer Yes or No only".

Background work runs in the server's own thread (DUET_TASK_MODE=eager), as in test_admin_study.py.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from experiments.models import HumanArm, Item, Participant, Study, StudyStatus
from experiments.participation.services import human_arm_ensure
from inference.models import LanguageModel
from tests.e2e.admin_walk import admin_walk
from tests.e2e.chromium import COMPLETION

EXCERPT = Path(__file__).resolve().parents[1] / "data" / "published" / "rulebreakers" / \
    "RULEBREAKERS_finegrained_excerpt.csv"
MODEL_WORDING = "Answer Yes or No only"
PAIRS = 26  # the excerpt's pairs (tests/data/published/README.md), all complete
VARIANTS = 10  # 000 §4.2's phrasings


def _cli_defaults(design: str) -> tuple[list, list]:
    """The practice and attention checks a study of `design` made on the command line gets."""
    other = Study.objects.create(slug=f"cli-{design}", title="CLI twin", design=design)
    arm = human_arm_ensure(study=other)
    practice, checks = arm.practice, arm.attention_checks
    other.delete()
    return practice, checks


@pytest.mark.django_db(transaction=True)
def test_a_published_rulebreakers_file_goes_from_upload_to_participants_in_the_admin(live_server, monkeypatch,
                                                                                     settings):
    settings.DUET_TASK_MODE = "eager"
    model = LanguageModel.objects.create(name="fake-raw", source="test/fake", backend="fake")

    with admin_walk(live_server, monkeypatch) as walk:
        page = walk.page

        # a rulebreakers study
        study = walk.new_study("Published walk", "rulebreakers", slug="published-walk")

        # the published file: the known source fills the mapping in, then the preview; nothing written yet
        page.click("text=Upload a bank (CSV, JSON, Parquet)…")
        assert page.input_value("#id_design") == "rulebreakers"
        page.set_input_files("#id_o-csv_file", str(EXCERPT))
        page.click("input[value='Check and preview']")
        source = page.inner_text("#mapping-source")
        assert "known source RULEBREAKERS, finegrained format (000) (rulebreakers-finegrained)" in source, source
        mapping = page.inner_text("#source-columns")
        assert "premise1" in mapping and "premise_1" in mapping and "label" in mapping, mapping
        preview = page.inner_text("#import-preview")
        assert f"{PAIRS * 2 * VARIANTS} items would be written" in preview, preview
        header = [th.text_content() for th in page.locator("#import-preview thead th").all()]
        assert header[:6] == ["code", "design", "premises", "question", "gold answer", "logical form"], header
        cells = [td.inner_text() for td in page.locator("#import-preview tbody tr").first.locator("td").all()]
        premises, question, gold = cells[2].split("\n"), cells[3], cells[4]
        assert len(premises) == 2 and question and gold in ("yes", "no") and "⊢" in cells[5], cells
        assert not page.query_selector("#import-problems")  # every pair of the excerpt is whole
        assert not Item.objects.filter(study=study).exists()
        page.click(f"input[value='Write these {PAIRS * 2 * VARIANTS} items']")
        page.wait_for_selector(".messagelist")
        assert Item.objects.filter(study=study).count() == PAIRS * 2 * VARIANTS
        assert Item.objects.filter(study=study).values("pair_id").distinct().count() == PAIRS

        # the design's default practice and attention checks, as on the command line
        arm = HumanArm.objects.filter(study=study).first()
        practice, checks = _cli_defaults("rulebreakers")
        assert practice and checks
        assert arm is not None and (arm.practice, arm.attention_checks) == (practice, checks), \
            (arm and arm.practice, arm and arm.attention_checks)

        # the human arm's launch settings
        walk.human_arm(study, items_per_participant=12)

        # a model run (fake scorer), a pilot with bots, the pilot report (real R) with its paired section
        walk.model_run(study, model)
        walk.pilot(study, participants=12, seed=5)
        walk.pilot_report(study, wait_ms=900_000)
        text = page.inner_text("body")
        assert "RULEBREAKERS (000): paired accuracy τ" in text
        assert page.locator("#rulebreakers").count() == 1

        # open the study; a participant's pages show the participant wording, never the model's
        page.goto(walk.change(study))
        link = page.inner_text("#launch-link")
        walk.action("open_studies", study.pk)
        page.wait_for_selector(".messagelist")
        study.refresh_from_db()
        assert study.status == StudyStatus.OPEN, page.inner_text("#content")[:2000]
        person = walk.person(1366, 768)
        person.goto(link.replace("{{%PROLIFIC_PID%}}", "published0000000000000a1").replace("{{%STUDY_ID%}}", "st")
                    .replace("{{%SESSION_ID%}}", "se1"))
        seen = [person.inner_text("body")]
        person.click("#agree")
        seen.append(person.inner_text("#instructions-text"))
        person.click("#continue")
        shown = _answer_everything(person, seen)

    participant = Participant.objects.get(study=study, prolific_pid="published0000000000000a1")
    human = study.settings["human_variant"]
    questions = set(Item.objects.filter(study=study, variant=human).values_list("question", flat=True))
    trials = [text for text in shown if any(q in text for q in questions)]
    assert len(trials) == 12, (len(trials), shown[:3])  # every item the participant answered, in its own wording
    assert participant.status == "completed"
    for text in seen + shown:
        assert MODEL_WORDING not in text, text
    prompts = Item.objects.filter(study=study, variant=human).values_list("prompt", flat=True)
    assert not any(prompt.strip() in text for prompt in prompts for text in shown)  # never the model's prompt


def _answer_everything(page, seen: list[str]) -> list[str]:
    """Answer every screen of the participant's trial pages (practice, the items, the checks) with the
    F key; returns the stage's text at each answered trial."""
    shown = []
    previous = ""
    for _ in range(200):
        if page.url.startswith(COMPLETION):
            return shown
        try:
            now = page.wait_for_function(
                """prev => { const s = document.getElementById('stage');
                             if (!s) return 'gone';
                             const now = s.dataset.state + ':' + (s.dataset.index || '');
                             return ['intro', 'armed', 'feedback'].includes(s.dataset.state) && now !== prev
                                    ? now + '|' + s.innerText : false; }""",
                arg=previous).json_value()
        except Exception:  # the page moved on (to the completion page) while it was read
            page.wait_for_load_state()
            continue
        if now == "gone":
            page.wait_for_url(lambda url: url.startswith(COMPLETION))
            continue
        previous, text = now.split("|", 1)
        state = previous.split(":")[0]
        seen.append(text)
        if state == "armed":
            shown.append(text)
        page.keyboard.press("KeyF")
    raise AssertionError(f"the participant never reached the completion page: {page.url}")
