"""What each run kind scores and stores: one strategy per kind, registered by kind.

The one run loop (services.model_run_execute) asks the run's strategy for its units (items or
probes), the keys already stored, the scorer's requests for a chunk, and the rows to save. A
strategy never runs a model itself: every kind goes through the same scorer (inference/scorers).

* items (yes/no): p(Yes), p(No) summed over the variants, soft accuracy, perplexity, decisions;
* multiple_choice: the four letters' probabilities (001), the same way;
* knowledge_probe: p(first token of the expected completion) and whether it is the top token (000 §4.1).

Which answer forms an item's score sums and which decision rule decides it are its design's paper's
(the designs registry's `Scoring`) unless the configuration sets its own: `item_scoring`.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace

from django.db import IntegrityError, models, transaction
from django.db.models.functions import Length

from experiments import design_registry as registry
from logic import answer_parsing, prompting
from experiments.models import Item, ItemKind, Study
from common.registry import Registry

from . import probes
from .scopes import EVERY, Scope
from .models import (
    RUN_KINDS, AnswerForms, DecisionRule, GeneratedAnswer, LanguageModel, ModelRun, ModelScore, ProbeScore,
    PromptFormat, RunKind, Sampling, stop_strings,
)
from .probes import Probe, study_probes
from .scorers import AnswerSet, Request, Result, summarise, summarise_options
from .scorers.base import OPTION_LETTERS, GenerationRequest, SamplingSpec


@dataclass(frozen=True)
class ItemScoring:
    """How one item's score is read under one configuration: the resolved rule and forms."""

    decision_rule: str  # relative or top_token
    answer_forms: str  # answers, cases or all


NUL_SHOWN = "\u2400"  # ␀: how a NUL character a model wrote is stored and shown


def storable(text: str) -> str:
    """A model's text as a database text field can hold it: PostgreSQL refuses NUL (0x00) characters,
    which a tokenizer can decode (a tiny or byte-level model's token); each is stored as ␀, everything
    else unchanged, so a run never fails on what its model wrote (the token id is kept as written)."""
    return text.replace("\x00", NUL_SHOWN) if "\x00" in text else text



def _setting(config: LanguageModel | dict, name: str) -> str:
    return (config.get(name) if isinstance(config, dict) else getattr(config, name)) or ""


def item_scoring(config: LanguageModel | dict, design: str) -> ItemScoring:
    """The rule and the answer forms of a score of an item of `design` under this configuration (a
    LanguageModel or its stored snapshot): the design's paper's (registry) where the configuration
    asks for 'paper', else the configuration's own."""
    paper = registry.scoring(design)
    rule, forms = _setting(config, "decision_rule"), _setting(config, "answer_forms")
    return ItemScoring(
        decision_rule=paper.decision_rule if rule in ("", DecisionRule.PAPER) else rule,
        answer_forms=paper.answer_forms if forms in ("", AnswerForms.PAPER) else forms,
    )


def model_answers(config: LanguageModel, forms: str = AnswerForms.ALL) -> AnswerSet:
    """The configuration's answers, scored in `forms` (an item's resolved forms: item_scoring; every
    request of a run carries its own, so the default is only the scorer's fallback)."""
    return AnswerSet.yes_no(config.answer_yes, config.answer_no, forms=forms)


class NotStored(RuntimeError):
    """Rows written that the database does not hold afterwards."""


