"""The two save paths, driven by the same random sequences and compared row by row.

Two participants of one study get the same list and key mapping; every step of a random sequence is
applied to both: A through the trial endpoint's service (trials.trial_submit: PostgreSQL's one
statement first, the locked path for whatever it leaves), B through the locked ORM path alone
(trials.trial_record). Steps: the pages before the trials, answers right and wrong (catch items
included), other keys, response times past the ceiling, timeouts, another trial's item, re-sent and
clashing answers, finishing, expiry and erasure — under random arm settings (practice or none, a
time limit or none, the attention rule). After every step both got the same outcome, and their
participant rows and trial rows are equal column for column; and the rulebook's invariants hold:
no answer doubled, attention failures equal the wrong catch answers, a session ended by the
attention rule exactly when the rule says so.

On SQLite both go through the locked path (the only one there), so the comparison checks the
endpoint's service against the locked path and the invariants; on PostgreSQL (the second pass of
scripts/test.sh) it compares the one statement with the locked path.
"""
from __future__ import annotations

import itertools

import pytest
from django.contrib.auth import get_user_model
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule, run_state_machine_as_test

from experiments.models import HumanArm, Item, Participant, ParticipantStatus, Trial
from experiments.participation import services, trials
from experiments.participation.consent import consent_review
from experiments.models.attention import AttentionRule
from experiments.participation.erasure import participant_erase
from experiments.participation.payload import PayloadError, parse_trial
from experiments.participation.selectors import participant_by_token

from .conftest import make_open_study

pytestmark = pytest.mark.django_db

_TRIAL_COLUMNS = [f.attname for f in Trial._meta.concrete_fields if f.name not in {"id", "participant", "received_at"}]
_PARTICIPANT_COLUMNS = ("status", "attention_failures", "key_mapping", "plan")
_PARTICIPANT_TIMES = ("consented_at", "instructions_done_at", "practice_done_at", "finished_at")
_numbers = itertools.count()


def _outcome(call):
    """What a step did, in a form both paths must agree on."""
    try:
        result = call()
    except services.FlowError as exc:
        return ("refused", exc.reason, exc.status)
    except PayloadError as exc:
        return ("invalid", str(exc))
    if isinstance(result, trials.TrialReceipt):
        return ("saved" if result.created else "duplicate", result.trial.index, result.participant.status)
    return ("done", result.status)


