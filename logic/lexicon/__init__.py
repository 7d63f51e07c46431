"""Shared word lists: common given names with their pronouns (given_names.py), which any design's wording and the
name perturbations (seed 002, logic/perturb.py) draw from. A design's own vocabulary lives in its folder (003's
names and verb phrases: designs/modal/lexicon/). Plain data, read with importlib.resources (works from a wheel)."""
