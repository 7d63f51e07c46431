"""Who may take a study on Prolific (issue 47 item 4): the filters typed in the admin or on the command line,
checked against Prolific's filter list (prolific/filters.py) through the one client, and said on the launch panel.

A study in "not in these earlier studies" is named by its Duet slug (its Prolific study, once created) or by a
Prolific study id. In the admin a slug names only a study the user sees (experiments/team_scope.py)."""
from __future__ import annotations

from django.db.models import QuerySet
from django.utils.html import format_html, format_html_join

from experiments.models import Study

from . import filters
from .client import Client, ProlificError
from .models import ProlificStudy


def study_id_of(visible: QuerySet | None = None) -> filters.StudyIdOf:
    """A typed study → its Prolific id and words: a Duet slug (among `visible`, when given) whose Prolific study has
    been created, else a Prolific study id."""
    studies = Study.objects.all() if visible is None else visible

    def of(token: str) -> tuple[str, str]:
        study = studies.filter(slug=token).first()
        if study is not None:
            link = ProlificStudy.objects.filter(study=study).exclude(prolific_id="").first()
            if link is None:
                raise ValueError(f"the Duet study {token} has no study on Prolific yet (publish it first, or give a "
                                 "Prolific study id)")
            return link.prolific_id, f"{token} ({link.prolific_id})"
        if filters.PROLIFIC_ID.fullmatch(token):
            return token, token
        raise ValueError(f"{filters._shown(token)} is neither a Duet study nor a Prolific study id (24 hexadecimal "
                         "digits)")
    return of


def filters_checked(*, wanted: list[filters.Wanted], client: Client, visible: QuerySet | None = None
                    ) -> list[dict]:
    """The typed filters checked against Prolific's list (GET /api/v1/filters/), as stored on ProlificStudy.filters;
    FilterRefused (what is wrong) or ProlificError (the list could not be read). No list is asked for without
    filters."""
    wanted = filters.combine(wanted)  # (a filter given twice is refused before Prolific is asked)
    if not wanted:
        return []
    try:
        listed = filters.read_list(client.filters())
    except filters.ListShape as exc:
        raise ProlificError(str(exc)) from None
    chosen = filters.resolve(wanted, listed, study_id_of=study_id_of(visible))
    typed = {w.filter_id: w.typed() for w in filters.combine(wanted)}
    return [{"sent": c.sent, "words": c.words, "typed": typed[c.sent["filter_id"]]} for c in chosen]


def launch_line(study: Study) -> str:
    """The launch panel's line on eligibility (experiments/participation/launch.py's panel_lines): the devices and
    filters stored with the study's Prolific study, or that none are set yet."""
    link = ProlificStudy.objects.filter(study=study).first()
    if link is None:
        return format_html('<p id="launch-eligibility"><strong>Prolific eligibility:</strong> {}</p>',
                           "not set yet (the publish page takes the filters: languages, country, approval rate, "
                           "previous submissions, devices, earlier studies, any filter by its Prolific id).")
    words = link.filter_words()
    listed = format_html_join("", "<li>{}</li>", ((w,) for w in (words or [
        "no filter: anyone on Prolific with one of these devices"])))
    return format_html('<div id="launch-eligibility"><p><strong>Prolific eligibility</strong> ({}; devices: {}):</p>'
                       '<ul>{}</ul></div>', "sent with the study" if link.prolific_id else
                       "as last typed on the publish page, not yet on Prolific", ", ".join(link.devices or []) or "—",
                       listed)
