"""Each design's paper decides how a model's answer to its items is read (issue 25 item 5, issue 29):
the answer forms summed and the decision rule are declared by the design's registry entry
(designs/<family>/design.py), a run records what it used, and a configuration that sets its own
says so in the report's configurations table. Scores come from the fake scorer through the one run
loop (services.model_run_execute), so every probability checked here was really computed."""
from __future__ import annotations

import ast
import math
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.urls import reverse

from experiments import design_registry as registry
from experiments.models import ItemKind
from inference import services, strategies
from inference.models import AnswerForms, DecisionRule, LanguageModel, ModelScore, RunStatus
from tests.factories import ItemFactory, StudyFactory

ROOT = Path(__file__).resolve().parents[2]
# What each paper says, written out here by hand (the test fails if a registry entry drifts from it):
# 003 §4.1 scores the tokens Yes and No; 000 Eq. 4 sums "Yes", "yes", "YES" and decides by the top
# token (§4.2); 004 reads a generated True/False (top token; Duet sums its words in three cases);
# 001 reads the letter written; a CSV bank has no paper and is scored as 003 scores.
PAPER = {
    "modal-syllogisms": ("answers", "relative"), "necessitation": ("answers", "relative"),
    "modal-distribution": ("answers", "relative"), "rulebreakers": ("cases", "top_token"),
    "dual-sided": ("cases", "top_token"), "multiple-choice": ("answers", "relative"),
    "csv-import": ("answers", "relative"),
}
EXPECTED_VARIANTS = {
    ("answers", ItemKind.YES_NO): {"yes": [" Yes"], "no": [" No"]},
    ("cases", ItemKind.YES_NO): {"yes": [" Yes", " yes", " YES"], "no": [" No", " no", " NO"]},
    ("all", ItemKind.YES_NO): {"yes": [" Yes", " yes", " YES", "Yes", "yes", "YES"],
                               "no": [" No", " no", " NO", "No", "no", "NO"]},
    ("answers", ItemKind.MULTIPLE_CHOICE): {x: [f" {x}"] for x in "ABCD"},
    ("all", ItemKind.MULTIPLE_CHOICE): {x: [f" {x}", x] for x in "ABCD"},
}


def _item(study, design: str, **more):
    if design == "multiple-choice":
        return ItemFactory(study=study, design=design, kind=ItemKind.MULTIPLE_CHOICE, gold_answer="B",
                           options=["w", "x", "y", "z"], **more)
    return ItemFactory(study=study, design=design, **more)


def _fake(name: str, **options) -> LanguageModel:
    return services.language_model_create(name=name, source=f"test/{name}", device="cpu", backend="fake", **options)


def _run(study, model, kind=None):
    run = services.model_run_create(study=study, language_model=model, kind=kind)
    assert services.model_run_execute(run_id=run.pk).status == RunStatus.DONE
    return run


def test_every_design_declares_its_papers_forms_and_rule():
    declared = {d.name: (d.scoring.answer_forms, d.scoring.decision_rule) for d in registry.all_designs()}
    assert declared == PAPER
    for design in registry.all_designs():  # each says where its paper says so
        assert design.scoring.forms_source and design.scoring.decision_source
    assert registry.scoring("modal-syllogisms").forms_source.startswith("003 §4.1")
    assert registry.scoring("rulebreakers").forms_source.startswith("000 Eq. 4")
    assert registry.scoring(registry.CATCH_ITEMS) == registry.UNREGISTERED_SCORING  # catch items: 003's way
    with pytest.raises(ValueError, match="unknown answer forms 'some'"):
        registry.Scoring(answer_forms="some")


