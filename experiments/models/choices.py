"""The closed lists of values a study's tables hold (Django TextChoices): modalities, answers, option
letters, question kinds, conditions, link kinds, logic systems and consequence keys."""
from __future__ import annotations

from django.db import models


class Modality(models.TextChoices):
    NONE = "none", "∅"
    BOX = "box", "□"
    DIA = "dia", "◇"


class Answer(models.TextChoices):
    YES = "yes", "Yes"
    NO = "no", "No"


class OptionLetter(models.TextChoices):
    """The answer of a multiple-choice item: the position of the chosen option (seed 001)."""

    A = "A", "A"
    B = "B", "B"
    C = "C", "C"
    D = "D", "D"


ANSWERS = [*Answer.choices, *OptionLetter.choices]


class ItemKind(models.TextChoices):
    YES_NO = "yes_no", "yes / no"
    MULTIPLE_CHOICE = "multiple_choice", "multiple choice (four options)"


class Condition(models.TextChoices):
    REAL = "real", "real"
    NONSENSE = "nonsense", "nonsense"


class LinkKind(models.TextChoices):
    """What an item's link to other items means (issue 35): each report section reads only its own kind.
    `original` holds the item linked to for a nonsense mirror, a perturbation and an option order; the
    members of a pair share `pair_id` instead."""

    NONE = "", "none"
    NONSENSE_MIRROR = "nonsense_mirror", "nonsense mirror (003): the real item's logic in nonsense words"
    PERTURBATION = "perturbation", "perturbation (002): a copy of its original with other tokens"
    OPTION_ORDER = "option_order", "option order (001): its original question's options in another order"
    PAIR_MEMBER = "pair_member", "pair member (000, 004): one member of its pair (pair id and role)"

    @classmethod
    def of(cls, *, original: bool, condition: str, kind: str, pair_id: str) -> str:
        """The kind of an item's link, from what it is: the rule the data migration and every writer apply."""
        if original:
            if kind == "multiple_choice":
                return cls.OPTION_ORDER
            return cls.NONSENSE_MIRROR if condition == "nonsense" else cls.PERTURBATION
        return cls.PAIR_MEMBER if pair_id else cls.NONE


class LogicSystem(models.TextChoices):
    K = "K", "K"
    T = "T", "T"
    S4 = "S4", "S4"
    S5 = "S5", "S5"


class ConsequenceKey(models.TextChoices):
    """Which consequence relation decides a generated item's gold answer (logic/checker.py)."""

    PAPER = "paper", "the paper's key for each form (global for Appendix C.1's necessitation, else local)"
    LOCAL = "local", "local: premises true at a world ⇒ conclusion true there"
    GLOBAL = "global", "global: premises true at every world ⇒ conclusion true at every world (with necessitation)"


class AnswerInput(models.TextChoices):
    """How a study's participants may answer (HumanArm.answer_input): the keys only (paper 003's protocol,
    the default), or also the answer buttons on the screen, clicked or, on phones and tablets, tapped."""

    KEYS = "keys", "keys only (F and J; no phones or tablets)"
    KEYS_BUTTONS = "keys_buttons", "keys or clicking the on-screen buttons (computers only)"
    BUTTONS_TOUCH = "buttons_touch", "keys, clicks or taps on the buttons (phones and tablets welcome)"

    def channels(self) -> tuple[str, ...]:
        """The answer channels (AnswerChannel values) a trial of such a study may come by."""
        return {
            AnswerInput.KEYS: (AnswerChannel.KEY,),
            AnswerInput.KEYS_BUTTONS: (AnswerChannel.KEY, AnswerChannel.CLICK),
            AnswerInput.BUTTONS_TOUCH: (AnswerChannel.KEY, AnswerChannel.CLICK, AnswerChannel.TOUCH),
        }[self]

    @property
    def buttons(self) -> bool:
        return self != AnswerInput.KEYS

    @property
    def phones(self) -> bool:
        """Whether participants on a phone or tablet (no keyboard) may take part."""
        return self == AnswerInput.BUTTONS_TOUCH

    @property
    def how(self) -> str:
        """How a participant answers, in words for an advert ("with the F and J keys")."""
        return {
            AnswerInput.KEYS: "with the F and J keys",
            AnswerInput.KEYS_BUTTONS: "with the F and J keys or by clicking the answer buttons",
            AnswerInput.BUTTONS_TOUCH: "with the F and J keys, or by clicking or tapping the answer buttons",
        }[self]


class AnswerChannel(models.TextChoices):
    """How one answer was given (Trial.answer_channel; blank: the time ran out)."""

    KEY = "key", "key press"
    CLICK = "click", "click on an on-screen button"
    TOUCH = "touch", "tap on an on-screen button"


class Device(models.TextChoices):
    """The kind of device a trial was answered on (Trial.device), as the page judged it from its pointer, touch
    and window size (experiments/static/experiments/device.js); blank: not reported."""

    DESKTOP = "desktop", "computer (fine pointer)"
    PHONE = "phone", "phone (touch only, narrow window)"
    TABLET = "tablet", "tablet (touch only, wide window)"
