"""Issue 47's first "Done when", end to end in one headless Chromium: a researcher writes a study's own
instructions and debrief in the admin, switches on its default questionnaires (the demographics page before the
items, the aid-use question after them), adds a Likert item to the page after, declares the aid-use answer a
participant factor, lets people answer by keys, buttons or touch (answer_input "buttons_touch") and opens the
study. Participant 1 takes it on a desktop window with the F and J keys; participant 2 on a phone-sized touch
screen (is_mobile, has_touch, 390 × 844) with taps only. Each loses a reply on the way back (participant 1 a
questionnaire answer's, participant 2 a trial's: saved on the server, re-sent by the page) and reloads mid-way
(participant 1 among the trials, participant 2 on the demographics page): every answer is stored once, none lost.
Then the researcher builds the report from the admin (real R, in the server's thread), and its data files, its
codebook and its report page show the questionnaire answers, aid use as a participant factor, and each trial's
device and answer channel.
"""
from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

import pandas as pd
import pytest

from analysis.models import Report, ReportStatus
from designs.modal.items import items_generate
from experiments import services
from experiments.models import Item, Participant, Question, QuestionnaireAnswer, Trial
from experiments.models.participants import KeyMapping
from experiments.participation.trials import KEY_ANSWERS
from experiments.participation.services import human_arm_ensure
from experiments.schema import pseudonym
from logic.questions import AID_USE_KEY
from tests.e2e.admin_walk import admin_walk
from tests.e2e.chromium import COMPLETION, press_to_start

TRIALS = 4
READ_MS = 250  # a trial read before it is answered: the report's default rule leaves out answers under 200 ms
INSTRUCTIONS = "In this study, written by us: read {statements}, then answer {answer_how}."
DEBRIEF = "Thank you. This study compares how people and language models reason about possibility."
IPHONE = ("Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) "
          "Version/17.0 Mobile/15E148 Safari/604.1")
DESK, PHONE = "owndesk00000000000000000a1", "ownphone0000000000000000a2"
# Which trials each participant answers rightly (by the item's gold answer and their key mapping): two right and
# two wrong each, so the people's models have answers that differ (all right or all wrong is a section said to be
# absent, analysis/sections.py's response_constant; random answers met that about one run in sixteen).
RIGHT = {DESK: (True, False, False, True), PHONE: (False, True, True, False)}
# each participant's answers: demographics, then aid use and the Likert item after the items
ANSWERS = {DESK: {"age_band": "25–34", "first_language": "Yes", AID_USE_KEY: "No", "confidence": "4"},
           PHONE: {"age_band": "18–24", "first_language": "No", AID_USE_KEY: "Yes", "confidence": "2"}}


def _draft_study():
    """A draft 003 study with its items and a small human arm (no practice, no attention checks): what the
    researcher then edits in the admin."""
    study = services.study_create(slug="own-study", title="Own study", design="modal-syllogisms")
    items_generate(study=study, design="modal-syllogisms", interpretations=6, seed=0)
    arm = human_arm_ensure(study=study)
    arm.items_per_participant, arm.blank_ms, arm.practice, arm.attention_checks = TRIALS, 50, [], []
    arm.save()
    return study


def _lose_a_reply(path: str, lost: list, guard):
    """A route: the first POST to `path` reaches the server (saved there) and its reply is dropped on the way
    back, so the page sends it again; everything else goes through `guard`."""

    def route(r):
        if r.request.method == "POST" and r.request.url.endswith(path) and not lost:
            lost.append(r.fetch().status)
            return r.abort("connectionreset")
        return guard(r)

    return route


def _saved(page, key: str) -> None:
    page.wait_for_selector(f"#question-{key}[data-saved=yes]")


def _confirmed(page) -> None:
    """Wait until the server has confirmed every trial answered so far (none waits in localStorage)."""
    page.wait_for_function("() => Object.keys(localStorage).some((k) => k.endsWith(':queue'))"
                           " && Object.keys(localStorage).filter((k) => k.endsWith(':queue'))"
                           ".every((k) => JSON.parse(localStorage.getItem(k)).length === 0)")


