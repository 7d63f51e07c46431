"""The Content-Security-Policy header (Django 5.2 has none built in).

Participant pages load only our own static ES modules and stylesheet: no inline script or style,
nothing from another origin, no framing. The admin keeps one allowance, inline styles (Django's
change list and the self-contained report.html use them), and data: images (the report's plots).
Every other security header comes from Django's SecurityMiddleware and XFrameOptionsMiddleware
(settings.py): X-Frame-Options DENY, X-Content-Type-Options nosniff, Referrer-Policy same-origin,
Cross-Origin-Opener-Policy, and HSTS when served over HTTPS.
"""
from __future__ import annotations

from django.conf import settings
from django.urls import reverse

BASE = {
    "default-src": ("'self'",),
    "script-src": ("'self'",),
    "style-src": ("'self'",),
    "img-src": ("'self'", "data:"),
    "connect-src": ("'self'",),
    "font-src": ("'self'",),
    "object-src": ("'none'",),
    "base-uri": ("'none'",),
    "form-action": ("'self'",),
    "frame-ancestors": ("'none'",),
}
ADMIN = {**BASE, "style-src": ("'self'", "'unsafe-inline'")}


def render_policy(policy: dict[str, tuple[str, ...]]) -> str:
    return "; ".join(f"{name} {' '.join(sources)}" for name, sources in policy.items())


PARTICIPANT_POLICY = render_policy(BASE)
ADMIN_POLICY = render_policy(ADMIN)


class ContentSecurityPolicyMiddleware:
    header = "Content-Security-Policy"

    def __init__(self, get_response):
        self.get_response = get_response
        self._admin_prefix: str | None = None

    def admin_prefix(self) -> str:
        if self._admin_prefix is None:
            self._admin_prefix = reverse("admin:index")
        return self._admin_prefix

    def __call__(self, request):
        response = self.get_response(request)
        if getattr(settings, "DUET_CSP", True) and self.header not in response:
            admin = request.path.startswith(self.admin_prefix())
            response[self.header] = ADMIN_POLICY if admin else PARTICIPANT_POLICY
        return response
