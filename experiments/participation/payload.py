"""Validation of what the browser sends for one trial (no database read): a bad payload raises
PayloadError with a message the participant's browser (and the researcher) can read."""
from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace

from ..models.choices import AnswerChannel, Device

MAX_RT_MS = 30 * 60 * 1000  # half an hour on one question is not a response time
TIME_LIMIT_GRACE_MS = 5000  # with a time limit, a response may arrive this much later (network, rendering)
TIMER_RESOLUTION_MS = 5  # browsers coarsen performance.now(); a timeout may read this much short of the limit
KEYS = {"KeyF": "f", "KeyJ": "j"}
_IDEMPOTENCY = re.compile(r"^[A-Za-z0-9-]{16,64}$")
_CODE = re.compile(r"^[A-Za-z0-9]{1,16}$")  # a KeyboardEvent.code ("KeyF", "Digit1", "Numpad1")
CHANNELS = tuple(AnswerChannel.values)  # key, click, touch (the model's choices: the one list)
DEVICES = tuple(Device.values)  # desktop, phone, tablet


class PayloadError(ValueError):
    pass


@dataclass(frozen=True)
class TrialPayload:
    """One trial as the browser sent it, checked for shape (parse_trial) and then, once the study is
    known, against its arm (`for_arm`: the accepted keys and the time limit)."""

    index: int
    item: int
    code: str  # the keydown event's e.code ("" for a timed-out trial)
    idempotency_key: str
    onset_ms: float
    response_ms: float
    timed_out: bool
    viewport_width: int | None
    viewport_height: int | None
    focus_lost: bool
    visibility_lost: bool

    key: str = ""  # the accepted key's name ("f", "j"; "d", "k", "1" … for four-option trials): for_arm
    # How the answer was given (key, click, touch; "" when timed out): a click or tap on an on-screen button is
    # sent as the key of the button's position (code KeyF or KeyJ), so it means what that key means.
    channel: str = AnswerChannel.KEY.value
    device: str = ""  # desktop, phone, tablet, as the page judged it; "" when not reported

    @property
    def rt_ms(self) -> float:
        return self.response_ms - self.onset_ms

    @property
    def letter(self) -> str:
        return self.key

    def for_arm(self, *, time_limit_ms: int | None, keys: Mapping[str, str] = KEYS,
                channels: tuple[str, ...] = (AnswerChannel.KEY,)) -> TrialPayload:
        """This trial checked against the study's rules: `keys` (e.code → key name) are the keys the
        study accepts (F/J, plus a four-option study's keys; which of them answer which trial is the
        save's check), `time_limit_ms` its arm's time limit. Returns the payload with `key` set to
        the accepted key's name — stored as that name whatever text the browser sent as e.key (a
        participant's own text in an export could be a spreadsheet formula; issue 17 hole 2). `channels`: the
        answer channels the study accepts (AnswerInput.channels); an answer by another is refused."""
        rt = self.rt_ms
        if not self.timed_out and self.channel not in channels:
            raise PayloadError(f"This study is answered by {' or '.join(channels)} only: an answer by "
                               f"{self.channel} is refused.")
        if self.timed_out:
            if not time_limit_ms:
                raise PayloadError("This study has no time limit, so a trial cannot time out.")
            if rt < time_limit_ms - TIMER_RESOLUTION_MS:  # the page times a trial out at the limit, not before
                raise PayloadError(f"A trial times out at the time limit ({time_limit_ms} ms), not after {rt:.0f} ms.")
        elif self.code not in keys:
            if keys is KEYS:
                raise PayloadError("Only the F and J keys answer a trial ('code' KeyF or KeyJ, with its 'key').")
            raise PayloadError(_describe_keys(keys))
        ceiling = rt_ceiling_ms(time_limit_ms)
        if rt > ceiling:
            raise PayloadError(f"The response time {rt:.0f} ms is longer than the {ceiling} ms allowed.")
        return replace(self, key="" if self.timed_out else keys[self.code])


