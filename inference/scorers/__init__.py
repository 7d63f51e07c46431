"""Scorers: prompts in, answer log-probabilities, prompt NLL and the top next token out (base.py).

Scorers register themselves by name with `@register` (lm-evaluation-harness's model registry, in a
few lines) and are built lazily, so importing inference never imports torch. Registered here:
"hf" (Hugging Face causal language models, hf.py) and "fake" (a deterministic scorer without a
model, fake.py, for tests of everything around the scorer).
"""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from common.registry import Registry

from .base import (
    AnswerSet, LoadConfig, OptionSummary, Request, Result, Scorer, Summary, Variants, perplexity, summarise,
    summarise_options,
)

__all__ = ["AnswerSet", "LoadConfig", "OptionSummary", "Request", "Result", "Scorer", "Summary", "Variants",
           "build", "names", "perplexity", "register", "summarise", "summarise_options"]

Factory = Callable[..., Scorer]
REGISTRY: Registry[Factory] = Registry("scorer")


def register(name: str) -> Callable[[Factory], Factory]:
    """Register a scorer factory: `factory(config, *, answers, prompt_format, batch_size, cache_dir,
    memory_limit_gb) -> Scorer`. A name registered twice raises."""

    def decorate(factory: Factory) -> Factory:
        return REGISTRY.add(name, factory)

    return decorate


def names() -> list[str]:
    return sorted(REGISTRY)


def build(name: str, config: LoadConfig, **options) -> Scorer:
    try:
        factory = REGISTRY[name]
    except KeyError:
        raise ValueError(f"Unknown scorer {name!r}; registered: {', '.join(names())}") from None
    return factory(config, **options)


@register("hf")
def _hf(config: LoadConfig, *, answers: AnswerSet, prompt_format: str, batch_size: int, cache_dir: Path,
        memory_limit_gb: float | None = None) -> Scorer:
    from .hf import HFScorer
    from .loading import load

    loaded = load(config, cache_dir=cache_dir, memory_limit_gb=memory_limit_gb)
    return HFScorer(loaded, answers=answers, prompt_format=prompt_format, batch_size=batch_size)


@register("fake")
def _fake(config: LoadConfig, *, answers: AnswerSet, prompt_format: str, batch_size: int, cache_dir: Path | None = None,
          memory_limit_gb: float | None = None) -> Scorer:
    from .fake import FakeScorer

    return FakeScorer(config, answers=answers, prompt_format=prompt_format, batch_size=batch_size)


@register("server")
def _server(config: LoadConfig, *, answers: AnswerSet, prompt_format: str, batch_size: int, cache_dir: Path | None = None,
            memory_limit_gb: float | None = None, server: dict | None = None) -> Scorer:
    """`server`: urls (list), model, concurrency, start_token, api_key (read from the environment by the caller)."""
    from .server import ServerScorer

    options = dict(server or {})
    return ServerScorer(answers=answers, prompt_format=prompt_format, **options)


@register("chat")
def _chat(config: LoadConfig, *, answers: AnswerSet, prompt_format: str, batch_size: int, cache_dir: Path | None = None,
          memory_limit_gb: float | None = None, chat: dict | None = None) -> Scorer:
    """`chat`: url, model, concurrency, api_key (read from the environment by the caller)."""
    from .chat import ChatScorer

    return ChatScorer(answers=answers, prompt_format=prompt_format, **dict(chat or {}))
