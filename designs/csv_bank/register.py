"""The yes/no bank adds nothing to the report: the study-wide parts (analysis/versus.py, likeness_report.py) read it."""
from __future__ import annotations


def register() -> None:
    return None
