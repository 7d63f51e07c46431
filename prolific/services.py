"""Publishing, following and reviewing on Prolific (issue 38). Every service takes the study and a
client (prolific/client.py; made from the environment when none is given) and records each API call on the
study (ApiCall). The exactly-once rules:

* publish: a ProlificStudy row with a unique internal name is saved *before* the create call; a rerun whose
  row has no Prolific id looks for a Prolific study with that internal name before creating one, so a
  creation whose answer was lost is adopted, never repeated; the create call is sent by the one run that
  claims it;
* review: a ReviewAction is saved before each transition and marked done after; a submission with one is
  never transitioned again (Prolific documents its transitions as idempotent too);
* bonuses: prolific/bonuses.py (the ledger);
* sync: prolific/sync.py (streamed, under one deadline, resumable; Prolific's answers checked before stored).
"""
from __future__ import annotations

import secrets
from dataclasses import dataclass

from django.db.models import Count
from django.utils import timezone

from experiments.models import AnswerInput, Participant, ParticipantStatus, Study, Trial
from experiments.participation.consent import attention_rule_shown, attention_told
from common.public_origin import origin_problem

from . import rules
from .client import Client, ProlificError
from .eligibility import filters_checked
from .filters import FilterRefused, FilterSyntax, Wanted, devices_checked
from .models import ApiCall, ProlificStudy, PublishState, ReviewAction, Submission


class ProlificRefused(Exception):
    """A request Duet refuses before calling Prolific (the message says why and what to do)."""


def client_for(study: Study, client: Client | None = None) -> Client:
    def record(method, path, status, seconds, error):
        ApiCall.objects.create(study=study, method=method, path=path[:300], status=status, seconds=round(seconds, 3),
                               error=error[:300])
    if client is not None:
        client._record = record
        return client
    return Client(record=record)


def arm_of(study: Study):
    from experiments.participation.services import human_arm_ensure
    return human_arm_ensure(study=study)


def link_of(study: Study) -> ProlificStudy | None:
    return ProlificStudy.objects.filter(study=study).first()


# ------------------------------------------------------------------------------------------ publish
def study_body(*, study: Study, origin: str, reward_cents: int, places: int, minutes: int, name: str,
               description: str, internal_name: str, filters: list[dict] = (),
               devices: list[str] = ("desktop",)) -> dict:
    from experiments.participation.launch import study_link

    arm = arm_of(study)
    codes = [{"code": arm.completion_code, "code_type": "COMPLETED", "actions": [{"action": "MANUALLY_REVIEW"}]}]
    for code, kind in ((arm.failed_attention_code, "FAILED_ATTENTION_CHECK"), (arm.no_consent_code, "NO_CONSENT"),
                       (arm.incompatible_device_code, "INCOMPATIBLE_DEVICE")):
        if code.strip():
            codes.append({"code": code, "code_type": kind, "actions": [{"action": "MANUALLY_REVIEW"}]})
    return {
        "name": name, "internal_name": internal_name, "description": description,
        "external_study_url": origin.rstrip("/") + study_link(study, arm),
        "prolific_id_option": "url_parameters", "completion_codes": codes,
        "total_available_places": places, "estimated_completion_time": minutes, "reward": reward_cents,
        "device_compatibility": list(devices),
        **({"filters": list(filters)} if filters else {}),
    }


def devices_problem(*, arm, devices: list[str]) -> str:
    """Why Prolific must not offer the study on `devices` ("" when it may): a human arm whose participants answer by
    keys (HumanArm.answer_input "keys" or "keys_buttons": the participant page turns phones and tablets away with
    the incompatible-device code) is offered on desktops only; "buttons_touch" may be offered on any device."""
    mode = arm.input_mode()
    others = [d for d in devices if d != "desktop"]
    if mode.phones or not others:
        return ""
    return (f"Prolific would offer this study on {' and '.join(others)} devices, but its participants answer "
            f"by “{mode.label}” (the human arm's answer input), and the participant page turns phones and tablets "
            "away. Publish it for desktop only, or first let the human arm take taps (answer input “"
            f"{AnswerInput.BUTTONS_TOUCH.label}”). Nothing was sent to Prolific.")


def default_description(arm) -> str:
    """The advert's description when the researcher writes none: how its participants answer is the arm's."""
    return f"A study of reasoning: read short statements and answer questions about them {arm.input_mode().how}."


def publish_problems(*, study: Study, reward_cents: int, minutes: int, places: int) -> list[str]:
    from experiments.participation.launch import checklist

    arm = arm_of(study)
    problems = [f"Launch checklist: {c.label} is not done." for c in checklist(study, arm) if c.required and not c.ok]
    if places < 1:
        problems.append("The number of places must be at least 1.")
    problems += [f"The {name} must be at most {rules.MAX_CENTS} (what Duet stores of it)." for name, value in (
        ("reward in cents", reward_cents), ("number of places", places), ("estimated time in minutes", minutes))
        if value > rules.MAX_CENTS]
    money = rules.minimum_reward_problem(reward_cents=reward_cents, minutes=minutes,
                                         min_hourly=arm.prolific_min_hourly, currency=arm.currency)
    return problems + ([money] if money else [])


