"""python manage.py run_model STUDY --model NAME_OR_PATH [--gguf-file F] [--batch-size B] [--device D]
                                  [--dtype …] [--prompt-format …] [--answers YES NO] [--answer-forms …]
                                  [--no-variants] [--decision-rule …] [--scope shown|all|subset]
                                  [--subset FACTOR=VALUE,VALUE …] [--limit N] [--kind …] [--queue] [--run ID]

Scores a study's items with a model configuration. An option that differs from the named
configuration gives another configuration (an existing one with exactly those options, else a new
one named after the base and what differs; the command says which) — never ignored. The run scores
the items of its scope (inference/scopes.py): by default what people could be shown; the command says
how many items each scope holds and about how long the run will take at the configuration's
measured rate. By default the
run executes in this process; --queue hands it to common.dispatch (Celery workers in
production). --run ID resumes an existing run (e.g. after its worker was killed).
"""
from __future__ import annotations

import json

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from experiments.selectors import study_by_slug
from inference import scopes, selectors, services, strategies
from inference.probes import probed_designs
from common.jobs import ProgressPrinter
from inference.models import (
    AnswerForms, DecisionRule, Dtype, ModelRun, PromptFormat, RunKind, RunScope, RunStatus, paper_decision_label,
    paper_forms_label,
)


