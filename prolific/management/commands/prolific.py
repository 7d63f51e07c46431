"""manage.py prolific publish|sync|review|bonus|demographics STUDY … (issue 38; docs/participants.md).

review and bonus are dry runs unless --apply is given."""
from __future__ import annotations

from decimal import Decimal, InvalidOperation

from django.core.management.base import BaseCommand, CommandError

from experiments.models import Study
from common.public_origin import public_origin

from ...client import ProlificError
from ...filters import DEVICES, PREVIOUS_STUDIES, FilterSyntax, parse, values_of
from ...demographics import DemographicsRefused, demographics_import
from ...bonuses import PAYABLE, bonus_median_set, prolific_bonus, to_pay_cents
from ...services import ProlificRefused, arm_of, prolific_publish, prolific_review
from ...sync import prolific_sync, prolific_sync_whole


def _money(text: str, *, zero: bool = False) -> Decimal:
    try:
        value = Decimal(text)
    except InvalidOperation:
        raise CommandError(f"'{text}' is not an amount (write e.g. 9.00)") from None
    if not value.is_finite() or value < 0 or (value == 0 and not zero) or value != value.quantize(Decimal("0.01")) \
            or value > Decimal("21474836.47"):
        raise CommandError(f"'{text}' must be {'0' if zero else 'above 0'} to 21474836.47, with at most 2 decimals")
    return value


