"""The model arm's admin in a real headless Chromium at 1366 × 768, as a new researcher meets it (issue 34
item 7, issue 35 item 3): the model-run and report lists fit their box, status and progress on screen
without scrolling sideways; a configuration saved through the add form keeps its answers' spaces and
scores an item exactly as the configuration run_model makes of the same options.

Background work runs in the server's own thread (DUET_TASK_MODE=eager), as in test_admin_study.py.
"""
from __future__ import annotations

from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import call_command
from django.utils import timezone

from analysis.models import Report
from inference import services
from inference.models import LanguageModel, ModelRun, RunStatus
from tests.e2e.admin_walk import WIDTH, admin_walk
from tests.factories import ItemFactory, StudyFactory
from tests.inference.tiny_models import PROMPTS

LONG_ERROR = ("The server at http://gpu-node-17.example.org:8000 answers /v1/models but not a one-token completion "
              "within 15 s: it may still be loading the model or be busy. Save again once it answers completions.")


def _lists_fixture():
    """Runs and reports as a lab's lists hold them: long names and errors, one of each status."""
    study = StudyFactory(slug="modal-syllogisms-replication-of-paper-003-spring-cohort", title="A long study title")
    for i in range(3):
        ItemFactory(study=study, prompt=PROMPTS[i], gold_answer="yes")
    model = services.language_model_create(
        name="SmolLM2-135M-Instruct [chat, yes='Yes', no='No', forms cases, decision top_token]", source="/fake",
        backend="fake", device="cpu", prompt_format="chat", answer_yes="Yes", answer_no="No")
    now = timezone.now()
    for status in (RunStatus.QUEUED, RunStatus.RUNNING, RunStatus.DONE, RunStatus.FAILED):
        run = services.model_run_create(study=study, language_model=model)
        ModelRun.objects.filter(pk=run.pk).update(
            status=status, items_done=1 if status == RunStatus.RUNNING else (3 if status == RunStatus.DONE else 0),
            started_at=now - timedelta(minutes=5), finished_at=now if status == RunStatus.DONE else None,
            error=LONG_ERROR if status == RunStatus.FAILED else "")
        Report.objects.create(study=study, status=status, total=4, done=2, runs_requested=[1, 2, 3, 4, 5, 6],
                              runs_used=[1, 2, 3, 4, 5, 6], error=LONG_ERROR if status == RunStatus.FAILED else "")


@pytest.mark.django_db(transaction=True)
def test_the_run_and_report_lists_fit_1366_px_with_status_and_progress_on_screen(live_server, monkeypatch):
    _lists_fixture()
    with admin_walk(live_server, monkeypatch) as walk:
        page = walk.page
        for listing in ("inference/modelrun", "analysis/report"):
            page.goto(f"{walk.admin}/{listing}/")
            widths = page.evaluate("""() => {
                const table = document.querySelector('#result_list');
                const box = table.closest('.results') || table.parentElement;
                return {table: table.scrollWidth, box: box.clientWidth, page: document.documentElement.scrollWidth};
            }""")
            assert widths["table"] <= widths["box"], (listing, widths)
            assert widths["page"] <= WIDTH, (listing, widths)
            for column in ("status", "progress"):
                box = page.locator(f"#result_list th.column-{column}").first.bounding_box()
                assert box and box["x"] >= 0 and box["x"] + box["width"] <= WIDTH, (listing, column, box)
            statuses = page.evaluate("""() => [...document.querySelectorAll('#result_list td.field-status')].map(
                td => [td.innerText, td.scrollWidth <= td.clientWidth])""")
            assert len(statuses) == 4 and all(whole for _, whole in statuses), statuses  # no word cut in two
            failed = page.locator("#result_list .job-error").first.bounding_box()  # the error wraps in its cell
            assert failed and failed["x"] + failed["width"] <= WIDTH, (listing, failed)


# SmolLM2's log p(' Yes'), log p(' No') after this prompt, from an independent transformers computation
# (tests/inference/test_smollm2.py: PROMPTS[0], GOLDEN[0]).
GOLDEN_YES, GOLDEN_NO = -3.440708, -2.011333


