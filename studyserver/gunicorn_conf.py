"""gunicorn's settings for the web image (docker/web.Dockerfile: `-c python:studyserver.gunicorn_conf`).

The access log keeps the consent's promise (issue 26 item 11; docs/production.md, "What the logs
hold"): per request the time, the method, the path with any session token replaced by a keyed hash,
the protocol, the status, the bytes sent and the duration. No client address, no query string (the
entry link's Prolific ids), no referrer, user agent, cookie or other header: the logger below hands
the format nothing else, whatever format is configured.
"""
from __future__ import annotations

from gunicorn.glogging import Logger

from common.logredact import RedactFilter, redact

accesslog = "-"
access_log_format = '%(t)s "%(r)s" %(s)s %(b)s %(M)sms'

# the atoms a format may use; every other one (h: the client's address, q: the query string, f, a,
# {header}i, {header}o, {variable}e) is "-"
_KEPT = ("t", "m", "s", "H", "b", "B", "T", "D", "M", "L", "p")


class AccessLogger(Logger):
    def atoms(self, resp, req, environ, request_time):
        every = super().atoms(resp, req, environ, request_time)
        kept = {name: every[name] for name in _KEPT if name in every}
        path = redact(environ.get("PATH_INFO") or "-")
        if environ.get("QUERY_STRING"):
            path += "?…"
        kept["U"] = path
        kept["r"] = f"{every.get('m', '-')} {path} {every.get('H', '-')}"
        return kept

    def setup(self, cfg):
        super().setup(cfg)
        for handler in self.error_log.handlers:  # "Error handling request <uri>" names the query and token
            handler.addFilter(RedactFilter())


logger_class = AccessLogger