class Command(BaseCommand):
    help = "Score a study's items with a Hugging Face language model (answer probabilities and perplexity)."

    def add_arguments(self, parser):
        parser.add_argument("study", nargs="?", help="study slug")
        parser.add_argument("--model", default="smollm2",
                            help="a registered model's name, a hub id, a local folder, or 'smollm2' (the embedded default)")
        parser.add_argument("--gguf-file", default="")
        parser.add_argument("--batch-size", type=int, default=16)
        parser.add_argument("--device", default="", help="auto, cpu, cuda or cuda:N (default: the model's)")
        parser.add_argument("--dtype", choices=Dtype.values, default=None,
                            help="default: the configuration's (float32 for a new one)")
        parser.add_argument("--prompt-format", choices=PromptFormat.values, default=None,
                            help="default: the configuration's (raw for a new one)")
        parser.add_argument("--answers", nargs=2, metavar=("YES", "NO"), default=None,
                            help="the answers scored (default: ' Yes' ' No' raw, 'Yes' 'No' chat)")
        parser.add_argument("--answer-forms", choices=AnswerForms.values, default=None,
                            help="which surface forms of the answers are summed (default: the configuration's; "
                                 f"paper for a new one: {paper_forms_label()}; answers: the answers only; cases: "
                                 "as given, lower and UPPER; all: every case with and without a leading space)")
        parser.add_argument("--no-variants", action="store_true", help="the same as --answer-forms answers")
        parser.add_argument("--decision-rule", choices=DecisionRule.values, default=None,
                            help=f"default: the configuration's (paper for a new one: {paper_decision_label()})")
        generation = parser.add_argument_group("generation mode (with --decision-rule generated)")
        generation.add_argument("--sampling", choices=["greedy", "sampled"], default=None)
        generation.add_argument("--samples", type=int, default=None, help="answers per item (sampled only)")
        generation.add_argument("--temperature", type=float, default=None)
        generation.add_argument("--max-new-tokens", type=int, default=None)
        generation.add_argument("--stop", action="append", default=None, help="a stop string (repeat for more)")
        generation.add_argument("--seed", type=int, default=None)
        generation.add_argument("--generation-prompt", choices=["paper", "zero-shot"], default=None,
                                help="each design's paper's prompt (004: two-shot chain of thought) or zero-shot")
        generation.add_argument("--answer-parser", default=None,
                                help="paper (each design's), first_word, answer_line, json or letter")
        parser.add_argument("--kind", choices=[RunKind.ITEMS, RunKind.MULTIPLE_CHOICE], default=None,
                            help="default: multiple_choice when every item of the study is, else items")
        parser.add_argument("--scope", choices=RunScope.values, default=None,
                            help="which of the study's items: shown (what people could be shown; the default where "
                                 "that holds items of the run's kind), all (every item) or subset (--subset)")
        parser.add_argument("--subset", action="append", default=None, metavar="FACTOR=VALUE,VALUE",
                            help="scope subset: score the items whose FACTOR (variant, condition, design, a descriptive "
                                 "column, …) is one of the values; repeat for more factors (each must match)")
        parser.add_argument("--limit", type=int, default=None,
                            help="score only the first N items of the scope: a partial run, which reports leave out "
                                 "unless asked")
        parser.add_argument("--queue", action="store_true", help="send the run to the Celery workers instead")
        parser.add_argument("--run", type=int, default=None, help="resume (or run) an existing run by id")
        parser.add_argument("--no-progress", action="store_true")
        parser.add_argument("--progress-every", type=float, default=5.0,
                            help="seconds between progress lines (items done, items/s, time left; default 5)")
        parser.add_argument("--knowledge-probe", action="store_true",
                            help="run 000 §4.1's knowledge probe instead, on the cities/instances of the study's items "
                                 f"of {probed_designs()}")

    def handle(self, *args, study, model, gguf_file, batch_size, device, limit, queue, run, no_progress,
               knowledge_probe, kind, progress_every, scope, subset, **options):
        try:
            run_obj = self._existing(run) if run is not None else self._create(
                study, model, gguf_file, batch_size, device, limit,
                RunKind.KNOWLEDGE_PROBE if knowledge_probe else kind, options, scope, subset,
            )
        except ValidationError as exc:
            raise CommandError(" ".join(exc.messages)) from None
        if queue:
            services.model_run_enqueue(run=run_obj)
            self.stdout.write(f"Queued run {run_obj.pk} on the '{run_obj.queue}' queue.")
            return
        partial = " (partial: --limit)" if run_obj.partial else ""
        scope = run_obj.scope_detail.get("rule") if run_obj.kind != RunKind.KNOWLEDGE_PROBE else ""
        rate = selectors.language_model_rate(language_model=run_obj.language_model, kind=run_obj.kind)
        self.stdout.write(
            f"Run {run_obj.pk}: {run_obj.language_model} on '{run_obj.study.slug}', {run_obj.items_total} "
            f"{'probes' if run_obj.kind == RunKind.KNOWLEDGE_PROBE else 'items'}{partial}"
            f"{f' ({scope})' if scope else ''}; {selectors.run_time_words(rate, run_obj.items_total - run_obj.items_done)}"
            f"{f' at {rate.words()}' if rate else ''}."
        )
        if not no_progress:
            self.stdout.write("Loading the model (a GGUF file is converted once, then read from var/models/)…")
        # the progress the admin shows on the run's page: items done, items/s, time left (common/jobs.py)
        printer = ProgressPrinter(self.stdout.write, label=f"Run {run_obj.pk}", every=progress_every,
                                  unit="probes" if run_obj.kind == RunKind.KNOWLEDGE_PROBE else run_obj.KIND.unit)
        result = services.model_run_execute(run_id=run_obj.pk, on_progress=None if no_progress else printer)
        if result.status == RunStatus.FAILED:
            raise CommandError(f"Run {result.pk} failed: {result.error}")
        if result.kind == RunKind.KNOWLEDGE_PROBE:
            known = result.probe_scores.filter(known=True).count()
            self.stdout.write(self.style.SUCCESS(
                f"Run {result.pk} {result.status}: {result.items_done}/{result.items_total} probes; the model knows {known}."
            ))
            for score in result.probe_scores.order_by("id")[:3]:
                self.stdout.write(f"  {score.prompt} → {score.target}: p={score.p_target:.4f}, top {score.top_token!r}")
            return
        self.stdout.write(self.style.SUCCESS(
            f"Run {result.pk} {result.status}: {result.items_done}/{result.items_total} items scored."
        ))
        for score in selectors.model_run_scores(run=result)[:3]:
            if score.p_yes is None:
                self.stdout.write(f"  {score.item.code}: decision {score.decision} soft accuracy={score.soft_accuracy:.3f} "
                                  f"(gold {score.item.gold_answer})")
                continue
            self.stdout.write(
                f"  {score.item.code}: p(yes)={score.p_yes:.4f} p(no)={score.p_no:.4f} "
                f"soft accuracy={score.soft_accuracy:.3f} perplexity={score.perplexity:.2f} (gold {score.item.gold_answer})"
            )

    @staticmethod
    def _forms(options) -> str | None:
        forms = options.get("answer_forms")
        if options.get("no_variants"):
            if forms not in (None, AnswerForms.ANSWERS):
                raise CommandError(f"--no-variants means --answer-forms answers, not {forms}.")
            return AnswerForms.ANSWERS
        return forms

    def _existing(self, run_id: int) -> ModelRun:
        run = ModelRun.objects.select_related("study", "language_model").filter(pk=run_id).first()
        if run is None:
            raise CommandError(f"No model run with id {run_id}.")
        if run.status in (RunStatus.FAILED, RunStatus.CANCELLED):
            services.model_run_transition(run=run, to=RunStatus.QUEUED)
        return run

    def _create(self, slug, model, gguf_file, batch_size, device, limit, kind, options, scope, subset) -> ModelRun:
        if not slug:
            raise CommandError("Name a study (its slug), or pass --run ID.")
        study = study_by_slug(slug=slug)
        if study is None:
            raise CommandError(f"No study with slug '{slug}'.")
        if batch_size < 1:
            raise CommandError("--batch-size must be at least 1.")
        if limit is not None and limit < 1:
            raise CommandError("--limit must be at least 1.")
        answers = options.get("answers") or (None, None)
        language_model, created = services.language_model_resolve(
            name_or_path=model, gguf_file=gguf_file, team=study.team, dtype=options.get("dtype"),
            prompt_format=options.get("prompt_format"), answer_yes=answers[0], answer_no=answers[1],
            answer_forms=self._forms(options), decision_rule=options.get("decision_rule"),
            **{name: options.get(name) for name in ("sampling", "samples", "temperature", "max_new_tokens", "seed",
                                                    "generation_prompt", "answer_parser")},
            stop=None if options.get("stop") is None else json.dumps(options["stop"]),
        )
        if created:
            self.stdout.write(self.style.WARNING(
                f"New model configuration '{language_model.name}' (the options differ from '{model}')."
            ))
        else:
            self.stdout.write(f"Model configuration '{language_model.name}'.")
        run = services.model_run_create(
            study=study, language_model=language_model, kind=kind, batch_size=batch_size, device=device,
            item_limit=limit, scope=scope, subset="\n".join(subset) if subset else None,
        )
        self._say_scopes(run)
        return run

    def _say_scopes(self, run: ModelRun) -> None:
        """How many items each scope of the study holds (the run's marked), as the admin's run form says."""
        if run.kind == RunKind.KNOWLEDGE_PROBE:
            return
        strategy = strategies.for_kind(run.kind)
        subset = run.subset if run.scope == RunScope.SUBSET else None
        for count in scopes.counts(study=run.study, strategy=strategy, subset=subset):
            if count.items is not None:
                mark = "*" if count.scope == run.scope else " "
                self.stdout.write(f" {mark} --scope {count.scope}: {count.items} items, {count.words}")
