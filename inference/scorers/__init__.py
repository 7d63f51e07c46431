"""Scorers: prompts in, answer log-probabilities and prompt NLL out (see base.py for the interface).

Registered by name and imported lazily, so importing inference never imports torch.
"""
from __future__ import annotations

from pathlib import Path

from .base import (
    AnswerSet, AnswerSpec, LoadConfig, OptionSummary, Request, Result, Scorer, Summary, Variants, summarise,
    summarise_options,
)

__all__ = ["AnswerSet", "AnswerSpec", "LoadConfig", "OptionSummary", "Request", "Result", "Scorer", "Summary",
           "Variants", "summarise", "summarise_options", "build"]


def _hf(config: LoadConfig, *, answers: AnswerSpec, prompt_format: str, batch_size: int, cache_dir: Path,
        memory_limit_gb: float | None):
    from .hf import HFScorer
    from .loading import load

    loaded = load(config, cache_dir=cache_dir, memory_limit_gb=memory_limit_gb)
    return HFScorer(loaded, answers=answers, prompt_format=prompt_format, batch_size=batch_size)


REGISTRY = {"hf": _hf}


def build(kind: str, config: LoadConfig, **options) -> Scorer:
    try:
        factory = REGISTRY[kind]
    except KeyError:
        raise ValueError(f"Unknown scorer {kind!r}; registered: {', '.join(sorted(REGISTRY))}") from None
    return factory(config, **options)


def versions(scorer) -> dict:
    from .loading import versions as loaded_versions

    return loaded_versions(scorer.loaded)