class SaveRulebook(RuleBasedStateMachine):
    study = None  # set by the test: one open study per test run, its default practice block
    practice: list = []
    researcher = None

    @initialize(practice=st.booleans(), time_limit=st.sampled_from([None, 2000]),
                fail_after=st.sampled_from([1, 2]), end_session=st.booleans(), ready=st.sampled_from([True] * 4 + [False]))
    def start(self, practice, time_limit, fail_after, end_session, ready):
        study = self.study
        HumanArm.objects.filter(study=study).update(
            practice=self.practice if practice else [],
            time_limit_ms=time_limit, attention_fail_after=fail_after, attention_end_session=end_session)
        # the attention rule is stated on the consent page (its sentence is part of what is reviewed): a changed
        # rule is a changed consent, reviewed again before anyone may start
        consent_review(arm=HumanArm.objects.get(study=study), by=None)
        self.rule = AttentionRule(fail_after=fail_after, end_session=end_session)
        self.time_limit = time_limit
        n = next(_numbers)
        a, _ = services.participant_start(study=study, prolific_pid=f"A{n}", prolific_session_id=f"SA{n}")
        b, _ = services.participant_start(study=study, prolific_pid=f"B{n}", prolific_session_id=f"SB{n}")
        Participant.objects.filter(pk=b.pk).update(plan=a.plan, key_mapping=a.key_mapping)
        self.people = {"A": a.token, "B": b.token}
        self.plan, self.mapping = a.plan, a.key_mapping
        self.items = Item.objects.in_bulk(a.plan)
        self.catch = [n for n, pk in enumerate(a.plan) if self.items[pk].design == "attention-check"]
        self.sent: list[dict] = []
        self.erased = False
        if ready:  # most sequences start at the trials; the others go through the pages themselves
            for who in ("A", "B"):
                participant = self._participant(who)
                services.participant_consent(participant=participant, agree=True)
                for step in ("instructions", "practice"):
                    services.participant_step_done(participant=participant, step=step)

    # --- applying one step to both participants -------------------------------------------------

    def _participant(self, who):
        return participant_by_token(slug=self.study.slug, token=self.people[who])

    def _both(self, step):
        outcomes = {who: _outcome(lambda: step(who)) for who in ("A", "B")}
        assert outcomes["A"] == outcomes["B"], outcomes
        return outcomes["A"]

    def _on_participant(self, service):
        def step(who):
            participant = self._participant(who)
            if participant is None:
                raise services.FlowError("unknown_session", "No such session.", 404)
            return service(participant)
        return self._both(step)

    def _send(self, data):
        self.sent.append(data)

        def step(who):
            payload = parse_trial(data)
            if who == "A":
                return trials.trial_submit(slug=self.study.slug, token=self.people["A"], payload=payload,
                                           user_agent="rulebook")
            participant = self._participant("B")
            if participant is None:
                raise services.FlowError("unknown_session", "No such session.", 404)
            return trials.trial_record(participant=participant, payload=payload, user_agent="rulebook")
        return self._both(step)

    # --- the steps ------------------------------------------------------------------------------

    @rule(agree=st.booleans() | st.just(True))
    def consent(self, agree):
        self._on_participant(lambda p: services.participant_consent(participant=p, agree=agree))

    @rule(step=st.sampled_from(["instructions", "practice"]))
    def page_done(self, step):
        self._on_participant(lambda p: services.participant_step_done(participant=p, step=step))

    @rule(aim=st.sampled_from(["next", "next", "next", "a catch item", "any"]), index=st.integers(0, 30),
          right=st.booleans(), key=st.sampled_from(["answer", "answer", "answer", "other key"]),
          timing=st.sampled_from(["normal", "normal", "normal", "past the ceiling", "timed out"]),
          item=st.sampled_from(["its own", "its own", "its own", "another trial's"]))
    def answer(self, aim, index, right, key, timing, item):
        if aim == "next":  # the participant's next trial (as the page sends it)
            answered = set(Trial.objects.filter(participant__token=self.people["A"]).values_list("index", flat=True))
            listed = min(set(range(len(self.plan))) - answered, default=0)
        elif aim == "a catch item":
            listed = self.catch[index % len(self.catch)]
        else:  # any trial of the list, sometimes past its end
            listed = index % (len(self.plan) + 2)
        item_id = self.plan[listed % len(self.plan)] if item == "its own" else self.plan[(listed + 1) % len(self.plan)]
        gold = self.items[self.plan[listed % len(self.plan)]].gold_answer
        answer = gold if right else ("no" if gold == "yes" else "yes")
        yes = "KeyF" if self.mapping == "f_yes" else "KeyJ"
        code = (yes if answer == "yes" else ("KeyJ" if yes == "KeyF" else "KeyF")) if key == "answer" else "KeyD"
        onset = 1_700_000_000_000.0 + listed * 10_000
        ceiling = (self.time_limit or 30 * 60 * 1000) + (5000 if self.time_limit else 0)
        rt = {"normal": 850.0, "past the ceiling": ceiling + 1.0, "timed out": (self.time_limit or 2000) + 1.0}[timing]
        timed_out = timing == "timed out"
        self._send({
            "index": listed, "item": item_id, "code": "" if timed_out else code, "key": "" if timed_out else code[-1].lower(),
            "idempotency_key": f"rulebook-{next(_numbers):010d}", "onset_ms": onset, "response_ms": onset + rt,
            "timed_out": timed_out, "viewport_width": 1366, "viewport_height": 768, "focus_lost": False,
            "visibility_lost": right,
        })

    @precondition(lambda self: self.sent)
    @rule(which=st.integers(0, 10**6))
    def resend(self, which):
        self._send(self.sent[which % len(self.sent)])

    @rule()
    def finish(self):
        self._on_participant(lambda p: services.participant_finish(participant=p))

    @rule()
    def expire(self):
        def returned(p):
            if p.status != ParticipantStatus.STARTED:
                raise services.FlowError("ended", "ended", 409)
            return services.participant_transition(participant=p, to=ParticipantStatus.RETURNED)
        self._on_participant(returned)

    @precondition(lambda self: not self.erased)
    @rule()
    def erase(self):
        for who in ("A", "B"):
            participant_erase(participant=self._participant(who), by=self.researcher)
        self.erased = True

    # --- what must hold after every step --------------------------------------------------------

    def _rows(self, who):
        participant = self._participant(who)
        if participant is None:
            return None
        person = {name: getattr(participant, name) for name in _PARTICIPANT_COLUMNS}
        person.update({name: getattr(participant, name) is None for name in _PARTICIPANT_TIMES})
        rows = list(Trial.objects.filter(participant=participant).order_by("index").values(*_TRIAL_COLUMNS))
        return person, rows

    @invariant()
    def both_paths_stored_the_same(self):
        a, b = self._rows("A"), self._rows("B")
        assert a == b
        assert (a is None) == self.erased

    @invariant()
    def the_rulebook_holds(self):  # noqa: C901
        participant = self._participant("A")
        if participant is None:
            return
        rows = list(Trial.objects.filter(participant=participant).values("index", "item_id", "is_attention_check",
                                                                       "correct", "answer", "timed_out"))
        assert len({r["index"] for r in rows}) == len(rows) == len({r["item_id"] for r in rows})
        assert all(self.plan[r["index"]] == r["item_id"] for r in rows)
        wrong = sum(r["is_attention_check"] and not r["correct"] for r in rows)
        assert participant.attention_failures == wrong
        if participant.status == ParticipantStatus.FAILED_ATTENTION:
            assert self.rule.ends(failures=wrong)
        elif participant.status == ParticipantStatus.STARTED:
            assert not self.rule.ends(failures=wrong)
        if rows and not participant.consented_at:
            pytest.fail("an answer was saved before consent")


def test_both_save_paths_store_the_same_rows_for_the_same_random_sequences():
    SaveRulebook.study = make_open_study(interpretations=24, target_sample_size=100_000)
    SaveRulebook.practice = HumanArm.objects.get(study=SaveRulebook.study).practice
    assert SaveRulebook.practice  # the design's default practice block
    SaveRulebook.researcher = get_user_model().objects.create_user("rulebook", password="x-" * 8)
    explore = settings.default.max_examples > 100  # the explore profile: its own count
    run_state_machine_as_test(SaveRulebook, settings=settings(
        max_examples=settings.default.max_examples if explore else 25, stateful_step_count=30))
