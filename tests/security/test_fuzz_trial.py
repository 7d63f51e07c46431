"""Property-based tests: malformed trial payloads thrown at the real trial endpoint.

Whatever arrives, the answer is a 4xx with a JSON message (or 200/201 for a payload that happens to
be a valid answer), never a 500 or an unhandled exception (Django's test client re-raises those),
and nothing is half-saved: a refused request leaves every row as it was, an accepted one adds
exactly one trial.
"""
from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from experiments.models import Participant, Trial
from experiments.participation import services
from tests.experiments.participation.conftest import make_open_study, trial_data

pytestmark = pytest.mark.django_db
FUZZ = settings(max_examples=80, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
                deadline=None)
FIELDS = ("index", "item", "key", "code", "idempotency_key", "onset_ms", "response_ms", "timed_out",
          "viewport_width", "viewport_height", "focus_lost", "visibility_lost")

json_scalars = st.none() | st.booleans() | st.integers() | st.integers(min_value=-(2**80), max_value=2**80) \
    | st.floats(allow_nan=True, allow_infinity=True) | st.text(max_size=40)
json_values = st.recursive(json_scalars, lambda inner: st.lists(inner, max_size=4)
                           | st.dictionaries(st.text(max_size=10), inner, max_size=4), max_leaves=12)


@pytest.fixture
def in_trials(settings):
    settings.DUET_RATELIMITS = {"entry": "off", "trial": "off", "session": "off"}
    study = make_open_study(interpretations=6, items_per_participant=6, attention_checks=[], practice=[],
                            time_limit_ms=5000)
    participant, _ = services.participant_start(study=study, prolific_pid="fuzzer", prolific_session_id="sess-f")
    services.participant_consent(participant=participant, agree=True)
    services.participant_instructions_done(participant=participant)
    participant.refresh_from_db()
    return participant


def _state(participant):
    p = Participant.objects.get(pk=participant.pk)
    return (Trial.objects.count(), p.status, p.attention_failures, p.consented_at, p.instructions_done_at)


def _send(client, participant, body: bytes, **headers):
    url = f"/s/{participant.study.slug}/p/{participant.token}/trial"
    before = _state(participant)
    response = client.post(url, body, content_type="application/json", **headers)
    after = _state(participant)
    status = response.status_code
    assert status < 500, response.content[:300]
    if status in (200, 201):
        assert response.json()["saved"] is True
        assert after[0] == before[0] + (1 if status == 201 else 0)
    else:
        assert 400 <= status < 500
        body = response.json()
        assert isinstance(body["error"], str) and body["error"]
        assert after == before, "a refused trial changed the database"
    return response


@FUZZ
@given(value=json_values)
def test_any_json_value_is_refused_cleanly(client, in_trials, value):
    _send(client, in_trials, json.dumps(value).encode())


@FUZZ
@given(raw=st.binary(max_size=300))
def test_any_bytes_are_refused_cleanly(client, in_trials, raw):
    _send(client, in_trials, raw)


@FUZZ
@given(data=st.data())
def test_a_valid_trial_with_fields_replaced_dropped_or_added(client, in_trials, data):
    """Start from a valid answer to a random trial and break one to three fields."""
    participant = in_trials
    index = data.draw(st.integers(0, len(participant.plan) - 1), label="index")
    body = trial_data(participant, index)
    for _ in range(data.draw(st.integers(1, 3), label="changes")):
        field = data.draw(st.sampled_from(FIELDS) | st.text(max_size=8), label="field")
        action = data.draw(st.sampled_from(["replace", "drop"]), label="action")
        if action == "drop":
            body.pop(field, None)
        else:
            body[field] = data.draw(json_values, label="value")
    _send(client, participant, json.dumps(body).encode())


@FUZZ
@given(ua=st.text(max_size=600), key=st.text(max_size=20))
@example(ua="Mozilla/5.0\x00", key="f")
@example(ua="Mozilla/5.0", key="f\x00")
@example(ua="\ud800", key="\ud800")
def test_odd_user_agents_and_keys(client, in_trials, ua, key):
    """Anything in the User-Agent header (NUL included) and in the 'key' field is stored safely or refused."""
    participant = in_trials
    saved = set(participant.trials.values_list("index", flat=True))
    free = [i for i in range(len(participant.plan)) if i not in saved]
    index = free[0] if free else 0
    _send(client, participant, json.dumps(trial_data(participant, index, key=key)).encode(), HTTP_USER_AGENT=ua)


@pytest.mark.parametrize("body", [
    b"[" * 4000 + b"]" * 4000,                       # nesting deeper than Python's recursion limit,
    b'{"a":' * 1300 + b"1" + b"}" * 1300,            # within the 8 KiB a trial may take
    b"[" * 9000,                                     # too large: refused before it is read
    json.dumps({"index": 0, "item": 10**400}).encode(),  # an integer no float can hold
    b'{"onset_ms": 1' + b"0" * 5000 + b"}",            # more digits than int() will read
    b'{"index": NaN}', b"\xff\xfe\x00", b"",
])
def test_pathological_bodies(client, in_trials, body):
    _send(client, in_trials, body)


def test_huge_numbers_in_every_numeric_field(client, in_trials):
    for field in ("index", "item", "onset_ms", "response_ms", "viewport_width", "viewport_height"):
        for value in (10**400, -(10**400), 2**63, 1e308, -1e308):
            body = {**trial_data(in_trials, 0), field: value}
            _send(client, in_trials, json.dumps(body).encode())


def test_a_retried_trial_is_saved_once(client, in_trials):
    body = json.dumps(trial_data(in_trials, 0, key_id="retry-key-0000000000001")).encode()
    assert _send(client, in_trials, body).status_code == 201
    for _ in range(3):
        response = _send(client, in_trials, body)
        assert response.status_code == 200 and response.json()["duplicate"] is True
    assert in_trials.trials.count() == 1


@FUZZ
@given(params=st.dictionaries(st.sampled_from(["PROLIFIC_PID", "STUDY_ID", "SESSION_ID"]) | st.text(max_size=6),
                              st.text(max_size=80) | st.from_regex(r"[A-Za-z0-9_-]{1,70}", fullmatch=True), max_size=5))
def test_the_entry_link_with_any_parameters(client, in_trials, params):
    """The Prolific link's parameters: a session (302) or a page saying what is wrong, never a 500."""
    before = Participant.objects.count()
    response = client.get(f"/s/{in_trials.study.slug}/", params, HTTP_USER_AGENT="Mozilla/5.0 (X11; Linux x86_64)")
    assert response.status_code in (302, 400, 403, 409), response.status_code
    added = Participant.objects.count() - before
    assert added == 0 if response.status_code != 302 else added in (0, 1)  # 0: a returning participant