@dataclass
class Strategy:
    kind: str
    row_model: type[models.Model]
    key_field: str  # the row's field holding the unit's key (item_id, probe_key)
    nothing_to_do: str  # the message when a study has no units of this kind ({slug})
    scoped = False  # whether a run of this kind may score a part of the study (inference/scopes.py)

    def nothing(self, study: Study) -> str:
        return self.nothing_to_do.format(slug=study.slug)

    def units(self, study: Study, scope: Scope = EVERY) -> list:
        raise NotImplementedError

    def key(self, unit) -> int | str:
        raise NotImplementedError

    def requests(self, run: ModelRun, units: list) -> list[Request]:
        raise NotImplementedError

    def rows(self, run: ModelRun, units: list, results: list[Result]) -> list[models.Model]:
        raise NotImplementedError

    def name(self, unit) -> str:
        """The unit as a researcher reads it in a message ("item MS-0017")."""
        raise NotImplementedError

    def row_name(self, row: models.Model) -> str:
        raise NotImplementedError

    def samples(self, run: ModelRun) -> int:
        """How many generated samples each unit's result carries (0: none)."""
        return 0

    def compute(self, scorer, run: ModelRun, units: list, on_done=None, stop=None) -> list[Result]:
        """The scorer's results for a chunk of units (in their order); `on_done(key)` as each is finished,
        `stop()` between the scorer's steps (it raises to stop: the run was cancelled)."""
        return scorer.score(self.requests(run, units), on_done=on_done, stop=stop)

    def store(self, run: ModelRun, rows: list[models.Model]) -> list[models.Model]:
        """Write a chunk's rows (inside the run loop's transaction); return those written now.

        A row whose key is already stored (a resumed run; another worker on the same run meanwhile) is
        kept as stored, never doubled; every other refusal is raised, and the keys are counted after
        writing, so no row is dropped without a word (an INSERT OR IGNORE would also drop a row SQLite
        refuses for a missing value; a database trigger or rule may drop one too)."""
        field = self.key_field
        keys = [getattr(row, field) for row in rows]
        stored = self.stored_among(run, keys)
        fresh = [row for row in rows if getattr(row, field) not in stored]
        try:
            with transaction.atomic():
                self.row_model.objects.bulk_create(fresh)
        except AssertionError:  # Django's: the database returned fewer rows than written (counted below)
            pass
        except IntegrityError:
            now = self.stored_among(run, keys)
            if now == stored:  # nobody stored any of them meanwhile: the database refused a row itself
                raise
            fresh = [row for row in rows if getattr(row, field) not in now]
            with transaction.atomic():
                self.row_model.objects.bulk_create(fresh)
        now = self.stored_among(run, keys)
        lost = [row for row in rows if getattr(row, field) not in now]
        if lost:
            raise NotStored(f"{len(lost)} of {len(rows)} scores written were not in the database afterwards "
                            f"({', '.join(self.row_name(row) for row in lost[:5])}{', …' if len(lost) > 5 else ''}); "
                            "the database dropped them without an error (a trigger or rule?), so the run stops here.")
        return fresh

    def stored_among(self, run: ModelRun, keys: list) -> set:
        return set(self.row_model.objects.filter(run=run, **{f"{self.key_field}__in": keys})
                   .values_list(self.key_field, flat=True))

    def missing(self, run: ModelRun, units: list | None = None) -> list:
        """The run's units (or `units`) whose row is not stored, in order."""
        stored = self.stored_keys(run)
        return [unit for unit in (self.run_units(run) if units is None else units) if self.key(unit) not in stored]

    def missing_keys(self, run: ModelRun, keys: list | None = None) -> list:
        """The keys of the run's units (or `keys`) whose row is not stored, in order: the keys only, so
        that a run of 256,000 items is checked without loading its items."""
        stored = self.stored_keys(run)
        return [key for key in (self.unit_keys(run) if keys is None else keys) if key not in stored]

    # --- shared ---------------------------------------------------------------------------------
    def run_units(self, run: ModelRun) -> list:
        """The run's units in order: every unit of the run's scope, the first `item_limit` if set."""
        found = self.units(run.study, Scope.of(run))
        return found[: run.item_limit] if run.item_limit else found

    def count(self, study: Study, scope: Scope = EVERY) -> int:
        """How many units the study has in `scope` (a complete run's total)."""
        return len(self.units(study, scope))

    def unit_keys(self, run: ModelRun) -> list:
        """The keys of run_units, in its order (the run loop walks these and loads a chunk at a time)."""
        return [self.key(unit) for unit in self.run_units(run)]

    def load(self, run: ModelRun, keys: list) -> list:
        """The run's units of `keys`, in that order."""
        wanted = set(keys)
        found = {self.key(unit): unit for unit in self.run_units(run) if self.key(unit) in wanted}
        return [found[key] for key in keys if key in found]

    def stored_keys(self, run: ModelRun) -> set:
        return set(self.row_model.objects.filter(run=run).values_list(self.key_field, flat=True))

    def stored_count(self, run: ModelRun) -> int:
        return self.row_model.objects.filter(run=run).count()


