"""Tidy frames, metrics, mixed-effects models and reports (issue: analysis)."""
