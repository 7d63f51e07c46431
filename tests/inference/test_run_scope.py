"""A model run on what people see (issue 43 item 4): a run's scope — the items people could be shown (the
default), every item, or a stated subset of factor values — on the published RULEBREAKERS excerpt
(tests/data/published/rulebreakers/) imported in its ten phrasings, of which people see one. Through the
service, the admin's run form (the test client: the form states each scope's count and time before anything
is launched) and run_model --scope / --subset."""
from __future__ import annotations

import datetime as dt
import re
from io import StringIO
from pathlib import Path

import pytest
from django.core.exceptions import ValidationError
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import override_settings
from django.urls import reverse

from experiments.models import Item, Study
from experiments.participation import selectors as participation
from logic.shown_items import ItemsShown
from inference import scopes, selectors, services
from inference.models import ModelRun, RunKind, RunScope, RunStatus
from tests.admin_form import FormFields, change_form

pytestmark = pytest.mark.django_db

RULEBREAKERS = (Path(__file__).resolve().parents[1] / "data" / "published" / "rulebreakers"
                / "RULEBREAKERS_finegrained_excerpt.csv")
PAIRS = 26  # the excerpt's pairs (tests/data/published/README.md)
PHRASINGS = 10
PEOPLE = "follow/yes-no"  # the phrasing the import gives people (study.settings["human_variant"])


@pytest.fixture
def study() -> Study:
    call_command("import_items", "rulebreakers", str(RULEBREAKERS), "rb-scope", stdout=StringIO())
    return Study.objects.get(slug="rb-scope")


@pytest.fixture
def fake():
    return services.language_model_create(name="fake", source="/nowhere", device="cpu", backend="fake")


def _shown(study):
    """The study's items people could be shown: what its participant lists hold (the one definition)."""
    ids = participation.items_people_can_be_shown(study).item_ids
    return Item.objects.filter(pk__in=ids)


def _scored(run: ModelRun) -> set[int]:
    return set(run.scores.values_list("item_id", flat=True))


def test_the_import_stores_ten_phrasings_and_people_see_one(study):
    assert study.items.count() == PAIRS * 2 * PHRASINGS
    assert len(set(study.items.values_list("variant", flat=True))) == PHRASINGS
    assert study.settings["human_variant"] == PEOPLE
    shown = _shown(study)
    assert shown.count() == PAIRS * 2 and set(shown.values_list("variant", flat=True)) == {PEOPLE}


def test_a_run_scores_only_the_peoples_phrasing_by_default(study, fake):
    run = services.model_run_create(study=study, language_model=fake, batch_size=8)
    assert run.scope == RunScope.SHOWN and run.subset == {}
    assert run.items_total == PAIRS * 2 and not run.partial  # its whole scope: a report reads it
    assert f"the phrasing '{PEOPLE}'" in run.scope_detail["rule"]
    assert run.scope_detail["items"] == PAIRS * 2 and run.scope_detail["study_items"] == PAIRS * 2 * PHRASINGS
    run = services.model_run_execute(run_id=run.pk)
    assert run.status == RunStatus.DONE and run.items_done == PAIRS * 2
    assert _scored(run) == set(_shown(study).values_list("pk", flat=True))


def test_scope_all_scores_every_item_and_a_limit_applies_on_top(study, fake):
    every = services.model_run_execute(run_id=services.model_run_create(
        study=study, language_model=fake, scope=RunScope.ALL, batch_size=64).pk)
    assert every.status == RunStatus.DONE and every.items_total == every.items_done == PAIRS * 2 * PHRASINGS
    assert _scored(every) == set(study.items.values_list("pk", flat=True))
    check = services.model_run_execute(run_id=services.model_run_create(
        study=study, language_model=fake, item_limit=5).pk)
    shown = _shown(study).order_by("id").values_list("pk", flat=True)
    assert check.partial and check.scope == RunScope.SHOWN and _scored(check) == set(shown[:5])


