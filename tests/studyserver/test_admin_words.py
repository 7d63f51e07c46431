"""The admin in the researcher's words (issue 29 part 5): every field a human label and help text,
structured values as tables, rounded numbers, menu names in messages, no command-line wording, the
queue only where workers take work."""
from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from django.contrib import admin
from django.contrib.admin.utils import flatten_fieldsets, label_for_field
from django.contrib.auth import get_user_model
from django.core.exceptions import FieldDoesNotExist
from django.test import RequestFactory
from django.utils.text import capfirst

from common.structured import number, structured_html

# Parts of a field name that are abbreviations or units: a label that is just such a name with its
# underscores as spaces ("pid param", "blank ms", "rt ms") is not in the researcher's words.
ABBREVIATIONS = {"ms", "id", "pid", "param", "url", "sd", "png", "dir", "n", "p", "q", "rt", "dtype", "gguf", "pk",
                 "utc", "min", "max", "json", "csv", "cc", "lm", "mc", "nsim", "num", "qty", "pct"}
# Fields that say what they are without help: a job's or row's status and its timestamps.
SELF_EXPLAINING = {"status", "created_at", "updated_at", "started_at", "finished_at"}
CLI_WORDING = re.compile(r"(?<![\w-])--[a-z]|manage\.py|python -m")
OURS = ("experiments", "inference", "analysis")


def _request():
    request = RequestFactory().get("/admin/")
    request.user = get_user_model()(username="walker", is_staff=True, is_superuser=True, is_active=True)
    return request


def _walk():
    """(admin, model, field name, label, help text, kind) for every field of every registered admin
    of Duet's apps, on its add page (where it has one), its change page and its inlines; kind is
    "model", "form" (a field the form declares) or "display" (an admin method)."""
    request = _request()
    for model, model_admin in admin.site._registry.items():
        if model._meta.app_label not in OURS:
            continue
        pages = [model(pk=987654321)] + ([None] if model_admin.has_add_permission(request) else [])
        admins = [(model_admin, pages)] + [(inline, [None]) for inline in model_admin.get_inline_instances(request)]
        for shown, objects in admins:
            for obj in objects:
                form = shown.get_formset(request).form if hasattr(shown, "fk_name") else shown.get_form(request, obj)
                for name in flatten_fieldsets(shown.get_fieldsets(request, obj)):
                    declared = form.declared_fields.get(name)
                    if declared is not None:
                        yield shown, shown.model, name, str(declared.label or ""), str(declared.help_text or ""), "form"
                        continue
                    try:
                        field = shown.model._meta.get_field(name)
                    except FieldDoesNotExist:
                        label = label_for_field(name, shown.model, shown)
                        yield shown, shown.model, name, str(label), "", "display"
                    else:
                        yield shown, shown.model, name, str(field.verbose_name), str(field.help_text), "model"


def _bare(name: str) -> str:
    """Django's own label for a field named `name` (its name, underscores as spaces, first letter capital)."""
    return capfirst(name.replace("_", " ").strip())


@pytest.mark.django_db
def test_every_field_the_admin_shows_has_a_human_label_and_help_text():
    seen, problems = set(), []
    for shown, model, name, label, help_text, kind in _walk():
        key = (model._meta.label, name)
        if key in seen:
            continue
        seen.add(key)
        where = f"{model._meta.label}.{name} ({type(shown).__name__}, {kind})"
        if set(name.split("_")) & ABBREVIATIONS and capfirst(label.strip()) == _bare(name):
            problems.append(f"{where}: label {label!r} is the field's name, not words")
        if kind != "display" and name not in SELF_EXPLAINING and not help_text.strip():
            problems.append(f"{where}: no help text")
        if CLI_WORDING.search(help_text) or CLI_WORDING.search(label):
            problems.append(f"{where}: command-line wording in {help_text or label!r}")
    assert len(seen) > 150  # the walk reached every admin (studies, arms, items, runs, reports, …)
    assert not problems, "\n".join(problems)