@pytest.mark.django_db
@pytest.mark.parametrize("design", sorted(PAPER))
def test_a_run_with_the_paper_setting_records_each_designs_declared_forms_and_rule(design):
    study = StudyFactory(design=design)
    item = _item(study, design)
    model = _fake(f"fake-{design}")
    assert model.answer_forms == AnswerForms.PAPER and model.decision_rule == DecisionRule.PAPER  # the defaults
    kind = "multiple_choice" if design == "multiple-choice" else "items"
    run = _run(study, model, kind)
    score = ModelScore.objects.get(run=run, item=item)
    paper = registry.get(design).scoring
    assert (score.answer_forms, score.decision_rule) == (paper.answer_forms, paper.decision_rule)
    assert score.variants == EXPECTED_VARIANTS[(paper.answer_forms, item.kind)]
    # the probabilities are the summed variants' (000 Eq. 4 / 003 §4.1), nothing else
    p = {label: math.fsum(math.exp(score.logprobs[t]) for t in texts) for label, texts in score.variants.items()}
    assert set(score.logprobs) == {t for texts in score.variants.values() for t in texts}
    if item.kind == ItemKind.YES_NO:
        assert score.p_yes == pytest.approx(p["yes"], rel=1e-12) and score.p_no == pytest.approx(p["no"], rel=1e-12)
        assert score.soft_accuracy == pytest.approx(p["yes"] / (p["yes"] + p["no"]), rel=1e-12)  # gold yes
    else:
        assert score.soft_accuracy == pytest.approx(p["B"] / math.fsum(p.values()), rel=1e-12)
    decided = score.top_answer if paper.decision_rule == "top_token" else score.decision_relative
    assert score.decision == decided
    assert run.configuration["answer_forms"] == "paper" and run.configuration["decision_rule"] == "paper"


@pytest.mark.django_db
def test_a_phrasings_own_words_are_summed_in_the_papers_cases():
    """000's true/false phrasings: 'True', 'true', 'TRUE' (Eq. 4's 'likewise')."""
    study = StudyFactory(design="rulebreakers")
    item = _item(study, "rulebreakers", gold_answer="no", answer_words={"yes": "True", "no": "False"})
    score = ModelScore.objects.get(run=_run(study, _fake("fake-words")), item=item)
    assert score.variants == {"yes": [" True", " true", " TRUE"], "no": [" False", " false", " FALSE"]}
    assert score.p_no == pytest.approx(math.fsum(math.exp(score.logprobs[t]) for t in score.variants["no"]))


@pytest.mark.django_db
def test_a_configurations_own_forms_and_rule_override_every_design_and_the_report_says_so():
    from analysis import frames, runs

    study = StudyFactory(design="modal-syllogisms")
    modal, breaker = _item(study, "modal-syllogisms"), _item(study, "rulebreakers", gold_answer="no")
    paper = _run(study, _fake("fake-paper"))
    own = _run(study, _fake("fake-own", answer_forms=AnswerForms.ALL, decision_rule=DecisionRule.RELATIVE))
    for item in (modal, breaker):
        score = ModelScore.objects.get(run=own, item=item)
        assert (score.answer_forms, score.decision_rule) == ("all", "relative")
        assert score.variants == EXPECTED_VARIANTS[("all", ItemKind.YES_NO)]
        assert score.decision == score.decision_relative
    chosen = runs.select_runs(study)
    used = runs.used_ids(chosen)
    assert sorted(used) == sorted([paper.pk, own.pk])
    table = runs.configurations(chosen, frames.scores_frame(study, used), frames.variants_frame(used))
    table = table.set_index("configuration")
    said = table.loc["fake-paper", "variants"]
    assert said == ("modal-syllogisms: yes: ' Yes' | no: ' No' — the answers only, the paper's setting (003 §4.1: the "
                    "tokens Yes and No only) · rulebreakers: yes: ' Yes', ' yes', ' YES' | no: ' No', ' no', ' NO' — "
                    "the answers in three cases, the paper's setting (000 Eq. 4: p+(x) sums 'Yes', 'yes' and 'YES' "
                    "('True', 'true', 'TRUE' where the phrasing asks for true or false))")
    assert "rulebreakers: top token over the whole vocabulary (000 §4.2), the paper's setting" \
        in table.loc["fake-paper", "decision_rules"]
    own_said = table.loc["fake-own", "variants"]
    assert ("modal-syllogisms: yes: ' Yes', ' yes', ' YES', 'Yes', 'yes', 'YES' | no: ' No', ' no', ' NO', 'No', "
            "'no', 'NO' — every surface form (spacing × case), set by the configuration; the paper's: the answers "
            "only") in own_said
    assert "rulebreakers: " in own_said and own_said.endswith("set by the configuration; the paper's: the answers "
                                                              "in three cases")
    assert table.loc["fake-own", "decision_rules"] == (
        "modal-syllogisms: relative: p(Yes) vs p(No) (003 §4.1), set by the configuration; the same as the paper's; "
        "rulebreakers: relative: p(Yes) vs p(No) (003 §4.1), set by the configuration; the paper's: top token")


