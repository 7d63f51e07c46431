"""The four-option settings of a study's human arm (seed 001): which keys answer the options, and
whether a participant answers every circular mutant of a question (study.settings["multiple_choice"])."""
from __future__ import annotations

from dataclasses import dataclass

from django.core.exceptions import ValidationError

from ..models.human_arm import MC_LETTERS

# Four-option trials (seed 001): the keys, left to right, answer the options A–D in the order shown.
# Positions are physical keys (e.code), so every keyboard layout answers the same way.
MC_KEY_SETS = {
    "dfjk": (("KeyD", "D"), ("KeyF", "F"), ("KeyJ", "J"), ("KeyK", "K")),
    "1234": (("Digit1", "1"), ("Digit2", "2"), ("Digit3", "3"), ("Digit4", "4")),
}
MC_SETTINGS = "multiple_choice"  # study.settings key: {"keys": "dfjk" | "1234", "all_mutants": false}


@dataclass(frozen=True)
class McSettings:
    keys: str = "dfjk"
    all_mutants: bool = False  # True: a participant answers every circular mutant of each question

    def key_codes(self) -> dict[str, str]:
        """e.code → the option letter it answers (position A–D)."""
        return {code: letter for (code, _), letter in zip(MC_KEY_SETS[self.keys], MC_LETTERS)}

    def key_labels(self) -> list[dict[str, str]]:
        return [{"letter": letter, "code": code, "label": label}
                for (code, label), letter in zip(MC_KEY_SETS[self.keys], MC_LETTERS)]


def mc_settings(study) -> McSettings:
    """The study's four-option settings (study.settings["multiple_choice"]); bad values are refused."""
    given = (study.settings or {}).get(MC_SETTINGS) or {}
    if not isinstance(given, dict):
        raise ValidationError(f'study.settings["{MC_SETTINGS}"] must be an object such as {{"keys": "dfjk"}}.')
    unknown = sorted(set(given) - {"keys", "all_mutants"})
    if unknown:
        raise ValidationError(f'Unknown {MC_SETTINGS} setting(s) {unknown}; known: keys, all_mutants.')
    keys = str(given.get("keys", "dfjk")).lower()
    if keys not in MC_KEY_SETS:
        raise ValidationError(f"The four-option keys must be one of {', '.join(MC_KEY_SETS)} (got {keys!r}).")
    all_mutants = given.get("all_mutants", False)
    if not isinstance(all_mutants, bool):
        raise ValidationError(f'{MC_SETTINGS} "all_mutants" must be true or false.')
    return McSettings(keys=keys, all_mutants=all_mutants)
