"""The launch panel on a study's admin page (issue 18): what to paste into Prolific and what must
hold before the study opens.

* the study link with Prolific's placeholders ({{%PROLIFIC_PID%}}, {{%STUDY_ID%}}, {{%SESSION_ID%}})
  under the arm's parameter names, on the public origin (DUET_PUBLIC_ORIGIN: the address participants
  open; said when it is unset or not one participants on the internet can open, common/public_origin.py),
  and a copy button; without the setting static/experiments/launch.js prefixes the page's own origin. The
  link is shown whatever the study's state: before, while open and after;
* the completion, no-consent, failed-attention and incompatible-device codes;
* the expected duration (the consent page's) and the reward it implies at the arm's hourly rate,
  or, once real participants have completed, their median time and the reward for it;
* a checklist: what readiness.open_problems refuses to open without (items, consent reviewed,
  practice, lists, completion code), and what a careful researcher does first (enough places for every
  list to be given, so every item is shown to someone; walk the preview, run a simulated pilot and
  build its report), shown but not enforced.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from django.urls import reverse
from django.utils.html import format_html, format_html_join

from common.public_origin import origin_problem, public_origin

from ..models import Participant, Study, StudyStatus
from . import consent, readiness
from .selectors import study_progress
from .services import human_arm_ensure, lists_hold, lists_scheme, lists_shortfall


# Lines an app above experiments adds to the panel (the prolific app: the study's eligibility on Prolific), each a
# function of the study giving safe HTML; registered from the app's ready() so no import here runs upward.
PANEL_LINES: list = []


def panel_line(line):
    """Register `line(study) -> html` to be shown on the panel, after the suggestions for Prolific."""
    if line not in PANEL_LINES:
        PANEL_LINES.append(line)
    return line


LISTS_DRAWN = "participants' lists can be drawn"
EVERY_ITEM = "every item shown to someone at the target sample size"


@dataclass(frozen=True)
class Check:
    label: str
    ok: bool
    required: bool
    how: str = ""  # where to fix it
    reason: str = ""  # why it does not hold (readiness's own words), when it does not


def _reason(problems: list[str], word: str, prefix: str = "") -> str:
    """The readiness problem that mentions `word`, without `prefix` (its heading)."""
    for problem in problems:
        if word in problem:
            return problem[len(prefix):] if prefix and problem.startswith(prefix) else problem
    return ""


def study_link(study: Study, arm) -> str:
    """The study's entry path with Prolific's placeholders (the origin is the server's own)."""
    path = reverse("participant:entry", kwargs={"slug": study.slug})
    params = ((arm.pid_param, "PROLIFIC_PID"), (arm.study_param, "STUDY_ID"), (arm.session_param, "SESSION_ID"))
    return path + "?" + "&".join(f"{name}={{{{%{placeholder}%}}}}" for name, placeholder in params)


def checklist(study: Study, arm) -> list[Check]:
    problems = readiness.open_problems(study)

    def blocked(word: str) -> bool:
        return any(word in p for p in problems)

    has_items = study.items.exists()
    practice = _reason(problems, "Practice question")
    lists = _reason(problems, "lists cannot be drawn", "Participants' lists cannot be drawn: ")
    walked = Participant.objects.filter(study=study).previews().completed().exists()
    piloted = Participant.objects.filter(study=study).simulated().exists()
    pilot_report = study.reports.filter(pilot=True, status="done").exists() if hasattr(study, "reports") else False
    drawn = has_items and not lists
    short = lists_shortfall(study=study, arm=arm) if drawn else None
    every_item = [Check(EVERY_ITEM, short is None, False,
                        "Human arm › Lists (target sample size, items per participant)",
                        short.message() if short else "")] if drawn else []  # said once the lists can be drawn
    return [
        Check("items generated or imported", has_items, True, "the Items line above: Generate items… or Upload a CSV bank…",
              "The study has no items yet."),
        Check("completion code set", bool(arm.completion_code.strip()), True, "Human arm › Prolific › Completion code",
              "No completion code: participants who finish could not be paid on Prolific."),
        Check("consent reviewed as it stands", consent.consent_problem(arm) is None, True,
              "Human arm › Consent: name a contact, tick 'Consent reviewed'", consent.consent_problem(arm) or ""),
        Check("practice shares no form with the items", not practice, True,
              "Human arm › Trials › Practice questions", practice.split(": change them under")[0]),
        Check(LISTS_DRAWN, has_items and not lists, True,
              "Human arm › Lists (items per participant, paired presentation)",
              lists or ("" if has_items else "There are no items to draw lists from.")),
        *every_item,
        Check("preview walked to the end", walked, False, "Use 'Preview the participant flow' below and finish it."),
        Check("simulated pilot run", piloted, False, "Action 'Run a simulated pilot'."),
        Check("pilot report built", pilot_report, False, "Action 'Build a pilot report'."),
    ]


@dataclass(frozen=True)
class Suggestion:
    """What the panel suggests for Prolific; the publish form starts from it (prolific/admin_views.py)."""
    minutes: int  # Prolific's estimated completion time: whole minutes
    reward_cents: int  # those minutes at the arm's hourly rate, rounded up to a cent
    places: int  # the arm's target sample size


def suggestion(study: Study, arm=None, progress=None) -> Suggestion:
    """The expected duration (the consent page's), or the median of the completed participants once there are
    any, rounded up to whole minutes; its reward at the arm's hourly rate; the target sample size as places."""
    arm = arm or human_arm_ensure(study=study)
    progress = progress or study_progress(study=study)
    if progress.median_minutes is not None:
        minutes = max(1, math.ceil(progress.median_minutes))
    else:
        minutes = consent.expected_minutes(questions=consent.planned_questions(arm), practice=len(arm.practice or []),
                                           seconds_per_question=arm.seconds_per_question)
    return Suggestion(minutes, int(arm.pay_for(minutes) * 100), arm.target_sample_size)


def launch_html(study: Study) -> str:
    arm = human_arm_ensure(study=study)
    link = study_link(study, arm)
    progress = study_progress(study=study)
    suggested = suggestion(study, arm, progress)
    if progress.median_minutes is not None:
        timing = format_html("median completion time {:.1f} min over {} completed participants; reward {} {}",
                             progress.median_minutes, progress.completed, arm.pay_for(progress.median_minutes),
                             arm.currency)
    else:
        timing = format_html("expected duration {} min (as the consent page says); reward {} {} at {} {}/hour — "
                             "revise it from the pilot's median time", suggested.minutes,
                             arm.pay_for(suggested.minutes), arm.currency, arm.hourly_rate(), arm.currency)
    suggested_line = format_html("Suggested for Prolific: {} places (the target sample size), {} min, reward {} "
                                 "cents ({} {}).", suggested.places, suggested.minutes, suggested.reward_cents,
                                 arm.pay_for(suggested.minutes), arm.currency)
    codes = format_html_join("", "<tr><th>{}</th><td><code>{}</code></td></tr>", (
        (label, value or "— not set —") for label, value in (
            ("completion", arm.completion_code), ("no consent", arm.no_consent_code),
            ("failed attention check", arm.failed_attention_code), ("incompatible device", arm.incompatible_device_code))))
    checks = checklist(study, arm)
    drawn = any(c.ok for c in checks if c.label == LISTS_DRAWN)  # readiness has checked the lists once already
    scheme = lists_scheme(study=study, arm=arm) if drawn else "—"
    held = lists_hold(study=study, arm=arm) if drawn else ""
    items = format_html_join("", '<li class="{}">{} {}{}{}</li>', (
        ("launch-ok" if c.ok else "launch-missing", "✓" if c.ok else "✗", c.label,
         "" if c.required else " (recommended)", "" if c.ok else _missing(c)) for c in checks))
    return format_html(
        '<div id="launch-panel"><p><strong>Study link for Prolific</strong> (paste as the study URL; Prolific fills the '
        'placeholders):</p><p>{} '
        '<button type="button" class="button" data-copy="launch-link">Copy link</button></p>{}'
        '<table>{}</table><p>{}</p><p id="launch-suggested">{}</p>{}<p id="launch-lists">Lists: {}.</p>{}<ul>{}</ul>'
        '<p><strong>{}</strong></p>{}</div>',
        _link(link), _origin_line(), codes, timing, suggested_line,
        format_html_join("", "{}", ((line(study),) for line in PANEL_LINES)), scheme, _held(held), items,
        state_line(study, checks), _publish(study, checks))


def _link(path: str) -> str:
    """The study link on the public origin; without one, the path for launch.js to put this page's origin before."""
    origin = public_origin()
    if origin:
        return format_html('<code id="launch-link">{}</code>', origin + path)
    return format_html('<code id="launch-link" data-relative="{}">{}</code>', path, path)


def _origin_line() -> str:
    """Where the link's origin comes from, and why it will not do for participants when it will not."""
    origin = public_origin()
    problem = origin_problem(origin)
    if not origin:
        return format_html('<p id="launch-origin" class="launch-missing"><strong>Public origin:</strong> {} Until then '
                           'the link above uses the address of this page, and Duet does not publish on Prolific.</p>',
                           problem)
    if problem:
        return format_html('<p id="launch-origin" class="launch-missing"><strong>Public origin:</strong> {} Duet does '
                           'not publish on Prolific with it.</p>', problem)
    return format_html('<p id="launch-origin" class="launch-ok"><strong>Public origin:</strong> <code>{}</code> '
                       '(DUET_PUBLIC_ORIGIN).</p>', origin)


def _held(held: str) -> str:
    """The items people can be shown: those the lists hold (issue 44 item 2)."""
    return format_html('<p id="launch-shown">Items people can be shown: {}.</p>', held) if held else ""


def _publish(study: Study, checks: list[Check]) -> str:
    """Publish on Prolific (the prolific app's page, by its URL name): offered only when the checklist is green."""
    if not all(c.ok for c in checks if c.required):
        return ""
    return format_html('<p><a class="button" id="launch-publish" href="{}">Publish on Prolific…</a> (creates and '
                       'publishes the Prolific study from Duet, with this link and these codes)</p>',
                       reverse("prolific:page", args=[study.pk]))


def _missing(check: Check) -> str:
    """' — <why it does not hold> — change it in <where>' (only where for a recommended step without a reason), each
    line ending in one full stop whether or not the words it quotes end in one."""
    how = check.how.rstrip(".")
    if check.reason:
        return format_html(" — {} — change it in {}.", check.reason.rstrip("."), how)
    return format_html(" — {}.", how) if not check.required else format_html(" — change it in {}.", how)


def state_line(study: Study, checks: list[Check]) -> str:
    """What the panel says of the study as a whole: its status, and for a draft whether it can open."""
    if study.status == StudyStatus.OPEN:
        return "Open: participants can take the study now (the action 'Pause' stops new entries)."
    if study.status == StudyStatus.PAUSED:
        return "Paused: no new participants (the action 'Open for participants' reopens it)."
    if study.status == StudyStatus.CLOSED:
        return "Closed: it takes no participants."
    if all(c.ok for c in checks if c.required):
        return "Ready to open."
    return "Not ready to open: the items marked ✗ above (not 'recommended') must be done first."