def test_a_stated_subset_scores_the_items_of_its_factor_values(study, fake):
    two = "variant = follow/yes-no, follow/true-false"
    run = services.model_run_create(study=study, language_model=fake, subset=two, batch_size=64)
    assert run.scope == RunScope.SUBSET and run.subset == {"variant": ["follow/yes-no", "follow/true-false"]}
    assert run.items_total == PAIRS * 2 * 2 and "the stated subset: variant = follow/yes-no, follow/true-false" in \
        run.scope_detail["rule"]
    run = services.model_run_execute(run_id=run.pk)
    assert set(Item.objects.filter(pk__in=_scored(run)).values_list("variant", flat=True)) == {
        "follow/yes-no", "follow/true-false"}
    # factors combine: a descriptive column of the items, and the researcher's word 'phrasing' for variant
    rule = study.items.values_list("attributes__rule", flat=True).first()
    both = services.model_run_create(study=study, language_model=fake,
                                     subset=f"phrasing = follow/true-false\nrule = {rule}")
    expected = study.items.filter(variant="follow/true-false", attributes__rule=rule)
    assert 0 < both.items_total == expected.count() < PAIRS * 2
    with pytest.raises(ValidationError, match=r"variant: no item has 'follow/maybe' \(its values: .*follow/yes-no"):
        services.model_run_create(study=study, language_model=fake, subset="variant = follow/maybe")
    with pytest.raises(ValidationError, match=r"Subset: no column named 'colour'"):
        services.model_run_create(study=study, language_model=fake, subset="colour = red")
    with pytest.raises(ValidationError, match=r"'name = value, value'"):
        services.model_run_create(study=study, language_model=fake, subset="variant follow/yes-no")
    with pytest.raises(ValidationError, match=r"A subset is scope 'subset', not 'all'"):
        services.model_run_create(study=study, language_model=fake, scope=RunScope.ALL, subset=two)


def test_a_probe_run_asks_about_every_item(study, fake):
    with pytest.raises(ValidationError, match="its scope is every item"):
        services.model_run_create(study=study, language_model=fake, kind=RunKind.KNOWLEDGE_PROBE,
                                  scope=RunScope.SHOWN)


def test_a_shown_run_stops_when_what_people_see_changed_before_it_ran(study, fake):
    run = services.model_run_create(study=study, language_model=fake)
    study.settings = {**study.settings, "human_variant": "follow/true-false"}
    study.save(update_fields=["settings"])
    run = services.model_run_execute(run_id=run.pk)
    assert run.status == RunStatus.FAILED and not run.scores.exists()
    assert "What people could be shown changed since run" in run.error and "follow/true-false" in run.error


def _finished(run: ModelRun, *, seconds: float, load: float = 0.0) -> None:
    """Say `run` (scored) took `seconds` to score after `load` seconds of set-up."""
    start = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    since = start + dt.timedelta(seconds=load)
    ModelRun.objects.filter(pk=run.pk).update(started_at=start, progress_since=since, progress_from=0,
                                              finished_at=since + dt.timedelta(seconds=seconds))


def test_the_measured_rate_is_the_configurations_finished_runs_items_over_their_time(study, fake):
    assert selectors.language_model_rate(language_model=fake, kind=RunKind.ITEMS) is None
    check = services.model_run_execute(run_id=services.model_run_create(
        study=study, language_model=fake, item_limit=2).pk)
    _finished(check, seconds=1)
    rate = selectors.language_model_rate(language_model=fake, kind=RunKind.ITEMS)
    assert rate.runs == (check.pk,) and rate.per_second == 2.0  # only a check run: it is all there is
    first = services.model_run_execute(run_id=services.model_run_create(study=study, language_model=fake).pk)
    second = services.model_run_execute(run_id=services.model_run_create(
        study=study, language_model=fake, subset="variant = follow/true-false").pk)
    _finished(first, seconds=26, load=12)
    _finished(second, seconds=78)
    rate = selectors.language_model_rate(language_model=fake, kind=RunKind.ITEMS)
    assert set(rate.runs) == {first.pk, second.pk}  # complete runs: the check run left out
    assert rate.per_second == pytest.approx(2 * PAIRS * 2 / (26 + 78))
    assert selectors.run_time_words(rate, 520) == "about 8 min 40 s"  # 520 items at 1 item/s
    assert selectors.language_model_rate(language_model=fake, kind=RunKind.MULTIPLE_CHOICE) is None


