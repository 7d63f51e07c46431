"""Language models, model runs and their Celery tasks (issue: model arm)."""
