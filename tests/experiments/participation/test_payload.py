"""What a trial payload must look like; each refusal names the problem."""
from __future__ import annotations

import pytest

from experiments.participation.payload import KEYS, PayloadError, parse_trial


def check(data, *, time_limit_ms=None, keys=KEYS):
    """What the save does with a body: parse it once, then check it against the study's arm."""
    return parse_trial(data).for_arm(time_limit_ms=time_limit_ms, keys=keys)

GOOD = {
    "index": 0, "item": 5, "key": "f", "code": "KeyF", "idempotency_key": "0f8e2c1a-9b7d-4c3e-8a6f-1234567890ab",
    "onset_ms": 1_700_000_000_000.25, "response_ms": 1_700_000_001_234.75, "timed_out": False,
    "viewport_width": 1280, "viewport_height": 800, "focus_lost": False, "visibility_lost": True,
}


def test_a_good_payload_gives_the_response_time_from_the_two_timestamps():
    payload = check(GOOD)
    assert payload.rt_ms == pytest.approx(1234.5)
    assert payload.letter == "f" and payload.visibility_lost is True


@pytest.mark.parametrize(("change", "message"), [
    ({"code": "KeyK", "key": "k"}, "Only the F and J keys"),
    ({"code": "", "key": ""}, "answered with a key"),
    ({"code": "Key F", "key": "f"}, "answered with a key"),
    ({"response_ms": 1_699_999_999_000.0}, "must be positive"),
    ({"response_ms": 1_700_000_000_000.25}, "must be positive"),
    ({"response_ms": 1_700_004_000_000.0}, "longer than"),
    ({"onset_ms": float("nan")}, "must be a number"),
    ({"onset_ms": "soon"}, "must be a number"),
    ({"index": -1}, "'index' must be a whole number"),
    ({"index": True}, "'index' must be a whole number"),
    ({"item": 0}, "'item' must be a whole number ≥ 1"),
    ({"idempotency_key": "short"}, "idempotency_key"),
    ({"idempotency_key": "x" * 16 + "; drop"}, "idempotency_key"),
    ({"timed_out": True, "key": "", "code": ""}, "no time limit"),
    ({"focus_lost": "yes"}, "true or false"),
    ({"viewport_width": -3}, "pixels"),
])
def test_bad_payloads_are_refused_with_a_clear_message(change, message):
    with pytest.raises(PayloadError, match=message):
        check({**GOOD, **change})


def test_time_limits_bound_response_times_and_allow_timeouts():
    timed_out = {**GOOD, "timed_out": True, "key": "", "code": "", "response_ms": GOOD["onset_ms"] + 2000}
    assert check(timed_out, time_limit_ms=2000).timed_out
    with pytest.raises(PayloadError, match="has no key"):
        check({**timed_out, "code": "KeyF", "key": "f"}, time_limit_ms=2000)
    with pytest.raises(PayloadError, match="longer than the 7000 ms"):
        check({**GOOD, "response_ms": GOOD["onset_ms"] + 9000}, time_limit_ms=2000)
    with pytest.raises(PayloadError, match="JSON object"):
        parse_trial([GOOD])


def test_the_stored_key_is_the_accepted_keys_name_never_the_browsers_text():
    parse = check

    body = {"index": 0, "item": 1, "code": "KeyF", "key": "=1+1", "idempotency_key": "k" * 16, "onset_ms": 1.0,
            "response_ms": 900.0, "timed_out": False}
    assert parse(body).key == "f" and parse({**body, "code": "KeyJ", "key": "@SUM(A1)"}).key == "j"
    assert parse({**body, "key": "а"}).key == "f"  # a Cyrillic layout's F key still answers, stored as "f"


def test_a_timed_out_trial_is_accepted_only_at_the_time_limit():
    from experiments.participation.payload import PayloadError
    parse = check

    body = {"index": 0, "item": 1, "code": "", "key": "", "idempotency_key": "k" * 16, "onset_ms": 1000.0,
            "timed_out": True}
    assert parse({**body, "response_ms": 3000.0}, time_limit_ms=2000).timed_out  # exactly at the limit
    assert parse({**body, "response_ms": 2996.0}, time_limit_ms=2000).timed_out  # within the timer's resolution
    with pytest.raises(PayloadError, match=r"times out at the time limit \(2000 ms\), not after 1500 ms"):
        parse({**body, "response_ms": 2500.0}, time_limit_ms=2000)