def _armed(page) -> int:
    """The trial shown, once it takes an answer, read for a moment (the report leaves out answers under 200 ms)."""
    page.wait_for_selector("#stage[data-state=armed]")
    page.wait_for_timeout(READ_MS)
    return int(page.get_attribute("#stage", "data-index"))


def _letter(pid: str, index: int) -> str:
    """The key (f or j) that answers trial `index` of participant `pid` rightly or wrongly, as RIGHT says."""
    person = Participant.objects.get(prolific_pid=pid)
    gold = Item.objects.get(pk=person.plan[index]).gold_answer
    means = KEY_ANSWERS[KeyMapping(person.key_mapping)]
    return next(letter for letter, answer in means.items() if (answer.value == gold) == RIGHT[pid][index])


def _researcher_sets_up(walk, study) -> None:
    """The admin: both default questionnaires switched on, a Likert item added after the items, then the
    study's texts, answer input, participant factor and consent review, and the study opened."""
    page = walk.page
    page.goto(walk.change(study))
    page.click("#questionnaires a:has-text('About you')")
    page.check("#id_enabled")
    page.click("input[name=_save]")
    page.wait_for_selector(".messagelist")
    page.goto(walk.change(study))
    page.click("#questionnaires a:has-text('One last question')")
    page.check("#id_enabled")
    page.click(".inline-group .add-row a")  # add a question: the Likert item
    new = "#id_questions-1-"
    page.fill(f"{new}position", "1")
    page.fill(f"{new}key", "confidence")
    page.select_option(f"{new}kind", "likert")
    page.check(f"{new}required")
    page.fill(f"{new}text", "How confident are you in your answers?")
    page.fill(f"{new}scale_points", "5")
    page.fill(f"{new}scale_low_label", "Not at all")
    page.fill(f"{new}scale_high_label", "Completely")
    page.click("input[name=_save]")
    page.wait_for_selector(".messagelist")
    assert not page.query_selector(".errornote"), page.inner_text("#content")[:3000]

    def texts(page) -> None:
        page.fill("#id_human_arm-0-instructions_text", INSTRUCTIONS)
        page.fill("#id_human_arm-0-debrief_text", DEBRIEF)
        page.select_option("#id_human_arm-0-answer_input", "buttons_touch")
        page.fill("#id_participant_factors", AID_USE_KEY)

    walk.human_arm(study, items_per_participant=TRIALS, more=texts)
    assert "In this study, written by us" in page.inner_text("#content")  # the staff preview of the texts
    assert "aid_use, confidence" in page.inner_text("#questionnaires")
    walk.action("open_studies", study.pk)
    page.wait_for_selector(".messagelist")
    study.refresh_from_db()
    assert study.status == "open", page.inner_text("#content")[:2000]


def _desktop(page, entry: str) -> list[int]:
    """Participant 1: a desktop window, the F and J keys; a reload among the trials."""
    page.goto(entry)
    page.click("#agree")
    page.wait_for_selector("body[data-step=questions_before] #questionnaire[data-ready=yes]")
    for key in ("age_band", "first_language"):
        page.check(f"#question-{key} input[value='{ANSWERS[DESK][key]}']")
        _saved(page, key)  # the first answer's reply is lost: re-sent, then saved
    page.click("#continue")
    page.wait_for_selector("body[data-step=instructions]")
    assert "In this study, written by us" in page.inner_text("#instructions-text")
    page.click("#continue")
    press_to_start(page)
    shown = []
    for n in range(TRIALS):
        if n == 2:
            _confirmed(page)  # SQLite's in-memory test database serves no page while another thread writes
            page.reload()  # resumed at the first unanswered trial, after a start screen
            assert f"Welcome back: 2 of {TRIALS}" in press_to_start(page)
        shown.append(_armed(page))
        page.keyboard.press(f"Key{_letter(DESK, shown[-1]).upper()}")
    page.wait_for_selector("body[data-step=questions_after] #questionnaire[data-ready=yes]")
    for key in (AID_USE_KEY, "confidence"):
        page.check(f"#question-{key} input[value='{ANSWERS[DESK][key]}']")
        _saved(page, key)
    page.click("#continue")  # the form re-sends every answer of the page
    page.wait_for_selector("#debrief")
    assert "reason about possibility" in page.inner_text("#debrief")
    page.click("#redirect")
    page.wait_for_url(COMPLETION)
    return shown


