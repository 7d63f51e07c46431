"""A streamed import's progress, shown in the admin while the upload's write runs (issue 37 item 1):
the write's request stores the progress line (paired_batches.Progress: rows read, items written, the rate,
the time left) in the cache under the uploader and the upload's token at most once a second, and the
upload page asks for it every second (static/experiments/import_progress.js) until its answer arrives.
The cache is the deployment's (Redis in production, shared by the web processes; a local memory cache
in the embedded single-process server)."""
from __future__ import annotations

import time

from django.core.cache import cache
from django.http import JsonResponse

from .paired_batches import Progress

TTL_SECONDS = 3600


def _key(user, token: str) -> str:
    return f"duet:import-progress:{user.pk}:{token}"


def progress_recorder(*, user, token: str, every: float = 1.0, clock=time.monotonic):
    """on_progress(meter) for an importer: the line, for `user`'s upload `token`, stored at most every
    `every` seconds (and on the first call, and once the whole file is read)."""
    progress, last = Progress(clock=clock), [None]

    def record(meter) -> None:
        now = clock()
        finished = bool(meter.total_bytes) and meter.bytes_read >= meter.total_bytes
        if last[0] is None or now - last[0] >= every or finished:
            last[0] = now
            cache.set(_key(user, token), progress.text(meter), TTL_SECONDS)
    return record


def progress_line(*, user, token: str) -> str:
    """The last progress line of `user`'s upload `token` ('' before the first batch, or for another user)."""
    return cache.get(_key(user, token), "") if token else ""


def progress_view(model_admin, request, pk):
    """GET …/items/upload/progress/?upload=TOKEN → {"progress": "12,800 rows read …"} (the uploader's own)."""
    from .admin_views import _study

    _study(request, model_admin, pk)  # permission, and the study within the user's teams
    return JsonResponse({"progress": progress_line(user=request.user, token=request.GET.get("upload", "")[:64])})
