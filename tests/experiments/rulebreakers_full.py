"""A full-size RULEBREAKERS file in the published finegrained format (issue 37): 12,800 pairs, 25,600
rows, the 15 columns, laid out as the published file is (tests/data/published/README.md): blocks by rule
and category, each block's non-rulebreakers before its rulebreakers, the first block (MT, cities) 5,490
pairs long, so a member's partner is thousands of rows (many import batches) later. The rows follow the
excerpt's wording; names, cities and types are made up but keep the file's sizes (about 16 MB)."""
from __future__ import annotations

import csv
import io

HEADER = ("id,rulebreaker_type,category,firstName,pronoun,verb,entityA,entityB,premise1,premise2,conclusion,label,"
          "kc_gen_formatted_prompt,target_correct_conclusion,target_incorrect_conclusion").split(",")
PAIRS = 12_800
FIRST_BLOCK = 5_490  # MT, cities (the published file's first block)
BLOCK = 50
ASK = ("\nWhat conclusion, if any, follows from the Premises? If you think nothing follows from the Premises, "
       "answer 'Nothing follows'. Keep your response concise.")


def _blocks(pairs: int):
    """(first pair, pairs, rule, category) of each block."""
    start = 0
    first = min(FIRST_BLOCK, pairs // 2)
    yield 0, first, "mt", "cities"
    start = first
    n = 0
    while start < pairs:
        size = min(BLOCK, pairs - start)
        yield start, size, "mt" if start < pairs // 2 else "ds", f"kind of thing {n % 40:02d}"
        start += size
        n += 1


def _member(k: int, rule: str, category: str, role: str) -> list[str]:
    name, pronoun = f"Adriana{k:05d}", "she"
    cities = category == "cities"
    verb = "is in" if cities else "owns"
    part = f"Cityville {k:05d}" if cities else f"a widget {k:05d}"
    true_whole = f"Countryland {k % 166:03d}" if cities else category
    whole = true_whole if role == "rb" else (f"Otherland {k % 91:03d}" if cities else "sort of gadget")
    if rule == "mt":
        if cities:
            p1, p2 = f"If {name} is in {whole}, then {pronoun} is not in {part}.", f"{name} is in {part}."
            conclusion = f"{name} is not in {whole}."
        else:
            p1 = f"If {name} owns some kind of {whole}, then {pronoun} does not own {part}."
            p2, conclusion = f"{name} owns {part}.", f"{name} does not own any kind of {whole}."
        told = f"if {p1[3:-1]}"
    else:
        if cities:
            p1, p2 = f"{name} is in either {part} or {whole}.", f"{name} is not in {whole}."
        else:
            p1 = f"{name} owns either {part} or some kind of {whole}."
            p2 = f"{name} does not own any kind of {whole}."
        conclusion = f"{name} {verb} {part}."
        told = p1[:-1]
    label = "False" if role == "rb" else "True"
    prompt = f"Premises: Suppose we are told that {told}. However, as a matter of fact, {p2}{ASK}"
    right, wrong = ("Nothing follows", conclusion) if role == "rb" else (conclusion, "Nothing follows")
    return [f"RULEBREAKER_{k:07d}_{role}", rule, category, name, pronoun, verb, whole, part, p1, p2, conclusion,
            label, prompt, right, wrong]


def full_size_csv(pairs: int = PAIRS) -> bytes:
    """The file's bytes: `pairs` pairs (2 × pairs rows), in the published file's layout."""
    out = io.StringIO(newline="")
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(HEADER)
    for start, size, rule, category in _blocks(pairs):
        for role in ("nonrb", "rb"):
            for k in range(start, start + size):
                writer.writerow(_member(k, rule, category, role))
    return out.getvalue().encode("utf-8")
