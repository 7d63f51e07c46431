"""Simulated pilots: bots that take a study the way participants do (oTree's bots are the model).

A `Pilot` row records one request (how many bots, their answer and response-time profile, the
seed) and what came of it. `pilot_execute` walks each bot through the participant flow over HTTP,
through the same views and URLs a browser uses — session page, consent, instructions, practice,
every trial as the JSON the page sends, the completion — with Django's test client inside this
process. So a pilot exercises consent, lists, key mapping, saving and completion for real.

Bots are `Participant.is_simulated`: they may run on a draft study (a pilot comes before opening),
never hold a place of the real sample or count for its list and key balance (they are balanced
among themselves), and are left out of the study page's counts, the exports and every report but a
pilot report (analysis: `analyze --pilot`, the admin's "Build pilot report"), which says so.
"""
from __future__ import annotations

import dataclasses
import json
import math
import random
import re
import secrets
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field

from django.conf import settings
from django.db import models, transaction

from common import jobs

from ..design_registry import is_catch_item
from ..models import Item, ItemKind, KeyMapping, ParticipantStatus
from ..models import Pilot, PilotStatus  # noqa: F401  (the row: experiments/models/pilots.py)
from ..study_jobs import study_job_claim
from . import choice, flow, pilot_effects, questionnaires, trials
from .services import participant_start, simulated_ids


@dataclass(frozen=True)
class BotProfile:
    """How simulated participants answer: right with probability `accuracy` (catch items with
    `attention_accuracy`), response times log-normal around `rt_median_ms` with log-SD `rt_log_sd`.
    A built-in effect (pilot_effects, issue 47 item 5): `accuracy_by` {factor: {level: accuracy}} replaces the
    accuracy on the items of those levels, `rt_shift_by` {factor: {level: ms}} shifts their response times;
    both checked against the study by pilot_create (pilot_effects.for_study)."""

    accuracy: float = 0.8
    attention_accuracy: float = 1.0
    rt_median_ms: float = 1800.0
    rt_log_sd: float = 0.4
    accuracy_by: dict = field(default_factory=dict)
    rt_shift_by: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        problems = []
        for name in ("accuracy", "attention_accuracy"):
            value = getattr(self, name)
            if not (isinstance(value, (int, float)) and 0.0 <= value <= 1.0):
                problems.append(f"{name} must be a probability between 0 and 1 (got {value!r})")
        if not (isinstance(self.rt_median_ms, (int, float)) and 250.0 <= self.rt_median_ms <= 60_000.0):
            problems.append(f"rt_median_ms must be between 250 and 60000 ms (got {self.rt_median_ms!r})")
        if not (isinstance(self.rt_log_sd, (int, float)) and 0.0 <= self.rt_log_sd <= 2.0):
            problems.append(f"rt_log_sd must be between 0 and 2 (got {self.rt_log_sd!r})")
        problems += pilot_effects.check_values(self.accuracy_by, pilot_effects.ACCURACY)
        problems += pilot_effects.check_values(self.rt_shift_by, pilot_effects.RT_SHIFT)
        if problems:
            raise ValueError("; ".join(problems))

    @classmethod
    def from_dict(cls, values: dict) -> "BotProfile":
        known = set(cls.__dataclass_fields__)
        unknown = sorted(set(values) - known)
        if unknown:
            raise ValueError(f"Unknown bot profile setting(s) {unknown}; known: {sorted(known)}")
        return cls(**values)

    def accuracy_on(self, item) -> float:
        """P(right answer) on `item`: the catch-item accuracy on a catch item; else the accuracy named for the
        item's levels (pilot_effects.combined_accuracy), the overall accuracy where none is named."""
        if is_catch_item(item):
            return self.attention_accuracy
        named = [levels[value] for factor, levels in self.accuracy_by.items()
                 if (value := pilot_effects.item_value(item, factor)) in levels]
        return pilot_effects.combined_accuracy(self.accuracy, named)

    def rt_shift_on(self, item) -> float:
        """The response-time shift (ms) named for the item's levels, added up (0 where none is named)."""
        if is_catch_item(item):
            return 0.0
        return sum(levels.get(pilot_effects.item_value(item, factor), 0.0)
                   for factor, levels in self.rt_shift_by.items())

    def for_study(self, study) -> "BotProfile":
        """This profile with its built-in effects checked against `study` and written as its items store them
        (pilot_effects.for_study; ValueError naming an unknown factor or level)."""
        return dataclasses.replace(
            self, accuracy_by=pilot_effects.for_study(study, self.accuracy_by, pilot_effects.ACCURACY),
            rt_shift_by=pilot_effects.for_study(study, self.rt_shift_by, pilot_effects.RT_SHIFT))


