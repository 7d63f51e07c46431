"""A tiny local Llama whose tokenizer also knows the words of the paired designs: True/False and
a few countries (tests/inference/tiny_models.py's builder with a longer corpus; nothing downloaded)."""
from __future__ import annotations

from pathlib import Path

from tests.inference import tiny_models

EXTRA = [" True", " False", "True", "False", " true", " false", " Sweden", " France", " Albania", " the",
         "Complete the sentence: Stockholm is in Sweden", "Premises: Conclusion: Answer True or False only."]


def build_llama(folder: Path) -> Path:
    saved = tiny_models.CORPUS
    tiny_models.CORPUS = saved + EXTRA * 40
    try:
        return tiny_models.build("llama", folder)
    finally:
        tiny_models.CORPUS = saved