def _phone(page, entry: str) -> list[int]:
    """Participant 2: a phone, taps only; a reload on the demographics page."""
    page.goto(entry)
    page.locator("#agree").tap()
    page.wait_for_selector("body[data-step=questions_before] #questionnaire[data-ready=yes]")
    page.locator(f"#question-age_band input[value='{ANSWERS[PHONE]['age_band']}']").tap()
    _saved(page, "age_band")
    page.reload()  # mid-page: the answer given is kept
    page.wait_for_selector("#questionnaire[data-ready=yes]")
    assert page.is_checked(f"#question-age_band input[value='{ANSWERS[PHONE]['age_band']}']")
    page.locator(f"#question-first_language input[value='{ANSWERS[PHONE]['first_language']}']").tap()
    _saved(page, "first_language")
    page.locator("#continue").tap()
    page.wait_for_selector("body[data-step=instructions]")
    assert "tapping or clicking the Yes or No button" in page.inner_text("#instructions-text")
    page.locator("#continue").tap()
    page.wait_for_selector("#stage[data-state=intro]")
    assert page.evaluate("() => matchMedia('(pointer: coarse)').matches")  # the page sees a touch screen
    page.locator("#start-button").tap()
    shown = []
    for _ in range(TRIALS):
        shown.append(_armed(page))
        page.locator(f"#answer-{_letter(PHONE, shown[-1])}").tap()  # the first trial's reply is lost: re-sent
    page.wait_for_selector("body[data-step=questions_after] #questionnaire[data-ready=yes]")
    for key in (AID_USE_KEY, "confidence"):
        page.locator(f"#question-{key} input[value='{ANSWERS[PHONE][key]}']").tap()
        _saved(page, key)
    page.locator("#continue").tap()
    page.wait_for_selector("#debrief")
    page.locator("#redirect").tap()
    page.wait_for_url(COMPLETION)
    return shown


def _report(walk, study) -> Report:
    """The analysis report from the studies' action (no model runs: the people's side), built by real R in the
    server's thread; the page then shows its report.html."""
    page = walk.page
    walk.action("run_analysis", study.pk)
    try:  # the report is built inside this request (eager): its answer comes once R is done
        with page.expect_navigation(timeout=600_000):
            page.click("input[value='Run the report over the runs checked']")
    except Exception as exc:
        states = list(Report.objects.filter(study=study).values_list("status", "done", "total", "message"))
        raise AssertionError(f"no answer to the report's form: reports {states}; page {page.url}") from exc
    assert page.locator(".messagelist").count() == 1, page.content()[:3000]  # not an error page
    report = Report.objects.get(study=study, pilot=False)
    assert report.status == ReportStatus.DONE, report.message
    page.goto(f"{walk.admin}/analysis/report/{report.pk}/report.html")
    return report


