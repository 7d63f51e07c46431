"""The study page's completions-over-time chart: an inline SVG drawn here in plain Python (the web
process has no plotting library), cumulative completions of real participants against time."""
from __future__ import annotations

from django.utils.html import format_html, format_html_join

from ..models import Participant, Study

WIDTH, HEIGHT, PAD = 560, 160, 32


def completion_times(study: Study) -> list:
    return list(Participant.objects.filter(study=study, finished_at__isnull=False).real().completed()
                .order_by("finished_at").values_list("finished_at", flat=True))


def completions_svg(study: Study) -> str:
    """A step chart of cumulative completions (empty text when nobody has completed yet)."""
    times = completion_times(study)
    if not times:
        return ""
    start, end = times[0], times[-1]
    span = max((end - start).total_seconds(), 1.0)
    n = len(times)

    def x(when) -> float:
        return PAD + (WIDTH - 2 * PAD) * (when - start).total_seconds() / span

    def y(count: int) -> float:
        return HEIGHT - PAD - (HEIGHT - 2 * PAD) * count / n

    points = [(x(start), y(0))]
    for k, when in enumerate(times, 1):
        points += [(x(when), y(k - 1)), (x(when), y(k))]
    path = " ".join(f"{px:.1f},{py:.1f}" for px, py in points)
    labels = format_html_join("", '<text x="{}" y="{}" font-size="11" text-anchor="{}">{}</text>', [
        (PAD, HEIGHT - 8, "start", start.strftime("%Y-%m-%d %H:%M")),
        (WIDTH - PAD, HEIGHT - 8, "end", end.strftime("%Y-%m-%d %H:%M UTC")),
        (PAD - 4, y(n) + 4, "end", n), (PAD - 4, y(0) + 4, "end", 0)])
    return format_html(
        '<figure id="completions-chart"><svg xmlns="http://www.w3.org/2000/svg" width="{}" height="{}" role="img" '
        'aria-label="Completions over time: {} participants completed between {} and {}">'
        '<polyline fill="none" stroke="#0072B2" stroke-width="2" points="{}"/>'
        '<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="#999"/>{}</svg>'
        '<figcaption>Completions over time (real participants; cumulative)</figcaption></figure>',
        WIDTH, HEIGHT, n, start.strftime("%Y-%m-%d %H:%M"), end.strftime("%Y-%m-%d %H:%M UTC"), path,
        PAD, HEIGHT - PAD, WIDTH - PAD, HEIGHT - PAD, labels)