# --------------------------------------------------------------------------- the admin's run form


def _launch(admin_client, url: str, page: str):
    parser = FormFields()
    parser.feed(page)
    fields = {**parser.data, "_save": "Save"}
    return admin_client.post(url, fields)


def test_the_run_form_states_each_scopes_count_and_time_and_launches_the_peoples_phrasing(
        admin_client, study, fake, django_capture_on_commit_callbacks):
    add = reverse("admin:inference_modelrun_add")
    url, page, fields = change_form(admin_client, f"{add}?study={study.pk}&language_model={fake.pk}")
    shown, every = PAIRS * 2, PAIRS * 2 * PHRASINGS
    assert re.search(rf"what people could be shown: the {shown} items of the study&#x27;s \d+ participant lists, "
                     rf"drawn from the phrasing &#x27;{PEOPLE}&#x27;.* — {shown} items, "
                     r"no measured rate yet \(the default\)", page), page
    assert f"every item of the study — {every} items, no measured rate yet" in page
    assert "(no measured rate yet: configuration &#x27;fake&#x27; has no finished run of yes/no items)" in page
    assert fields["scope"] == RunScope.SHOWN  # preselected: the default
    with override_settings(DUET_TASK_MODE="eager"), django_capture_on_commit_callbacks(execute=True):
        response = admin_client.post(url, {**fields, "batch_size": 16})
    assert response.status_code == 302, response.content.decode()[:3000]
    run = ModelRun.objects.get()
    assert run.scope == RunScope.SHOWN and run.status == RunStatus.DONE and run.items_done == shown
    assert set(Item.objects.filter(pk__in=_scored(run)).values_list("variant", flat=True)) == {PEOPLE}
    done = admin_client.get(reverse("admin:inference_modelrun_change", args=[run.pk])).content.decode()
    assert f"the phrasing &#x27;{PEOPLE}&#x27;" in done and f"{shown} of the study&#x27;s {every} items" in done

    # the next form: the time at the rate this run measured
    _finished(run, seconds=shown / 2)  # 2 items/s
    _, page, fields = change_form(admin_client, f"{add}?study={study.pk}&language_model={fake.pk}")
    assert f"{shown} items, about 26 s (the default)" in page and f"{every} items, about 4 min 20 s" in page
    assert f"2.00 items/s, measured on this configuration&#x27;s run {run.pk}" in page
    with override_settings(DUET_TASK_MODE="eager"), django_capture_on_commit_callbacks(execute=True):
        response = admin_client.post(url, {**fields, "scope": RunScope.ALL})
    assert response.status_code == 302
    assert ModelRun.objects.order_by("-pk").first().items_done == every  # `all` scores every item


def test_the_run_form_launches_nothing_before_it_has_shown_the_counts(admin_client, study, fake):
    add = reverse("admin:inference_modelrun_add")
    bare = admin_client.get(add).content.decode()
    assert "Choose the study and the configuration, then save" in bare
    first = admin_client.post(add, {"study": study.pk, "language_model": fake.pk, "batch_size": 16, "device": "",
                                    "item_limit": "", "scope": RunScope.SUBSET,
                                    "stated_subset": "variant = follow/yes-no, follow/true-false"})
    page = first.content.decode()
    assert first.status_code == 200 and not ModelRun.objects.exists()
    assert "Not launched yet" in page and f"— {PAIRS * 2 * 2} items, no measured rate yet" in page
    assert _launch(admin_client, add, page).status_code == 302  # the same choice, its count now shown: launched
    run = ModelRun.objects.get()
    assert run.scope == RunScope.SUBSET and run.items_total == PAIRS * 2 * 2
    refused = admin_client.post(add, {"study": study.pk, "language_model": fake.pk, "batch_size": 16,
                                      "scope": RunScope.SUBSET, "stated_subset": "variant = nope"})
    assert b"no item has &#x27;nope&#x27;" in refused.content and ModelRun.objects.count() == 1