@pytest.mark.django_db
def test_the_walk_catches_a_bare_label_and_missing_help():
    """The check above is not vacuous: the Prolific parameter once read 'Pid param' with no help."""
    from experiments.models import HumanArm

    field = HumanArm._meta.get_field("pid_param")
    assert field.verbose_name == "Prolific ID URL parameter" and "PROLIFIC_PID" in field.help_text
    assert HumanArm._meta.get_field("blank_ms").verbose_name == "blank between questions (ms)"
    assert set("pid_param".split("_")) & ABBREVIATIONS and "Pid param" == _bare("pid_param")


def test_structured_values_are_nested_tables_with_escaped_text_and_rounded_numbers():
    html = str(structured_html({"name": "smollm2", "files": {"model.gguf": "ab12"}, "seconds": 8.876871205000043,
                                "note": "<script>x</script>", "used": True, "ids": [3, 4]}))
    assert html.startswith('<table class="structured">') and html.count("<table") == 2
    assert "<th scope='row'>files</th><td><table" in html  # nested, not JSON
    assert "8.877" in html and "8.876871" not in html
    assert "&lt;script&gt;" in html and "<script>" not in html
    assert "<td>yes</td>" in html and "<td>3, 4</td>" in html
    assert '{"' not in html and "[{" not in html
    rows = str(structured_html([{"rule": "fast trial", "removed": 3}, {"rule": "preview", "removed": 1, "extra": None}]))
    assert "<thead><tr><th scope='col'>rule</th><th scope='col'>removed</th><th scope='col'>extra</th></tr></thead>" in rows
    assert rows.count("<tr>") == 3 and "<td>—</td>" in rows
    warnings = str(structured_html(["first warning", "second warning"]))
    assert warnings == "<div>first warning</div><div>second warning</div>"
    assert str(structured_html({})) == "—" and str(structured_html([])) == "—" and str(structured_html(None)) == "—"
    assert "rt median ms" in str(structured_html({"rt_median_ms": 1800.0}))
    assert "median response time (ms)" in str(structured_html({"rt_median_ms": 1800.0},
                                                               labels={"rt_median_ms": "median response time (ms)"}))


def test_numbers_are_rounded_as_a_person_reads_them():
    assert number(8.876871205000043, unit="s") == "8.9 s"
    assert number(8.876871205000043) == "8.877"
    assert number(0.05000000001) == "0.05"
    assert number(123456.789) == "123,457"
    assert number(1800.0) == "1,800"
    assert number(20000) == "20,000"
    assert number(True) == "yes"
    assert number(float("nan")) == "nan"
    assert number(0.0000123) == "1.23 × 10^-5"


def test_messages_name_the_menu_as_the_admin_shows_it():
    """Every "A → B" a message points to is an app's menu name and one of its lists."""
    from django.apps import apps

    menus = {config.verbose_name: {str(m._meta.verbose_name_plural).capitalize() for m in config.get_models()}
             for config in apps.get_app_configs()}
    root = Path(__file__).resolve().parents[2]
    sources = [p for app in OURS for p in (root / app).rglob("*admin*.py")]
    pointers = [(p.name, a, b) for p in sources
                for a, b in re.findall(r"see ([A-Z][\w ]+?) → ([A-Z][\w ]+?)[.\"']", p.read_text(encoding="utf-8"))]
    assert len(pointers) >= 4, pointers  # the pilot, report, pilot report and power actions
    for file, menu, page in pointers:
        assert menu in menus, f"{file}: {menu!r} is not a menu (menus: {sorted(menus)})"
        assert page in menus[menu], f"{file}: {menu} has no {page!r} (it has {sorted(menus[menu])})"