class ItemStrategy(Strategy):
    item_kind: str
    scoped = True

    def units(self, study: Study, scope: Scope = EVERY) -> list[Item]:
        return list(self._owned(study, scope).order_by("id"))

    def run_units(self, run: ModelRun) -> list[Item]:
        found = super().run_units(run)
        return sorted(found, key=lambda item: (len(item.prompt), item.pk))  # similar lengths share a batch

    def _owned(self, study: Study, scope: Scope = EVERY):
        return scope.items(study).filter(kind=self.item_kind)

    def count(self, study, scope=EVERY):
        return self._owned(study, scope).count()

    def unit_keys(self, run):
        """run_units' order (the prompt's length in characters, then the id) from two numbers per item."""
        owned = self._owned(run.study, Scope.of(run))
        if run.item_limit:
            owned = Item.objects.filter(pk__in=list(owned.order_by("id").values_list("id", flat=True)[: run.item_limit]))
        return [pk for _, pk in sorted(owned.annotate(chars=Length("prompt")).values_list("chars", "id"))]

    def load(self, run, keys):
        found = Item.objects.in_bulk(keys)
        return [found[key] for key in keys if key in found]

    def key(self, unit: Item) -> int:
        return unit.pk

    def name(self, unit: Item) -> str:
        return f"item {unit.code}"

    def row_name(self, row) -> str:
        return self.name(row.item)

    def samples(self, run):
        config = run.ran_with
        return sampling_spec(config).samples if config.generates else 0

    def answers(self, config: LanguageModel, item: Item) -> AnswerSet | None:
        raise NotImplementedError

    def requests(self, run, units):
        config = run.ran_with
        return [Request(key=item.pk, text=item.prompt, answers=self.answers(config, item)) for item in units]

    def rows(self, run, units, results):
        items = {item.pk: item for item in units}
        return [self.row(run, items[result.key], result) for result in results]

    # --- generation mode (decision rule 'generated') ----------------------------------------------
    def compute(self, scorer, run, units, on_done=None, stop=None):
        """Log-probabilities of the item's own prompt (perplexity, the likelier answer, the top token),
        and, in generation mode, the samples the model writes for the design's prompt setting (`on_done`
        then follows the samples, the longer part)."""
        config = run.ran_with
        if not config.generates:
            return scorer.score(self.requests(run, units), on_done=on_done, stop=stop)
        results = scorer.score(self.requests(run, units), stop=stop)
        spec = sampling_spec(config)
        asked = [GenerationRequest(key=item.pk, turns=item_turns(config, item), sampling=spec) for item in units]
        written = scorer.generate(asked, on_done=on_done, stop=stop)
        return [replace(result, prompt_sent=prompt, generations=tuple(samples))
                for result, (prompt, samples) in zip(results, written, strict=True)]

    def labels(self, config: LanguageModel, item: Item) -> dict[str, str]:
        """The parser's vocabulary for this item: normalised word → answer label."""
        raise NotImplementedError

    def read(self, run: ModelRun, item: Item, result: Result) -> tuple[answer_parsing.Tally, dict, list]:
        """Parse each sample: the tally, the score's `generation` record and its GeneratedAnswer rows."""
        config = run.ran_with
        design = registry.generation(item.design)
        parser = design.parser if config.answer_parser in ("", "paper") else config.answer_parser
        words = self.labels(config, item)
        answers, parsed = [], []
        for n, sample in enumerate(result.generations):
            thinking, answer_text = answer_parsing.split_thinking(sample.text)
            label = answer_parsing.parse(parser, answer_text, words)
            parsed.append(label)
            answers.append(GeneratedAnswer(sample=n, text=storable(sample.text), thinking=storable(thinking),
                                           answer_text=storable(answer_text),
                                           parsed=label, tokens=sample.tokens, finish_reason=sample.finish_reason))
        tally = answer_parsing.Tally(tuple(parsed))
        record = {"prompt": result.prompt_sent, "setting": design.prompt(config.generation_prompt).name,
                  "parser": parser, "n": tally.n, "counts": {label: tally.count(label) for label in sorted(set(parsed))},
                  "unparsed": tally.count(answer_parsing.OTHER), "sampling": config.sampling,
                  "seed": config.seed, "temperature": config.temperature if config.sampling == Sampling.SAMPLED else 0.0,
                  "max_new_tokens": config.max_new_tokens, "stop": list(stop_strings(config.stop))}
        return tally, record, answers

    def store(self, run, rows):
        """The scores, then the samples of those written now (a score stored earlier has its own)."""
        fresh = super().store(run, rows)
        pending = {row.item_id: row._answers for row in fresh if getattr(row, "_answers", None)}
        if not pending:
            return fresh
        stored = dict(ModelScore.objects.filter(run=run, item_id__in=pending).values_list("item_id", "pk"))
        GeneratedAnswer.objects.bulk_create(
            [replace_score(answer, stored[item]) for item, answers in pending.items() for answer in answers])
        return fresh

    def row(self, run: ModelRun, item: Item, result: Result) -> ModelScore:
        raise NotImplementedError

    def common(self, run: ModelRun, item: Item, result: Result, summary) -> dict:
        """The fields every item score has; `decision` is the one the item's rule picks."""
        scoring = item_scoring(run.ran_with, item.design)
        rule = scoring.decision_rule
        return {"answer_forms": scoring.answer_forms, "run": run, "item": item, "logprobs": result.logprobs, "token_ids": result.variants.token_ids(),
                "variants": result.variants.texts(), "prompt_tokens": result.prompt_tokens,
                "top_token": storable(result.top_token)[:100], "top_token_id": result.top_token_id, "decision_rule": rule,
                "decision": summary.top_answer if rule == DecisionRule.TOP_TOKEN else summary.decision_relative,
                "decision_relative": summary.decision_relative, "top_answer": summary.top_answer,
                "soft_accuracy": summary.soft_accuracy,
                "perplexity": None if math.isnan(summary.perplexity) else summary.perplexity,  # chat: none
                "answer_mass": summary.answer_mass, "outside_top_k": result.outside_top_k}