MAX_PARTICIPANTS = 500


def pilot_create(*, study, participants: int, profile: BotProfile | None = None, seed: int | None = None,
                 run: bool = True) -> Pilot:
    """Record a pilot and send it to the workers (common.jobs); run=False only records it.
    Refused (experiments.study_jobs.StudyBusy) while the study has another pilot or power analysis
    queued or running."""
    if not 1 <= participants <= MAX_PARTICIPANTS:
        raise ValueError(f"A pilot has 1 to {MAX_PARTICIPANTS} simulated participants (got {participants}).")
    profile = (profile or BotProfile()).for_study(study)  # a built-in effect names the study's factors and levels
    with transaction.atomic():
        study_job_claim(study=study)  # one pilot or power analysis per study at a time (StudyBusy, a ValueError)
        return jobs.job_create(Pilot, send=run, study=study, participants=participants, total=participants,
                               profile=asdict(profile),
                               seed=secrets.randbits(31) if seed is None else seed)


def pilot_execute(*, pilot_id: int, on_progress=None) -> Pilot:
    """Run a queued pilot through the one job loop (common.jobs.job_execute): each bot through
    the participant flow over HTTP. Idempotent: a pilot that is not queued is returned as it is. A
    cancelled pilot stops before its next bot; a retried one walks the bots it has not walked yet
    (drawn from its seed and how many were walked). `on_progress(done, total)` is told each bot
    walked (the commands' progress lines)."""
    return jobs.job_execute(Pilot, pilot_id, PilotSteps(on_progress))


class PilotSteps(jobs.Steps):
    """A pilot's own steps: one bot after another, each counted as it ends."""

    related = ("study",)

    def run(self) -> dict:
        pilot = self.job
        self.start = time.perf_counter()
        first = pilot.done
        profile = BotProfile.from_dict(pilot.profile)
        rng = random.Random(pilot.seed if first == 0 else f"{pilot.seed}-{first}")
        for n in range(first, pilot.participants):
            self.checkpoint()  # cancelled meanwhile: no more bots
            completed, saved = _walk(pilot, n, profile, rng)
            Pilot.objects.filter(pk=pilot.pk).update(completed=models.F("completed") + int(completed),
                                                     trials=models.F("trials") + saved)
            self.progress(n + 1)
        pilot.refresh_from_db()
        seconds = time.perf_counter() - self.start
        return dict(seconds=seconds, message=(
            f"{pilot.participants} simulated participants, {pilot.completed} completed, {pilot.trials} "
            f"answers saved in {seconds:.1f} s."))

    def failure(self, error: Exception):
        return error, {"seconds": time.perf_counter() - self.start} if hasattr(self, "start") else {}


def pilot_cancel(*, pilot: Pilot) -> Pilot:
    return jobs.job_cancel(pilot)


def pilot_retry(*, pilot: Pilot) -> Pilot:
    """Queue a failed or cancelled pilot again: it walks the bots it has not walked yet."""
    return jobs.job_retry(pilot)


class BotError(RuntimeError):
    """The participant flow refused a bot where a participant would have gone on."""


class _Browser:
    """Django's test client as a bot's browser. Every request goes out as HTTPS when the site is served
    over HTTPS (DUET_HTTPS): the client takes `secure` per request, not in its constructor (given there,
    it was a stray WSGI variable and every bot got a 301 to https://: issue 26 item 9). The Origin
    header is the site's own, as a browser's is, for Django's CSRF check of HTTPS requests."""

    def __init__(self) -> None:
        from django.test import Client

        host = next((h.lstrip(".") for h in settings.ALLOWED_HOSTS if h not in ("*", "")), "localhost")
        self.secure = bool(getattr(settings, "HTTPS", False) or getattr(settings, "SECURE_SSL_REDIRECT", False))
        self.client = Client(enforce_csrf_checks=True, HTTP_HOST=host,
                             HTTP_ORIGIN=f"{'https' if self.secure else 'http'}://{host}",
                             HTTP_USER_AGENT="Mozilla/5.0 (X11; Linux x86_64) DuetPilotBot/1.0")
        self.cookies = self.client.cookies

    def get(self, path: str, **extra):
        return self.client.get(path, secure=self.secure, **extra)

    def post(self, path: str, data=None, **extra):
        return self.client.post(path, data, secure=self.secure, **extra)


