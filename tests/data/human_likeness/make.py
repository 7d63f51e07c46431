"""Writes people.csv, scores.csv and splits.csv of this folder (run once: python make.py).

Simulated, not published: 10 participants answer 16 yes/no items (ids 1–16) and 4 multiple-choice items
(ids 21–24), two model configurations score them; numpy default_rng(35). Built in: item 1 answered yes by
everyone; one timed-out answer (blank); model-a has no score on item 16; model-b decides 'other' on item 5
and gives p(No) = 1e-9 on item 7 (someone answers no there: a clipped log-likelihood); P10 answers only
items model-b gets right and gets them all right (κ undefined for model-b); splits: 20 random halves
(analysis.likeness.split_halves, seed 35).
"""
from pathlib import Path

import numpy as np
import pandas as pd

from analysis.likeness import split_halves

HERE = Path(__file__).resolve().parent
rng = np.random.default_rng(35)
YES_NO, MC = list(range(1, 17)), [21, 22, 23, 24]
gold = {i: ("yes" if rng.random() < 0.5 else "no") for i in YES_NO} | {i: "ABCD"[rng.integers(4)] for i in MC}
lean = {i: rng.normal(0, 1.5) for i in YES_NO}  # the item's pull toward yes
lean[1] = 8.0
scores = []
for model, noise in (("model-a", 0.8), ("model-b", 1.2)):
    for i in YES_NO + MC:
        if model == "model-a" and i == 16:
            continue
        row = {"model": model, "item_id": i, "kind": "multiple_choice" if i in MC else "yes_no", "gold": gold[i]}
        if i in MC:
            logits = rng.normal(0, 1, 4)
            logits["ABCD".index(gold[i])] += 1.0
            p = np.exp(logits) / np.exp(logits).sum()
            row.update({f"p_{x}": p[k] for k, x in enumerate("ABCD")}, rel_p_yes=np.nan,
                       decision="ABCD"[int(np.argmax(p))])
        else:
            rel = 1 / (1 + np.exp(-(lean[i] + rng.normal(0, noise))))
            if model == "model-b" and i == 7:
                rel = 1 - 1e-9
            row.update({f"p_{x}": np.nan for x in "ABCD"}, rel_p_yes=rel, decision="yes" if rel >= 0.5 else "no")
            if model == "model-b" and i == 5:
                row["decision"] = "other"
        scores.append(row)
scores = pd.DataFrame(scores)
b = scores[scores["model"] == "model-b"].set_index("item_id")
b_right = sorted(int(i) for i in b.index[b["decision"] == b["gold"]])
people = []
for p in range(1, 11):
    name = f"P{p:02d}"
    seen = b_right[:8] if p == 10 else sorted(rng.choice(YES_NO + MC, size=14, replace=False).tolist())
    if p != 10 and 7 not in seen:
        seen = sorted(seen + [7])
    skill = rng.normal(0, 0.7)
    for i in seen:
        if i in MC:
            right = p == 10 or rng.random() < 1 / (1 + np.exp(-(0.8 + skill)))
            answer = gold[i] if right else rng.choice([x for x in "ABCD" if x != gold[i]])
        else:
            yes = rng.random() < 1 / (1 + np.exp(-(lean[i] + rng.normal(0, 0.5))))
            answer = gold[i] if p == 10 else ("yes" if yes else "no")
        if p == 3 and i == seen[0]:
            answer = ""
        people.append({"participant": name, "item_id": i, "kind": "multiple_choice" if i in MC else "yes_no",
                       "gold": gold[i], "answer": answer, "correct": int(answer == gold[i])})
people = pd.DataFrame(people)
assert (people.loc[(people["item_id"] == 7) & (people["participant"] != "P10"), "answer"] == "no").any()
people.to_csv(HERE / "people.csv", index=False)
scores.to_csv(HERE / "scores.csv", index=False, float_format="%.17g")
split_halves(people["participant"], splits=20, seed=35).to_csv(HERE / "splits.csv", index=False)