def test_the_decision_rule_and_forms_labels_name_exactly_the_designs_of_each():
    from inference.models import answer_forms_choices, decision_rule_choices

    top = sorted(d.name for d in registry.all_designs() if d.scoring.decision_rule == "top_token")
    relative = sorted(d.name for d in registry.all_designs() if d.scoring.decision_rule == "relative")
    assert top == ["dual-sided", "rulebreakers"]
    label = dict(decision_rule_choices())[DecisionRule.PAPER]
    assert label == (f"the rule of the item's design's paper: relative for {', '.join(relative)}; "
                     f"top token for {', '.join(top)}")
    assert "002" not in label and "000/002/004" not in label
    forms = dict(answer_forms_choices())[AnswerForms.PAPER]
    assert forms == ("the forms of the item's design's paper: the answers only for csv-import, modal-distribution, "
                     "modal-syllogisms, multiple-choice, necessitation; the answers in three cases for dual-sided, "
                     "rulebreakers")


@pytest.mark.django_db
def test_the_admin_and_the_command_show_those_labels(admin_client, capsys):
    from inference.models import paper_decision_label, paper_forms_label

    page = admin_client.get(reverse("admin:inference_languagemodel_add")).content.decode()
    assert "top token for dual-sided, rulebreakers" in page and '<select name="answer_forms"' in page
    assert "the answers in three cases for dual-sided, rulebreakers" in page
    with pytest.raises(SystemExit):
        call_command("run_model", "--help")
    def squeezed(text):  # argparse wraps its help at spaces and after hyphens
        return "".join(text.split())

    text = squeezed(capsys.readouterr().out)
    assert squeezed(paper_decision_label()) in text and squeezed(paper_forms_label()) in text


@pytest.mark.django_db
def test_no_variants_is_answers_only_and_refuses_a_contradiction():
    from django.core.management import CommandError

    study = StudyFactory(design="rulebreakers", slug="nv")
    _item(study, "rulebreakers")
    _fake("fake-nv")
    out = StringIO()
    call_command("run_model", "nv", "--model", "fake-nv", "--no-variants", "--no-progress", stdout=out)
    assert "New model configuration 'fake-nv [forms answers]'" in out.getvalue()
    assert LanguageModel.objects.get(name="fake-nv [forms answers]").answer_forms == "answers"
    score = ModelScore.objects.get()
    assert score.variants == {"yes": [" Yes"], "no": [" No"]} and score.answer_forms == "answers"
    assert score.decision_rule == "top_token"  # the rule is still the paper's
    with pytest.raises(CommandError, match="--no-variants means --answer-forms answers, not all"):
        call_command("run_model", "nv", "--model", "fake-nv", "--no-variants", "--answer-forms", "all")


@pytest.mark.django_db
def test_the_migrations_hold_every_model_change():
    """Callable choices: the migration stores the function, so a new design changes no migration."""
    call_command("makemigrations", "--check", "--dry-run", verbosity=0)
    text = (ROOT / "inference" / "migrations" / "0004_answer_forms.py").read_text(encoding="utf-8")
    assert "rulebreakers" not in text and "choices=inference.models.decision_rule_choices" in text


def _code_strings(path: Path) -> set[str]:
    """Every string constant of a module but its docstrings."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docs = {id(node.body[0].value) for node in ast.walk(tree)
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body
            and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)}
    return {node.value for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs}


def test_no_code_in_inference_names_a_design():
    """Issue 29: what a design's items need from the model arm comes from its registry entry."""
    names = {d.name for d in registry.all_designs()} | {registry.CATCH_ITEMS}
    found = []
    for path in sorted((ROOT / "inference").rglob("*.py")):
        if "migrations" in path.parts:
            continue
        text = path.read_text(encoding="utf-8")
        found += [f"{path.name}: {s!r}" for s in _code_strings(path) if s in names]
        found += [f"{path.name}: imports a design module" for bad in
                  ("logic import dual_sided", "logic import rulebreakers", ".DESIGN", "TOP_TOKEN_DESIGNS")
                  if bad in text]
    assert found == []