def _client() -> _Browser:
    return _Browser()


class _Bot:
    """One simulated participant in its browser: its session page, its CSRF token, what it has saved."""

    def __init__(self, pilot: Pilot, n: int, profile: BotProfile, rng: random.Random, participant) -> None:
        self.pilot, self.n, self.profile, self.rng, self.participant = pilot, n, profile, rng, participant
        self.client = _client()
        self.base = f"/s/{pilot.study.slug}/p/{participant.token}/"
        self.token = ""
        self.saved, self.completed = 0, False

    def on_page(self, step: str) -> None:
        """Open the session page and check it shows the flow's step `step` (oTree's bots assert the page)."""
        response = self.client.get(self.base)
        _expect(response, 200, f"session page (step '{step}')")
        self.token = self.client.cookies["csrftoken"].value
        found = STEP_MARK.search(response.content.decode(errors="replace"))
        shown = found.group(1) if found else None
        if shown != step:
            raise BotError(f"The session page showed {f'the step {shown!r}' if shown else 'no step'} where the flow "
                           f"(experiments/participation/flow.py STEPS) has the step {step!r} next for a simulated "
                           "participant.")

    def post_form(self, step: str, data: dict) -> None:
        _expect(self.client.post(self.base + step, {**data, "csrfmiddlewaretoken": self.token}), (200, 302), step)


STEP_MARK = re.compile(r'<body[^>]*\sdata-step="([^"]*)"')  # templates/participant/base.html marks the step shown


def _consent(bot: _Bot) -> None:
    bot.post_form("consent", {"agree": "yes"})


def _instructions(bot: _Bot) -> None:
    bot.post_form("instructions", {})


def _practice(bot: _Bot) -> None:
    bot.post_form("practice", {})


def _trials(bot: _Bot) -> None:
    """Every trial of the bot's list, as the page sends it, then the finish (unless the session ended)."""
    pilot, n, profile, rng, participant = bot.pilot, bot.n, bot.profile, bot.rng, bot.participant
    items = {i.pk: i for i in Item.objects.filter(pk__in=participant.plan)}
    keys = _keys(participant)
    clock = 1_700_000_000_000.0 + rng.random() * 1e9
    for index, item_id in enumerate(participant.plan):
        item = items[item_id]
        right = rng.random() < profile.accuracy_on(item)
        answer = _answer(item, right, rng)
        rt = math.exp(math.log(profile.rt_median_ms) + profile.rt_log_sd * rng.gauss(0.0, 1.0))
        if profile.rt_shift_by:
            rt = max(rt + profile.rt_shift_on(item), pilot_effects.MIN_RT_MS)
        code = keys[answer]
        body = {"index": index, "item": item_id, "code": code, "key": code[-1].lower(),
                "idempotency_key": f"pilot-{pilot.pk}-{n}-{index}-{rng.getrandbits(32):08x}",
                "onset_ms": clock, "response_ms": clock + rt, "timed_out": False,
                "viewport_width": 1366, "viewport_height": 768, "focus_lost": False, "visibility_lost": False}
        clock += rt + 500.0
        response = bot.client.post(bot.base + "trial", json.dumps(body), content_type="application/json",
                                   HTTP_X_CSRFTOKEN=bot.token)
        _expect(response, (200, 201), f"trial {index}")
        bot.saved += 1
        if response.json().get("status") not in (None, ParticipantStatus.STARTED):
            return  # the session ended (a failed attention check that ends it)
    response = bot.client.post(bot.base + "finish", "{}", content_type="application/json", HTTP_X_CSRFTOKEN=bot.token)
    _expect(response, 200, "finish")
    bot.completed = response.json().get("status") == ParticipantStatus.COMPLETED


