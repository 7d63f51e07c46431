"""Uploaded files are streamed to disk and refused while they are read (issue 26 item 5).

Django's default handlers keep a small file in memory and a large one in a temporary file of any
size; the view then read it whole before checking its size (a 150 MB upload was read into memory
before the 20 MB check). This handler writes every uploaded file to a temporary file chunk by chunk
and drops it as soon as it passes settings.DUET_MAX_UPLOAD_BYTES: the temporary file is deleted, the
rest of that file's bytes are read from the connection and discarded, and the field's name is added
to `request.uploads_too_large` so that the view can say why there is no file. The other form fields
(the CSRF token among them) are parsed as usual. `kept` is the most bytes one file had on disk.
"""
from __future__ import annotations

from django.conf import settings
from django.core.files.uploadhandler import SkipFile, TemporaryFileUploadHandler

DEFAULT_MAX_UPLOAD_BYTES = 20 * 1024 * 1024


def max_upload_bytes() -> int:
    return int(getattr(settings, "DUET_MAX_UPLOAD_BYTES", DEFAULT_MAX_UPLOAD_BYTES))


def describe_size(size: int) -> str:
    """20 MB, 64 KB, 900 bytes."""
    if size >= 2**20:
        return f"{size / 2**20:g} MB"
    return f"{size / 2**10:g} KB" if size >= 2**10 else f"{size} bytes"


def too_large(request, field_name: str) -> bool:
    """Whether the upload handler refused the file sent in `field_name` for its size."""
    return field_name in getattr(request, "uploads_too_large", ())


class BoundedUploadHandler(TemporaryFileUploadHandler):
    def __init__(self, request=None):
        super().__init__(request)
        self.limit = max_upload_bytes()
        self.received = 0
        self.kept = 0

    def new_file(self, *args, **kwargs):
        super().new_file(*args, **kwargs)
        self.received = 0

    def receive_data_chunk(self, raw_data, start):
        self.received += len(raw_data)
        if self.received > self.limit:
            if self.request is not None:
                refused = getattr(self.request, "uploads_too_large", [])
                refused.append(self.field_name)
                self.request.uploads_too_large = refused
            raise SkipFile  # the parser closes (deletes) the temporary file and discards the rest
        self.kept = max(self.kept, self.received)
        return super().receive_data_chunk(raw_data, start)