# --------------------------------------------------------------------------- run_model


def test_run_model_takes_a_scope_and_says_each_scopes_count(study, fake):
    out = StringIO()
    call_command("run_model", study.slug, "--model", "fake", "--no-progress", stdout=out)
    run = ModelRun.objects.get()
    assert run.scope == RunScope.SHOWN and run.items_done == PAIRS * 2
    said = out.getvalue()
    assert re.search(rf" \* --scope shown: {PAIRS * 2} items, what people could be shown: the {PAIRS * 2} items of "
                     rf"the study's \d+ participant lists, drawn from the phrasing '{PEOPLE}'", said), said
    assert f"   --scope all: {PAIRS * 2 * PHRASINGS} items" in said and "no measured rate yet" in said
    call_command("run_model", study.slug, "--model", "fake", "--scope", "all", "--no-progress", stdout=StringIO())
    assert ModelRun.objects.order_by("-pk").first().items_done == PAIRS * 2 * PHRASINGS
    out = StringIO()
    call_command("run_model", study.slug, "--model", "fake", "--subset", "variant=follow/true-false",
                 "--no-progress", stdout=out)
    run = ModelRun.objects.order_by("-pk").first()
    assert run.scope == RunScope.SUBSET and run.items_done == PAIRS * 2
    assert set(Item.objects.filter(pk__in=_scored(run)).values_list("variant", flat=True)) == {"follow/true-false"}
    assert " * --scope subset: 52 items, the stated subset: variant = follow/true-false" in out.getvalue()
    with pytest.raises(CommandError, match="A subset is scope 'subset', not 'shown'"):
        call_command("run_model", study.slug, "--model", "fake", "--scope", "shown", "--subset", "variant=x",
                     stdout=StringIO())
    with pytest.raises(CommandError, match="invalid choice"):
        call_command("run_model", study.slug, "--model", "fake", "--scope", "some", stdout=StringIO())


def test_the_scope_reads_the_one_definition_of_what_people_could_be_shown(study, monkeypatch):
    """The run's scope reads items_people_can_be_shown (what the lists hold) and nothing else: change it, and the
    scope follows — three items apart, in two runs of ids, as the id-range filter writes them."""
    first = list(study.items.order_by("id")[:2]) + [study.items.order_by("-id").first()]
    monkeypatch.setattr(scopes, "items_people_can_be_shown",
                        lambda s: ItemsShown(item_ids=frozenset(i.pk for i in first), source="a test's choice"))
    assert set(scopes.Scope(RunScope.SHOWN).items(study).values_list("pk", flat=True)) == {i.pk for i in first}


def test_a_sweep_offers_the_scope_and_each_study_says_its_counts(admin_client, study, fake,
                                                                  django_capture_on_commit_callbacks):
    changelist = reverse("admin:inference_languagemodel_changelist")
    chosen = {"action": "run_sweep", "_selected_action": [fake.pk]}
    page = admin_client.post(changelist, chosen).content.decode()
    assert f"yes/no items: {PAIRS * 2} people could be shown, {PAIRS * 2 * PHRASINGS} in all" in page
    assert "fake: no measured rate yet" in page and not ModelRun.objects.exists()
    with override_settings(DUET_TASK_MODE="eager"), django_capture_on_commit_callbacks(execute=True):
        admin_client.post(changelist, {**chosen, "confirm": "yes", "study": study.pk, "batch_size": 64,
                                       "scope": RunScope.ALL}, follow=True)
    run = ModelRun.objects.get()
    assert run.scope == RunScope.ALL and run.items_done == PAIRS * 2 * PHRASINGS
    with override_settings(DUET_TASK_MODE="eager"), django_capture_on_commit_callbacks(execute=True):
        admin_client.post(changelist, {**chosen, "confirm": "yes", "study": study.pk, "batch_size": 64}, follow=True)
    assert ModelRun.objects.order_by("-pk").first().items_done == PAIRS * 2  # the default: what people see