class YesNoStrategy(ItemStrategy):
    item_kind = ItemKind.YES_NO

    def answers(self, config, item):
        """The configuration's answers, or the words of the item's phrasing (' True'/' False', 000)
        where it has them, in the item's answer forms."""
        answers = model_answers(config, item_scoring(config, item.design).answer_forms)
        words = item.answer_words or {}
        if words.get("yes") and words.get("no"):
            return AnswerSet.words(answers, words["yes"], words["no"])
        return answers

    def labels(self, config, item):
        words = item.answer_words or {}
        said = {label: [text for text in (getattr(config, f"answer_{label}"), words.get(label)) if text]
                for label in ("yes", "no")}
        for label, extra in registry.generation(item.design).synonyms:
            said.setdefault(label, []).extend(extra)
        return answer_parsing.vocabulary(said)

    def row(self, run, item, result):
        s = summarise(result, item.gold_answer)
        if not result.generations:
            return ModelScore(**self.common(run, item, result, s), p_yes=s.p_yes, p_no=s.p_no,
                              relative_p_yes=s.relative_p_yes)
        tally, record, answers = self.read(run, item, result)
        yes, no = tally.count("yes"), tally.count("no")
        fields = {**self.common(run, item, result, s), "decision": tally.decision, "generation": record,
                  "soft_accuracy": tally.share(item.gold_answer), "answer_mass": (yes + no) / tally.n}
        score = ModelScore(**fields, p_yes=tally.share("yes"), p_no=tally.share("no"),
                           relative_p_yes=yes / (yes + no) if yes + no else None)
        score._answers = answers
        return score


class MultipleChoiceStrategy(ItemStrategy):
    item_kind = ItemKind.MULTIPLE_CHOICE

    def answers(self, config, item):
        return AnswerSet.letters(model_answers(config, item_scoring(config, item.design).answer_forms))

    def labels(self, config, item):
        return answer_parsing.vocabulary({letter: (letter,) for letter in OPTION_LETTERS})

    def row(self, run, item, result):
        o = summarise_options(result, item.gold_answer)
        if not result.generations:
            return ModelScore(**self.common(run, item, result, o), option_probs=o.option_probs)
        tally, record, answers = self.read(run, item, result)
        letters = list(o.option_probs)
        fields = {**self.common(run, item, result, o), "decision": tally.decision, "generation": record,
                  "soft_accuracy": tally.share(item.gold_answer),
                  "answer_mass": sum(tally.count(x) for x in letters) / tally.n}
        score = ModelScore(**fields, option_probs={x: tally.share(x) for x in letters})
        score._answers = answers
        return score