def test_registries_refuse_a_name_registered_twice():
    from experiments.participation import practice
    from inference import scorers
    from common.registry import Registry

    with pytest.raises(ValueError, match="run kind 'items' is registered twice"):
        strategies.register(strategies.for_kind("items"))
    with pytest.raises(ValueError, match="scorer 'fake' is registered twice"):
        scorers.register("fake")(scorers.REGISTRY["fake"])
    with pytest.raises(ValueError, match="design 'rulebreakers' is registered twice"):
        registry.register(registry.get("rulebreakers"))
    assert strategies.for_kind("items").kind == "items" and practice.default_for("rulebreakers")
    fresh = Registry("thing")
    assert fresh.add("a", 1) == 1 and dict(fresh) == {"a": 1} and len(fresh) == 1
    with pytest.raises(ValueError, match="Unknown thing 'b'; choose one of: a."):
        fresh.get_or_raise("b")


@pytest.mark.django_db(transaction=True)
def test_the_migration_keeps_what_existing_configurations_summed():
    """sum_variants True (every spacing and case) → 'all', False → 'answers': a configuration with runs
    keeps meaning the numbers it made; its runs' stored configurations and scores say the same."""
    from django.db import connection
    from django.db.migrations.executor import MigrationExecutor

    before, after = [("inference", "0003_configurations_exact_scoring")], [("inference", "0004_answer_forms")]
    executor = MigrationExecutor(connection)
    executor.migrate(before)
    old = executor.loader.project_state(before).apps
    OldModel, OldRun = old.get_model("inference", "LanguageModel"), old.get_model("inference", "ModelRun")
    OldScore = old.get_model("inference", "ModelScore")
    study = StudyFactory(design="modal-syllogisms")
    item = _item(study, "modal-syllogisms")
    made = {}
    for name, summed in (("summed", True), ("plain", False)):
        lm = OldModel.objects.create(name=name, source=f"test/{name}", sum_variants=summed)
        run = OldRun.objects.create(study_id=study.pk, language_model=lm, status="done",
                                    configuration={"name": name, "sum_variants": summed, "decision_rule": "paper"})
        OldScore.objects.create(run=run, item_id=item.pk, logprobs={}, token_ids={}, soft_accuracy=0.5,
                                decision="yes", perplexity=2.0, prompt_tokens=3, answer_mass=0.5)
        made[name] = run.pk
    executor = MigrationExecutor(connection)
    executor.migrate(after)
    # read through the models as they were at `after` (today's have columns added by later migrations)
    new = MigrationExecutor(connection).loader.project_state(after).apps
    NewModel, NewRun = new.get_model("inference", "LanguageModel"), new.get_model("inference", "ModelRun")

    assert dict(NewModel.objects.values_list("name", "answer_forms")) == {"summed": "all", "plain": "answers"}
    for name, forms in (("summed", "all"), ("plain", "answers")):
        run = NewRun.objects.get(pk=made[name])
        assert run.configuration == {"name": name, "answer_forms": forms, "decision_rule": "paper"}
        assert list(run.scores.values_list("answer_forms", flat=True)) == [forms]
    assert LanguageModel._meta.get_field("answer_forms").default == "paper"  # new configurations: the paper's
    executor = MigrationExecutor(connection)  # back to the latest schema, for the tests after this one
    executor.migrate(executor.loader.graph.leaf_nodes())


def test_the_registry_and_the_model_arm_share_one_vocabulary():
    """The designs registry cannot import inference (a lower layer): its rule and form names are
    checked here against the model arm's choices and the scorer's forms."""
    from inference.scorers import base

    assert set(registry.ANSWER_FORMS) == set(AnswerForms.values) - {"paper"} == set(base.FORMS)
    assert set(registry.DECISION_RULES) == set(DecisionRule.values) - {"paper"}
    assert {v for v, _ in ModelScore._meta.get_field("answer_forms").choices} == set(base.FORMS)