def _bot_answer(rule) -> str:
    """An answer a simulated participant gives to a required question (any valid one: a pilot tests the flow,
    not the questionnaire): the first choice, the scale's middle, the smallest number allowed, a word."""
    if rule.kind == "choice":
        return rule.choices[0]
    if rule.kind == "likert":
        scale = rule.scale()
        return str(scale[len(scale) // 2])
    if rule.kind == "number":
        return str(int(rule.minimum) if rule.minimum is not None and float(rule.minimum).is_integer() else
                   rule.minimum if rule.minimum is not None else 0)
    return "simulated"


def _questionnaires(placement: str) -> Callable[["_Bot"], None]:
    """The questionnaire pages of `placement`, each sent as its form sends it (required questions answered)."""
    def take(bot: _Bot) -> None:
        participant = bot.participant
        for _ in range(100):
            participant.refresh_from_db()
            page = questionnaires.current_page(participant=participant, arm=participant.study.human_arm,
                                               placement=placement)
            if page is None or participant.status != ParticipantStatus.STARTED:
                break
            data = {"questionnaire": page.questionnaire.pk}
            data |= {f"q{q.pk}": _bot_answer(q.rule()) for q in page.questions if q.required}
            bot.post_form("questionnaire", data)
        participant.refresh_from_db()
        if placement == "after":
            bot.completed = participant.status == ParticipantStatus.COMPLETED
    return take


# What a bot does on each step of the participant flow (experiments/participation/flow.py STEPS, by
# name); None: a last page, where the walk ends. The bot walks the flow's declared steps in order and
# on each checks the session page shows it: a step added to the flow is walked once it is named here,
# and until then every pilot fails with a message naming it.
BOT_STEPS: dict[str, Callable[[_Bot], None] | None] = {
    "ended": None, "consent": _consent, "instructions": _instructions, "practice": _practice, "trials": _trials,
    "questions_before": _questionnaires("before"), "questions_after": _questionnaires("after"),
}


def _walk(pilot: Pilot, n: int, profile: BotProfile, rng: random.Random) -> tuple[bool, int]:
    """One bot through the flow's declared steps: returns (completed, answers saved)."""
    unknown = [step.name for step in flow.STEPS if step.name not in BOT_STEPS]
    if unknown:  # before any participant is started: a pilot that cannot walk the flow changes nothing
        raise BotError(
            "The participant flow (experiments/participation/flow.py STEPS) has step(s) "
            f"{', '.join(map(repr, unknown))} that the simulated participants do not know how to take: give each an action in "
            "experiments/participation/pilot.py BOT_STEPS.")
    # random ids in the simulated namespace (services.simulated_ids): no entry link reaches them, and
    # a bot never takes over a participant's row
    pid, session = simulated_ids()
    participant, _ = participant_start(study=pilot.study, prolific_pid=pid, prolific_study_id=f"PILOT{pilot.pk}",
                                       prolific_session_id=session, simulated=True)
    bot = _Bot(pilot, n, profile, rng, participant)
    arm = participant.study.human_arm
    for step in flow.STEPS:
        participant.refresh_from_db()
        if not step.applies(participant, arm) or step.done(participant):
            continue
        bot.on_page(step.name)
        action = BOT_STEPS[step.name]
        if action is None:
            break
        action(bot)
        participant.refresh_from_db()
        if step.applies(participant, arm) and not step.done(participant):
            raise BotError(f"The participant flow kept a simulated participant at the step {step.name!r} after the "
                           "bot took it (the server did not record it as done).")
    participant.refresh_from_db()
    last = flow.current_step(participant, arm)
    bot.on_page(last.name)
    if BOT_STEPS[last.name] is not None:
        raise BotError(f"A simulated participant walked every step of the flow and was left at the step "
                       f"{last.name!r}, which is not a last page (BOT_STEPS gives it an action).")
    return bot.completed, bot.saved


def _answer(item, right: bool, rng: random.Random) -> str:
    if item.kind == ItemKind.MULTIPLE_CHOICE:
        letters = ["A", "B", "C", "D"]
        return item.gold_answer if right else rng.choice([x for x in letters if x != item.gold_answer])
    return item.gold_answer if right else ("no" if item.gold_answer == "yes" else "yes")


def _keys(participant) -> dict[str, str]:
    """answer → the key code that gives it for this participant (yes/no mapping, or the study's four keys)."""
    mc = choice.settings_for(participant.study)
    if mc is not None:
        return {letter: code for code, letter in mc.key_codes().items()}
    return {answer.value: f"Key{letter.upper()}"  # e.code of the F and J keys
            for letter, answer in trials.KEY_ANSWERS[KeyMapping(participant.key_mapping)].items()}


def _expect(response, status, what: str) -> None:
    wanted = status if isinstance(status, tuple) else (status,)
    if response.status_code not in wanted:
        text = response.content.decode(errors="replace")[:300]
        raise BotError(f"The participant flow refused a simulated participant at the {what}: "
                       f"HTTP {response.status_code}: {text}")