def prolific_publish(*, study: Study, origin: str, reward_cents: int, places: int, minutes: int, name: str = "",
                     description: str = "", create_again: bool = False, client: Client | None = None,
                     filters: list[Wanted] = (), devices: list[str] | None = None, visible=None) -> ProlificStudy:
    """Create the Prolific study (once) and publish it; the Prolific id is stored on the study.

    Refused before anything is written or sent: an `origin` participants on the internet cannot open
    (common/public_origin.py: loopback, private, link-local…, a local-only name, not https), a checklist
    not green, a reward under Prolific's minimum, no API token. Refused before anything is written or created
    (only Prolific's list of filters is read): `filters` Prolific's list does not allow (prolific/eligibility.py;
    `visible`: the studies a Duet slug may name). Refused before anything is written or asked of Prolific: `devices`
    beyond desktop for a study answered by keys only (devices_problem). Until the create call is sent, a publish that
    was refused or failed takes the reward, places, time, filters and devices typed this time, never those of the
    earlier try."""
    link = link_of(study)
    if link and link.state == PublishState.PUBLISHED:
        return link
    problem = origin_problem(origin)
    if problem:
        raise ProlificRefused(problem)
    typed = link is None or (not link.prolific_id and (link.create_sent_at is None or create_again))
    if typed:
        problems = publish_problems(study=study, reward_cents=reward_cents, minutes=minutes, places=places)
        if problems:
            raise ProlificRefused(" ".join(problems))
    client = client_for(study, client)  # no token: refused here, before any row is written
    values = {"reward_cents": reward_cents, "places": places, "minutes": minutes}
    if typed:
        try:
            values["devices"] = devices_checked(["desktop"] if devices is None else devices)
            problem = devices_problem(arm=arm_of(study), devices=values["devices"])
            if problem:  # before Prolific's filter list is asked for
                raise ProlificRefused(problem)
            values["filters"] = filters_checked(wanted=list(filters), client=client, visible=visible)
        except (FilterSyntax, FilterRefused) as exc:
            raise ProlificRefused(str(exc)) from None
    if link is None:
        link, _ = ProlificStudy.objects.get_or_create(study=study, defaults={
            "internal_name": f"duet:{study.slug}:{secrets.token_hex(4)}", **values})
    if typed:  # (a create already sent keeps its values, unless the researcher says to create again)
        rows = ProlificStudy.objects.filter(pk=link.pk, prolific_id="")
        if (rows if create_again else rows.filter(create_sent_at__isnull=True)).update(**values):
            link.refresh_from_db()
    if not link.prolific_id:
        found = next((s for s in client.studies() if s.get("internal_name") == link.internal_name), None)
        if found is None:
            found = _create_once(link, client, create_again=create_again, body=study_body(
                study=study, origin=origin, reward_cents=link.reward_cents, places=link.places,
                minutes=link.minutes, internal_name=link.internal_name, filters=link.filters_sent(),
                devices=link.devices,
                name=name or study.participant_title or "A short reasoning study",
                description=description or default_description(arm_of(study))))
        link.prolific_id = rules_id(found)
        link.state = PublishState.DRAFT
        link.save(update_fields=["prolific_id", "state"])
    client.study_publish(link.prolific_id)
    link.state, link.published_at = PublishState.PUBLISHED, timezone.now()
    link.save(update_fields=["state", "published_at"])
    return link


def _create_once(link: ProlificStudy, client: Client, *, body: dict, create_again: bool) -> dict:
    """The create call, sent by one run only: the run that claims `create_sent_at` (one conditional UPDATE).
    A claim already taken whose study Prolific does not list (another run is creating it, or a create whose
    outcome is unknown never reached Prolific) is refused unless the researcher says to create again."""
    rows = ProlificStudy.objects.filter(pk=link.pk)
    if create_again:
        rows.update(create_sent_at=None)
    if rows.filter(create_sent_at__isnull=True).update(create_sent_at=timezone.now()) != 1:
        raise ProlificRefused(
            "A creation of this study on Prolific was already sent, and Prolific does not list a study of that "
            f"internal name ({link.internal_name}). If another publish is still running, wait for it. If you have "
            "checked in Prolific's web app that no such study exists, publish again with --create-again (the admin: "
            "tick 'Create again').")
    try:
        return client.study_create(body)
    except ProlificError as exc:
        if not exc.unknown:  # refused (4xx): nothing was created, so the next run may create
            rows.update(create_sent_at=None)
        raise


def rules_id(answer: dict) -> str:
    """The id an answer of Prolific's names (a study's, a bulk bonus payment's), checked: 24 hexadecimal digits."""
    value = answer.get("id") if isinstance(answer, dict) else None
    if not rules.is_prolific_id(value):
        raise ProlificError("Prolific's answer names no id in Prolific's format (24 hexadecimal digits): nothing was "
                            "stored", unknown=True)
    return value