@pytest.mark.django_db(transaction=True)
def test_a_configuration_saved_in_the_admin_scores_as_the_commands(live_server, monkeypatch, settings):
    """A new researcher adds the embedded SmolLM2 in the admin, leaving the prefilled answers (' Yes',
    ' No') as they are, and runs it on an item; run_model given the same model then finds that very
    configuration (same options, answers' spaces included) and scores the item to the same numbers,
    which are SmolLM2's golden log-probabilities. Before, the form stored 'Yes'/'No': run_model made
    another configuration and the admin's scored answers that take almost none of the mass."""
    import math

    from tests.inference.test_smollm2 import PROMPTS as SMOLLM2_PROMPTS

    settings.DUET_TASK_MODE = "eager"
    study = StudyFactory(slug="admin-vs-cli")
    item = ItemFactory(study=study, prompt=SMOLLM2_PROMPTS[0], gold_answer="yes")

    with admin_walk(live_server, monkeypatch) as walk:
        page = walk.page
        page.goto(f"{walk.admin}/inference/languagemodel/add/")
        assert page.input_value("#id_answer_yes") == " Yes" and page.input_value("#id_answer_no") == " No"
        page.fill("#id_name", "SmolLM2 from the admin")
        page.fill("#id_source", services.EMBEDDED_SOURCE)
        page.fill("#id_gguf_file", services.EMBEDDED_GGUF)
        page.fill("#id_device", "cpu")
        page.click("input[name=_save]")
        page.wait_for_selector(".messagelist, .errornote")
        assert not page.query_selector(".errornote"), page.inner_text("#content")[:3000]
        model = LanguageModel.objects.get(name="SmolLM2 from the admin")
        assert (model.answer_yes, model.answer_no) == (" Yes", " No")  # stored as shown
        assert "␣Yes / ␣No" in page.inner_text("#result_list")  # and shown with its space
        walk.model_run(study, model)

    admin_score = ModelRun.objects.get(language_model=model).scores.get(item=item)
    out = StringIO()
    call_command("run_model", study.slug, "--model", services.EMBEDDED_SOURCE, "--gguf-file", services.EMBEDDED_GGUF,
                 "--device", "cpu", "--no-progress", stdout=out, stderr=StringIO())
    assert LanguageModel.objects.count() == 1, out.getvalue()  # the command's options are the admin's configuration
    command_run = ModelRun.objects.exclude(pk=admin_score.run_id).get()
    assert command_run.language_model_id == model.pk
    command_score = command_run.scores.get(item=item)
    for name in ("p_yes", "p_no", "relative_p_yes", "answer_mass", "perplexity"):
        assert getattr(admin_score, name) == pytest.approx(getattr(command_score, name), abs=1e-6), name
    assert (admin_score.decision, admin_score.top_token) == (command_score.decision, command_score.top_token)
    assert admin_score.p_yes == pytest.approx(math.exp(GOLDEN_YES), abs=2e-4 * math.exp(GOLDEN_YES))
    assert admin_score.p_no == pytest.approx(math.exp(GOLDEN_NO), abs=2e-4 * math.exp(GOLDEN_NO))


@pytest.mark.django_db(transaction=True)
def test_the_configurations_menus_stay_inside_the_page_at_1366_px(live_server, monkeypatch):
    """The answer-forms and decision-rule menus name the designs each choice applies to; at 1366 px they ran
    past the page's edge (1,834 px). Every menu of the add page now ends inside its form (admin_forms.css),
    and each keeps its choices whole in the list."""
    with admin_walk(live_server, monkeypatch) as walk:
        page = walk.page
        page.goto(f"{walk.admin}/inference/languagemodel/add/")
        menus = page.evaluate("""() => [...document.querySelectorAll('#languagemodel_form select')].map(s => {
            const form = s.closest('fieldset').getBoundingClientRect(), box = s.getBoundingClientRect();
            return {name: s.name, right: box.right, edge: form.right,
                    longest: Math.max(...[...s.options].map(o => o.text.length))}; })""")
        assert {m["name"] for m in menus} >= {"backend", "answer_forms", "decision_rule", "prompt_format"}
        assert max(m["longest"] for m in menus) > 150  # the long choices are there, whole
        for menu in menus:
            assert menu["right"] <= menu["edge"] <= WIDTH, menu
        assert page.evaluate("document.documentElement.scrollWidth") <= WIDTH
