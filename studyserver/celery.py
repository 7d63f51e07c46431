"""The Celery app, where `celery -A studyserver` looks for it (common/celery_app.py makes it)."""
from common.celery_app import app

__all__ = ["app"]