@pytest.mark.django_db(transaction=True)
def test_a_researchers_own_study_from_the_admin_through_keys_and_touch_to_the_report(live_server, monkeypatch,
                                                                                      settings):
    settings.DUET_TASK_MODE = "eager"
    study = _draft_study()
    lost = {DESK: [], PHONE: []}
    with admin_walk(live_server, monkeypatch) as walk:
        _researcher_sets_up(walk, study)
        entry = f"{live_server.url}/s/{study.slug}/?STUDY_ID=st&SESSION_ID=s-{{}}&PROLIFIC_PID={{}}"

        desktop = walk.browser.new_context(viewport={"width": 1280, "height": 800})
        desktop.route("**/*", _lose_a_reply("/answer", lost[DESK], walk.guard))
        page = desktop.new_page()
        page.set_default_timeout(walk.page_ms)
        desk_shown = _desktop(page, entry.format(1, DESK))

        phone = walk.browser.new_context(viewport={"width": 390, "height": 844}, screen={"width": 390, "height": 844},
                                         is_mobile=True, has_touch=True, device_scale_factor=3, user_agent=IPHONE)
        phone.route("**/*", _lose_a_reply("/trial", lost[PHONE], walk.guard))
        page = phone.new_page()
        page.set_default_timeout(walk.page_ms)
        phone_shown = _phone(page, entry.format(2, PHONE))

        report = _report(walk, study)
        html = walk.page.inner_text("body")
        waiting = report.message.partition("waiting for data")[2]
        assert "aid_use" not in waiting, html.replace("\n", " | ")[:8000]  # the people's sections shown, else why not
        toc = walk.page.inner_text("ul:has(> li > a[href^='#']) >> nth=0")

    # each answer stored once, none lost, through the lost replies, re-sends and reloads
    assert lost == {DESK: [201], PHONE: [201]}  # each first save reached the server, its reply was lost
    assert desk_shown == phone_shown == list(range(TRIALS))
    people = {}
    for pid, device, channel in ((DESK, "desktop", "key"), (PHONE, "phone", "touch")):
        person = Participant.objects.get(study=study, prolific_pid=pid)
        people[pid] = pseudonym(person.pk)
        assert person.status == "completed"
        trials = list(Trial.objects.filter(participant=person).order_by("index"))
        assert [t.index for t in trials] == list(range(TRIALS)) and [t.item_id for t in trials] == person.plan
        assert {(t.device, t.answer_channel) for t in trials} == {(device, channel)}
        assert [t.correct for t in trials] == list(RIGHT[pid]), [t.correct for t in trials]
        stored = dict(QuestionnaireAnswer.objects.filter(participant=person).values_list("question__key", "value"))
        assert stored == ANSWERS[pid]
        assert QuestionnaireAnswer.objects.filter(participant=person).count() == len(ANSWERS[pid])
    assert Question.objects.filter(questionnaire__arm__study=study, key="confidence", kind="likert").exists()

    # the data files, the codebook and the report
    folder = Path(report.out_dir)
    answers = pd.read_csv(folder / "data" / "questionnaire.csv", keep_default_na=False, dtype=str)
    answers = answers.set_index("participant")
    for pid, label in people.items():
        assert answers.loc[label, list(ANSWERS[pid])].to_dict() == ANSWERS[pid]
    trials = pd.read_csv(folder / "data" / "trials.csv", keep_default_na=False)
    assert len(trials) == 2 * TRIALS
    assert dict(trials.groupby("participant")[["device", "answer_channel"]].first().apply(tuple, axis=1)) == {
        people[DESK]: ("desktop", "key"), people[PHONE]: ("phone", "touch")}
    book = pd.read_csv(folder / "codebook.csv", keep_default_na=False)
    described = set(zip(book["file"], book["column"]))
    assert {("data/questionnaire.csv", k) for k in ANSWERS[DESK]} <= described
    assert {("data/trials.csv", "device"), ("data/trials.csv", "answer_channel")} <= described
    likert = book[(book["file"] == "data/questionnaire.csv") & (book["column"] == "confidence")].iloc[0]
    assert "confident" in likert["description"]
    by_level = pd.read_csv(folder / "tables" / "people_by_aid_use_by_level.csv")
    assert dict(zip(by_level["level"], by_level["participants"])) == {"No": 1, "Yes": 1}
    answering = pd.read_csv(folder / "tables" / "answering.csv")
    assert {("desktop", "key"), ("phone", "touch")} <= set(zip(answering["device"], answering["answer_channel"]))
    assert "People by their answer to “aid_use” (questionnaire)" in html
    assert "People by their answer to “aid_use”" in toc, toc
    assert "phone" in html and "touch" in html
