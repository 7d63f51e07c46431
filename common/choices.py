"""TextChoices that are state machines: each subclass lists its allowed moves in transitions()."""
from __future__ import annotations

from django.db import models


class StateChoices(models.TextChoices):
    """Subclasses define transitions() -> {state: frozenset of states it may move to}."""

    @classmethod
    def transitions(cls) -> dict[str, frozenset[str]]:
        raise NotImplementedError(f"{cls.__name__} must list its transitions")

    @classmethod
    def can_move(cls, source: str, target: str) -> bool:
        return target in cls.transitions().get(source, frozenset())

    @classmethod
    def allowed_from(cls, source: str) -> str:
        """The states reachable from source, for error messages ("none" at a final state)."""
        return ", ".join(sorted(cls.transitions().get(source, frozenset()))) or "none"