class ProbeStrategy(Strategy):
    """000 §4.1: p_target sums the probabilities of the distinct first tokens of the accepted
    completions (with a leading space for raw prompts, none after a chat template); known = the
    vocabulary's top token is one of them."""

    def units(self, study: Study, scope: Scope = EVERY) -> list[Probe]:
        return study_probes(study)  # every item's facts, whatever its phrasing (scopes.asked)

    def nothing(self, study: Study) -> str:
        return self.nothing_to_do.format(slug=study.slug, designs=probes.probed_designs())

    def key(self, unit: Probe) -> str:
        return unit.key

    def name(self, unit: Probe) -> str:
        return f"probe {unit.key!r}"

    def row_name(self, row) -> str:
        return f"probe {row.probe_key!r}"

    def requests(self, run, units):
        space = "" if run.ran_with.prompt_format == PromptFormat.CHAT else " "
        out = []
        for probe in units:
            accepted = list(dict.fromkeys(space + text.strip() for text in probe.accepted))
            answers = AnswerSet(answers=tuple((str(n), text) for n, text in enumerate(accepted)),
                                forms=AnswerForms.ANSWERS)
            out.append(Request(key=probe.key, text=probe.prompt, answers=answers))
        return out

    def rows(self, run, units, results):
        probes = {probe.key: probe for probe in units}
        out = []
        for result in results:
            probe = probes[result.key]
            first = list(dict.fromkeys(tokens[0] for tokens in result.variants.token_ids().values()))
            out.append(ProbeScore(
                run=run, probe_key=probe.key, prompt=probe.prompt, target=probe.target, target_token_ids=first,
                p_target=math.fsum(math.exp(result.first_token_logprobs[t]) for t in first),
                top_token=storable(result.top_token)[:100], known=result.top_token_id in first,
            ))
        return out


def sampling_spec(config: LanguageModel) -> SamplingSpec:
    greedy = config.sampling == Sampling.GREEDY
    return SamplingSpec(greedy=greedy, samples=1 if greedy else config.samples, temperature=config.temperature,
                        max_new_tokens=config.max_new_tokens, stop=stop_strings(config.stop), seed=config.seed)


def item_turns(config: LanguageModel, item: Item) -> tuple[tuple[str, str], ...]:
    """The turns a model reads for `item` in generation mode: the configuration's prompt setting of the
    item's design (its paper's by default: 004's two-shot chain of thought for dual-sided rules)."""
    setting = registry.generation(item.design).prompt(config.generation_prompt)
    text = prompting.ItemText(prompt=item.prompt, variant=item.variant or "", answer_words=item.answer_words or {})
    return tuple((turn.role, turn.text) for turn in setting.turns(text))


def replace_score(answer: GeneratedAnswer, score_id: int) -> GeneratedAnswer:
    answer.score_id = score_id
    return answer


REGISTRY: Registry[Strategy] = RUN_KINDS  # declared with the models (ModelRun.unfinished reads it)


def register(strategy: Strategy) -> Strategy:
    """Register the strategy of a run kind; a kind registered twice raises."""
    return REGISTRY.add(strategy.kind, strategy)


register(YesNoStrategy(RunKind.ITEMS, ModelScore, "item_id", "Study '{slug}' has no yes/no items to score; "
                       "generate or import some first."))
register(MultipleChoiceStrategy(RunKind.MULTIPLE_CHOICE, ModelScore, "item_id",
                                "Study '{slug}' has no multiple-choice items to score."))
register(ProbeStrategy(RunKind.KNOWLEDGE_PROBE, ProbeScore, "probe_key",
                       "Study '{slug}' has no items a knowledge probe asks about (items of: {designs}): the probe "
                       "asks about their cities and instances, so there is nothing to probe."))


def for_kind(kind: str) -> Strategy:
    try:
        return REGISTRY[kind]
    except KeyError:
        raise ValueError(f"No strategy for run kind {kind!r}; known: {', '.join(REGISTRY)}") from None


def default_kind(study: Study) -> str:
    """items, unless the study's items are all multiple choice."""
    kinds = set(Item.objects.filter(study=study).order_by().values_list("kind", flat=True).distinct())
    return RunKind.MULTIPLE_CHOICE if kinds == {ItemKind.MULTIPLE_CHOICE} else RunKind.ITEMS


def chunks(values: list, size: int) -> Iterable[list]:
    for start in range(0, len(values), size):
        yield values[start : start + size]


ProgressCallback = Callable[[int, int], None]