# ------------------------------------------------------------------------------------------ sync
@dataclass(frozen=True)
class Row:
    submission_id: str
    prolific_pid: str
    participant: Participant | None
    prolific_status: str
    time_taken: int | None
    study_code: str
    duet_status: str
    failed_attention: bool
    wrong_checks: int
    answers: int
    flag: str  # '' or why the row is odd


def seconds_taken(submission: dict) -> int | None:
    """Prolific's time_taken (seconds), else completed_at − started_at; None when neither is there or sane."""
    from django.utils.dateparse import parse_datetime

    taken = submission.get("time_taken")
    if isinstance(taken, int | float) and not isinstance(taken, bool) and 0 <= taken < 10**7:
        return int(taken)
    try:
        started = parse_datetime(str(submission.get("started_at") or ""))
        completed = parse_datetime(str(submission.get("completed_at") or ""))
    except ValueError:
        return None
    if started and completed and completed >= started:
        return int((completed - started).total_seconds())
    return None


def sync_rows(*, study: Study) -> list[Row]:
    arm = arm_of(study)
    rule = arm.attention_rule()
    counts = dict(Trial.objects.filter(participant__study=study).values("participant_id").annotate(n=Count("pk"))
                  .values_list("participant_id", "n"))
    rows, listed = [], set()
    for s in Submission.objects.filter(study=study).select_related("participant").order_by("pk"):
        p = s.participant
        listed.add(p.pk if p else None)
        rows.append(Row(s.submission_id, s.prolific_pid, p, s.status, s.time_taken, s.study_code,
                        p.status if p else "", bool(p and rule.failed(failures=p.attention_failures, status=p.status)),
                        p.attention_failures if p else 0, counts.get(p.pk, 0) if p else 0,
                        "" if p else "no record in Duet"))
    for p in Participant.objects.filter(study=study).real().exclude(pk__in=listed):
        rows.append(Row("", p.prolific_pid, p, "", None, "", p.status,
                        rule.failed(failures=p.attention_failures, status=p.status), p.attention_failures,
                        counts.get(p.pk, 0), "not listed by Prolific"))
    return rows


# ------------------------------------------------------------------------------------------ review
@dataclass(frozen=True)
class Planned:
    row: Row
    decision: rules.Decision
    done_before: bool  # Duet already sent this submission's transition


def review_plan(*, study: Study) -> list[Planned]:
    arm = arm_of(study)
    link = link_of(study)
    minutes = link.minutes if link else 0
    done = set(ReviewAction.objects.filter(study=study).values_list("submission_id", flat=True))
    expected = {ParticipantStatus.COMPLETED: (arm.completion_code,),
                ParticipantStatus.FAILED_ATTENTION: (arm.failed_attention_code, arm.completion_code)}
    plan = []
    for row in sync_rows(study=study):
        if row.prolific_status != rules.AWAITING_REVIEW or not row.submission_id:
            continue
        seen = rules.Seen(in_duet=row.participant is not None, duet_status=row.duet_status,
                          completed=row.duet_status == ParticipantStatus.COMPLETED,
                          declined_consent=row.duet_status == ParticipantStatus.NO_CONSENT,
                          failed_attention=row.failed_attention, told_rule=attention_rule_shown(arm, row.participant),
                          wrong_checks=row.wrong_checks, answers=row.answers,
                          code_given=row.study_code,
                          codes_expected=tuple(c for c in expected.get(row.duet_status, ()) if c))
        plan.append(Planned(row, rules.review(seen, study_minutes=minutes), row.submission_id in done))
    return plan


def prolific_review(*, study: Study, apply: bool, client: Client | None = None) -> list[Planned]:
    """The plan for every submission awaiting review; with `apply`, each approve/reject/return sent once."""
    plan = review_plan(study=study)
    if not apply:
        return plan
    arm = arm_of(study)
    client = client_for(study, client)
    for item in plan:
        if item.done_before or item.decision.action == "leave":
            continue
        action, _ = ReviewAction.objects.get_or_create(
            study=study, submission_id=item.row.submission_id,
            defaults={"participant": item.row.participant, "decision": item.decision.action,
                      "reason": item.decision.why[:300]})
        if action.done_at:
            continue
        sid = item.row.submission_id
        if action.decision == "approve":
            client.submission_transition(sid, {"action": "APPROVE"})
        elif action.decision == "reject":
            client.submission_transition(sid, {
                "action": "REJECT", "rejection_category": rules.REJECTION_CATEGORY,
                "message": rules.rejection_message(wrong=item.row.wrong_checks, told=attention_told(arm))})
        else:
            client.submission_request_return(sid, ["No data was recorded in the study for this submission."])
        action.done_at = timezone.now()
        action.save(update_fields=["done_at"])
    return review_plan(study=study)
