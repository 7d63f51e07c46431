"""The Prolific redirect: where a participant is sent back to Prolific when their session ends.

With a completion code, the arm's completion URL with the code in place of {code} (HumanArm.completion_url, by
default Prolific's own, PROLIFIC_COMPLETION_URL); without one, Prolific's site, where the participant returns
the study. The completion page (views.py) sends a participant there only once every answer is saved; the
codes themselves are the arm's (completion, failed attention, incompatible device)."""
from __future__ import annotations

from urllib.parse import urlsplit

from ..models import HumanArm
from ..models.human_arm import PROLIFIC_COMPLETION_URL


def redirect_url(arm: HumanArm, code: str) -> str:
    """The URL that hands `code` back to Prolific ('' when there is no code or no completion URL)."""
    return arm.completion_url.replace("{code}", code) if code and arm.completion_url else ""


def prolific_home(arm: HumanArm) -> str:
    """The site of the completion URL (https://app.prolific.com/), for a participant with no code to send
    back: there they return the study."""
    parts = urlsplit(arm.completion_url or PROLIFIC_COMPLETION_URL)
    return f"{parts.scheme}://{parts.netloc}/"
