"""The Celery app. Settings come from Django's settings under the CELERY_ namespace."""
from __future__ import annotations

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "studyserver.settings")

app = Celery("studyserver")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