class Command(BaseCommand):
    help = "Run a study's Prolific side: publish, sync, review (dry run; --apply), bonus (dry run; --apply)."

    def add_arguments(self, parser):
        sub = parser.add_subparsers(dest="action", required=True)
        p = sub.add_parser("publish", help="create the Prolific study (once) and publish it")
        p.add_argument("study")
        p.add_argument("--reward", type=int, required=True, help="the reward in cents of the study's currency")
        p.add_argument("--places", type=int, required=True)
        p.add_argument("--minutes", type=int, required=True, help="the estimated completion time")
        p.add_argument("--name", default="")
        p.add_argument("--description", default="")
        p.add_argument("--origin", default=None, help="the public origin participants open, e.g. "
                       "https://duet.example.org (default: DUET_PUBLIC_ORIGIN); a loopback, private or local-only "
                       "address, or plain http, is refused")
        p.add_argument("--filter", action="append", default=[], metavar="ID=VALUE[,VALUE]",
                       help="a Prolific eligibility filter, repeatable: a select filter's choice ids or labels "
                            "(first-language=English), a range ID=LOW..HIGH or ID=LOW-HIGH (approval_rate=95..100); "
                            "short names: first_language, fluent_languages, country, approval_rate, submissions; any "
                            "other filter by its Prolific id. Checked against Prolific's list before anything is created")
        p.add_argument("--not-in", action="append", default=[], metavar="STUDY[,STUDY]",
                       help="exclude the participants of these earlier studies (Duet study slugs or Prolific study "
                            "ids; Prolific's previous_studies_blocklist), repeatable")
        p.add_argument("--device", action="append", choices=DEVICES, default=None,
                       help="a device participants may use, repeatable (default: desktop only; tablet and "
                            "mobile only for a human arm that takes taps, answer input buttons_touch)")
        p.add_argument("--create-again", action="store_true",
                       help="send the create call again (only after checking in Prolific's web app that an earlier "
                            "creation whose outcome is unknown made no study)")
        s = sub.add_parser("sync", help="fetch the submissions and join them to Duet's participants")
        s.add_argument("study")
        r = sub.add_parser("review", help="approve / reject / request a return by the study's rule")
        r.add_argument("study")
        r.add_argument("--apply", action="store_true")
        b = sub.add_parser("bonus", help="pay each approved participant a bonus, exactly once")
        b.add_argument("study")
        group = b.add_mutually_exclusive_group()
        group.add_argument("--hourly-wage", help="003's rule with this wage (default: the human arm's Prolific "
                                                 "minimum × its multiplier) × the median time − the reward")
        group.add_argument("--amount", help="a fixed bonus, in the study's currency (e.g. 0.50)")
        b.add_argument("--median-of", choices=["completed", "approved"],
                       help="the study's setting: the median of all participants who completed (003's rule, the "
                            "default) or of the approved submissions only; fixed with the rule at the first payment")
        b.add_argument("--apply", action="store_true")
        b.add_argument("--confirm-total", help="with --apply: the total this run pays, as the dry run printed it "
                                               "(nothing is paid without it, or when it differs)")
        d = sub.add_parser("demographics", help="import Prolific's demographic export (CSV)")
        d.add_argument("study")
        d.add_argument("csv")

    def handle(self, *args, action, study, **options):
        found = Study.objects.filter(slug=study).first()
        if found is None:
            raise CommandError(f"No study '{study}'.")
        try:
            getattr(self, f"_{action}")(found, options)
        except (ProlificError, ProlificRefused, DemographicsRefused) as exc:
            raise CommandError(str(exc)) from None

    def _publish(self, study, o):
        try:
            wanted = [parse(text) for text in o["filter"]]
            wanted += [values_of(PREVIOUS_STUDIES, text) for text in o["not_in"]]
        except FilterSyntax as exc:
            raise CommandError(f"--filter/--not-in: {exc}") from None
        origin = public_origin() if o["origin"] is None else o["origin"]
        link = prolific_publish(study=study, origin=origin, reward_cents=o["reward"], places=o["places"],
                                minutes=o["minutes"], name=o["name"], description=o["description"],
                                create_again=o["create_again"], filters=wanted, devices=o["device"])
        self.stdout.write(f"Published on Prolific: study {link.prolific_id} ({link.places} places, "
                          f"{link.reward_cents} cents, {link.minutes} min; devices: {', '.join(link.devices)}).")
        for words in link.filter_words():
            self.stdout.write(f"Filter: {words}")

    def _sync(self, study, o):
        synced = prolific_sync(study=study)
        self.stdout.write("submission\tProlific status\ttime taken (s)\tDuet status\tattention\tanswers\tflag")
        for r in synced.rows:
            attention = "" if r.participant is None else ("failed" if r.failed_attention else "passed")
            self.stdout.write(f"{r.submission_id or '—'}\t{r.prolific_status or '—'}\t{r.time_taken or '—'}\t"
                              f"{r.duet_status or '—'}\t{attention or '—'}\t{r.answers}\t{r.flag}")
        self.stdout.write(synced.words())

    def _review(self, study, o):
        prolific_sync_whole(study=study)
        plan = prolific_review(study=study, apply=o["apply"])
        for item in plan:
            done = " (done)" if item.done_before else ""
            self.stdout.write(f"{item.row.submission_id}\t{item.decision.action}{done}\t{item.decision.why}")
        self.stdout.write(f"{len(plan)} submissions awaiting review." + ("" if o["apply"] else
                          " Dry run: nothing sent (add --apply)."))

    def _bonus(self, study, o):
        if o["median_of"]:
            bonus_median_set(study=study, median_of=o["median_of"])
        prolific_sync_whole(study=study)
        wage = _money(o["hourly_wage"]) if o["hourly_wage"] else None
        amount = _money(o["amount"]) if o["amount"] else None
        confirm = _money(o["confirm_total"], zero=True) if o["confirm_total"] else None
        lines, rule = prolific_bonus(study=study, apply=o["apply"], hourly_wage=wage, amount=amount,
                                     confirm_cents=None if confirm is None else int(confirm * 100))
        self.stdout.write(f"Rule: {rule.described}")
        self.stdout.write(f"Each participant: {rule.each_cents / 100:.2f} {arm_of(study).currency}.")
        for line in lines:
            self.stdout.write(f"{line.prolific_pid}\t{line.amount_cents / 100:.2f}\t{line.state or 'not paid'}")
        total = sum(line.amount_cents for line in lines)
        payable = sum(1 for line in lines if line.state in PAYABLE)
        self.stdout.write(f"{len(lines)} bonuses, total {total / 100:.2f}." + ("" if o["apply"] else
                          f" To pay by this run: {to_pay_cents(lines) / 100:.2f} ({payable} participants). Dry run: "
                          f"nothing paid (add --apply --confirm-total {to_pay_cents(lines) / 100:.2f})."))

    def _demographics(self, study, o):
        try:
            with open(o["csv"], "rb") as stream:
                done = demographics_import(study=study, stream=stream)
        except OSError as exc:
            raise CommandError(f"Cannot read {o['csv']}: {exc.strerror}") from None
        self.stdout.write(f"Imported {', '.join(done.columns)} for {done.joined} participants; {done.skipped} rows "
                          f"of others skipped; columns not in the consent text dropped: "
                          f"{', '.join(done.dropped_columns) or 'none'}.")
