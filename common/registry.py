"""One small registry: name → entry, where registering a name twice raises (lm-evaluation-harness's
registry does; a silent overwrite lets a second declaration replace the first without a word).
Plain Python: designs, scorers and run-kind strategies each keep one."""
from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Generic, TypeVar

T = TypeVar("T")


class Registry(Mapping[str, T], Generic[T]):
    """A read-only mapping filled by `add`. `what` names an entry in messages ("design", "scorer")."""

    def __init__(self, what: str):
        self.what = what
        self.entries: dict[str, T] = {}

    def add(self, name: str, entry: T) -> T:
        name = str(name)  # a TextChoices member is stored as its value
        if name in self.entries:
            raise ValueError(f"{self.what} '{name}' is registered twice")
        self.entries[name] = entry
        return entry

    def get_or_raise(self, name: str) -> T:
        """The entry called `name`; ValueError naming the registered ones."""
        try:
            return self.entries[name]
        except KeyError:
            raise ValueError(f"Unknown {self.what} '{name}'; choose one of: {', '.join(sorted(self.entries))}.") from None

    def __getitem__(self, name: str) -> T:
        return self.entries[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self.entries)

    def __len__(self) -> int:
        return len(self.entries)