@pytest.mark.django_db
def test_the_queue_is_shown_only_where_celery_workers_answer(settings, admin_client):
    from common import workers

    workers.forget()
    for mode in ("embedded", "eager"):
        settings.DUET_TASK_MODE = mode
        assert workers.listening() == () and not workers.queues_shown()
    settings.DUET_TASK_MODE = "celery"
    settings.CELERY_BROKER_URL = "redis://127.0.0.1:9/0"  # nothing listens there: no worker can answer
    from studyserver.celery import app

    original, app.conf.broker_url = app.conf.broker_url, settings.CELERY_BROKER_URL
    try:
        workers.forget()
        assert workers.listening(timeout=0.5) == ()
    finally:
        app.conf.broker_url = original
        workers.forget()
    settings.DUET_TASK_MODE = "embedded"
    page = admin_client.get("/admin/inference/modelrun/").content.decode()
    assert "column-queue" not in page


RAW_JSON_HTML = re.compile(r"\{\s*(&quot;|&#x27;|\")|\[\s*\{|\[\s*(&quot;|&#x27;)")


@pytest.mark.django_db
def test_no_change_page_shows_raw_json(admin_client, settings):
    """Every page with a structured value: the run, its scores, an item, a participant, a pilot, a
    report and a power analysis — tables and lists, never JSON text (the Chromium walk in
    tests/e2e/test_admin_words.py does the same for finished jobs at 1366 px)."""
    from analysis.power_plan import PowerPlan
    from analysis.power_services import power_request
    from analysis.services import report_request
    from designs.modal.items import items_generate
    from experiments import services
    from experiments.models import Item, Participant
    from experiments.participation.pilot import Pilot, PilotStatus, pilot_create
    from inference import services as inference

    settings.DUET_TASK_MODE = "embedded"
    study = services.study_create(slug="json-free", title="JSON free", design="modal-syllogisms")
    items_generate(study=study, design="modal-syllogisms", interpretations=1, seed=0)
    item = Item.objects.filter(study=study).order_by("pk").first()  # before any response: items are then fixed
    item.attributes, item.answer_words = {"source": "Table A1", "row": 3}, {"yes": "True", "no": "False"}
    item.save()
    model = inference.language_model_create(name="fake-json", source="test/fake-json", backend="fake")
    run = inference.model_run_create(study=study, language_model=model, item_limit=3)
    run = inference.model_run_execute(run_id=run.pk)
    assert run.versions and run.configuration and run.scores.count() == 3
    participant = Participant.objects.create(study=study, prolific_pid="a" * 24, key_mapping="f_yes",
                                             plan=[item.pk])
    pilot = pilot_create(study=study, participants=2, seed=1, run=False)
    # as if it had run (one job per study at a time), with the seconds a run once stored unrounded
    Pilot.objects.filter(pk=pilot.pk).update(status=PilotStatus.DONE, seconds=8.876871205000043)
    report = report_request(study=study, send=False)
    power = power_request(study=study, plan=PowerPlan(sizes=(4,), nsim=10), run=False)
    pages = {
        f"/admin/inference/modelrun/{run.pk}/change/": ("Configuration", "GGUF file", "Versions"),
        f"/admin/inference/modelscore/{run.scores.first().pk}/change/": ("Log probabilities", "Token IDs"),
        f"/admin/experiments/item/{item.pk}/change/": ("Table A1", "True"),
        f"/admin/experiments/participant/{participant.pk}/change/": ("List (item ids)",),
        f"/admin/experiments/pilot/{pilot.pk}/change/": ("median response time (ms)", "1,800", "8.9 s"),
        f"/admin/analysis/report/{report.pk}/change/": ("Model runs asked for",),
        f"/admin/analysis/poweranalysis/{power.pk}/change/": ("simulated studies per size", "target power"),
    }
    for url, words in pages.items():
        page = admin_client.get(url)
        assert page.status_code == 200, url
        html = page.content.decode()
        content = html.split('id="content"', 1)[1]
        # what the page shows, not Django's own attributes (an inline's data-inline-formset carries JSON for its script)
        content = re.sub(r'\sdata-[\w-]+="[^"]*"', "", content)
        found = RAW_JSON_HTML.search(content)
        assert found is None, f"{url}: {content[max(0, found.start() - 300):found.end() + 300]}"
        for word in words:
            assert word in content, (url, word)
        assert "Queue" not in content and "Worker queue" not in content, url  # embedded: no workers, no queue