def rt_ceiling_ms(time_limit_ms: int | None) -> int:
    """The longest response time a study accepts (the one-statement save restates it in SQL)."""
    return time_limit_ms + TIME_LIMIT_GRACE_MS if time_limit_ms else MAX_RT_MS


def _int(data: dict, name: str, *, minimum: int = 0) -> int:
    value = data.get(name)
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise PayloadError(f"'{name}' must be a whole number ≥ {minimum}.")
    return value


def _float(data: dict, name: str) -> float:
    value = data.get(name)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise PayloadError(f"'{name}' must be a number (milliseconds).")
    try:
        number = float(value)  # an integer too large for a float overflows (found by tests/security)
    except OverflowError:
        number = math.inf
    if not math.isfinite(number):
        raise PayloadError(f"'{name}' must be a number (milliseconds).")
    return number


def _bool(data: dict, name: str) -> bool:
    value = data.get(name, False)
    if not isinstance(value, bool):
        raise PayloadError(f"'{name}' must be true or false.")
    return value


def _optional_int(data: dict, name: str) -> int | None:
    value = data.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 100_000:
        raise PayloadError(f"'{name}' must be a whole number of pixels.")
    return value


def _describe_keys(keys: Mapping[str, str]) -> str:
    names = [name.upper() for name in dict.fromkeys(keys.values())]
    listed = ", ".join(names[:-1]) + f" or {names[-1]}" if len(names) > 1 else names[0]
    return f"Only the {listed} keys answer a trial ('code' one of {', '.join(keys)}, with its 'key')."


def parse_trial(data: object) -> TrialPayload:
    """The one parse of a trial's body (decoded JSON): its shape, whatever the study. The study's own
    rules (keys, time limit) are TrialPayload.for_arm's."""
    if not isinstance(data, dict):
        raise PayloadError("The body must be a JSON object describing one trial.")
    key_id = data.get("idempotency_key")
    if not isinstance(key_id, str) or not _IDEMPOTENCY.match(key_id):
        raise PayloadError("'idempotency_key' must be 16–64 letters, digits or dashes.")
    timed_out = _bool(data, "timed_out")
    key, code = data.get("key", ""), data.get("code", "")
    if not isinstance(key, str) or not isinstance(code, str):
        raise PayloadError("'key' and 'code' must be text.")
    if timed_out:
        if key or code:
            raise PayloadError("A timed-out trial has no key.")
    elif not _CODE.match(code) or not key or len(key) > 16 or not key.isprintable():  # no NUL, no lone surrogate
        raise PayloadError("A trial is answered with a key ('code' the keydown event's e.code, with its 'key').")
    channel = data.get("channel", "" if timed_out else AnswerChannel.KEY.value)
    if timed_out and channel:
        raise PayloadError("A timed-out trial has no answer channel.")
    if not timed_out and channel not in CHANNELS:
        raise PayloadError(f"'channel' must be one of {', '.join(CHANNELS)}.")
    device = data.get("device", "")
    if device != "" and device not in DEVICES:
        raise PayloadError(f"'device' must be one of {', '.join(DEVICES)} (or left out).")
    payload = TrialPayload(
        index=_int(data, "index"),
        item=_int(data, "item", minimum=1),
        code=code,
        idempotency_key=key_id,
        onset_ms=_float(data, "onset_ms"),
        response_ms=_float(data, "response_ms"),
        timed_out=timed_out,
        viewport_width=_optional_int(data, "viewport_width"),
        viewport_height=_optional_int(data, "viewport_height"),
        focus_lost=_bool(data, "focus_lost"),
        visibility_lost=_bool(data, "visibility_lost"),
        channel=channel, device=device,
    )
    rt = payload.rt_ms
    if rt <= 0:
        raise PayloadError(f"The response time must be positive (got {rt:.1f} ms).")
    return payload