@pytest.mark.django_db
def test_lists_show_rounded_numbers(admin_client):
    from designs.modal.items import items_generate
    from experiments import services
    from inference import services as inference

    study = services.study_create(slug="rounded", title="Rounded", design="modal-syllogisms")
    items_generate(study=study, design="modal-syllogisms", interpretations=1, seed=0)
    model = inference.language_model_create(name="fake-rounded", source="test/fake-rounded", backend="fake")
    run = inference.model_run_execute(run_id=inference.model_run_create(study=study, language_model=model,
                                                                         item_limit=4).pk)
    stored = list(run.scores.values_list("p_yes", flat=True))
    assert any(len(repr(p)) > 8 for p in stored)  # the fake scorer's probabilities have many digits
    html = admin_client.get("/admin/inference/modelscore/").content.decode()
    shown = re.findall(r'<td class="field-p_yes_rounded">([^<]+)</td>', html)
    # four significant digits: 0.2258, 0.009745
    assert len(shown) == 4 and all(re.fullmatch(r"0\.0*[1-9]\d{0,3}", value) for value in shown), shown
    assert sorted(float(v) for v in shown) == pytest.approx(sorted(stored), rel=1e-3)
    # and on a score's own page: every probability to four significant digits, none as stored
    score = run.scores.order_by("pk").first()
    page = admin_client.get(f"/admin/inference/modelscore/{score.pk}/change/").content.decode()
    content = page.split('id="content"', 1)[1]
    for field in ("p_yes", "p_no", "relative_p_yes", "soft_accuracy"):
        value = getattr(score, field)
        box = re.search(rf'field-{field}_rounded_page.*?<div class="readonly">([^<]+)<div>', content, re.S)
        assert box and box.group(1) == f"{value:.4g}" and repr(value) not in content, (field, value)


def test_the_action_forms_speak_the_researchers_words_too():
    """The forms the study actions ask first (a simulated pilot, a sample-size estimate)."""
    from analysis.power_admin import PowerForm
    from experiments.participation.pilot_admin import PilotForm

    problems = []
    for form in (PilotForm, PowerForm):
        for name, field in form.base_fields.items():
            label = str(field.label or capfirst(name.replace("_", " ")))
            if label == _bare(name) and set(name.split("_")) & ABBREVIATIONS:
                problems.append(f"{form.__name__}.{name}: label {label!r}")
            if not str(field.help_text or "").strip() and name != "pilot":  # pilot's label is a sentence
                problems.append(f"{form.__name__}.{name}: no help text")
    assert not problems, problems
    assert PowerForm.base_fields["alpha"].label == "Significance level (α)"  # once the bare "Alpha"



class _Visible(HTMLParser):
    """The text a browser shows of some HTML (Django's admin and forms render help text as HTML)."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []

    def handle_data(self, data):
        self.parts.append(data)


def visible(html: str) -> str:
    parser = _Visible()
    parser.feed(html)
    parser.close()
    return "".join(parser.parts)


@pytest.mark.django_db
def test_every_help_text_reads_as_written_when_rendered_as_html():
    """A help text is shown as HTML: '(/s/<short name>/)' read '(/s//)', its placeholder taken for a tag. Every
    field the admin shows, and every option of every design's generate and upload forms, reads as written."""
    from experiments.items.admin_views import options_form
    from experiments.design_registry import all_designs

    texts = {(model._meta.label, name): help_text for _, model, name, _, help_text, _ in _walk()}
    for design in all_designs():
        for upload in (False, True):
            for name, field in options_form(design, upload=upload).fields.items():
                texts[(design.name, name)] = str(field.help_text or "")
    assert len(texts) > 150
    lost = {key: text for key, text in texts.items() if visible(text) != text}
    assert not lost, lost
    assert visible("the study's link (/s/<short name>/)") == "the study's link (/s//)"  # what the check catches
