"""The study's Prolific page in the admin (issue 38): publish (only when the launch checklist is green), sync /
refresh, review and bonuses each with a dry run and an apply, and the API calls made. One view; the forms post
back to it. A user sees the page of a study their teams see (experiments/team_scope.py) and acts on it only
with the permission to change studies.

Publishing (issue 43 item 5): the link sent is built on the public origin (DUET_PUBLIC_ORIGIN), shown with what
would stop a publish — an origin participants cannot open, no API token — as soon as the page opens; the form
starts from the launch panel's suggestions and, after a refusal, shows what was typed. Who may take the study
(issue 47 item 4): prolific/publish_form.py's fields, checked against Prolific's list of filters."""
from __future__ import annotations

from decimal import Decimal

from django import forms
from django.conf import settings
from django.contrib import admin, messages
from django.contrib.admin.views.decorators import staff_member_required
from django.core.exceptions import PermissionDenied
from django.core.validators import MaxValueValidator
from django.shortcuts import redirect
from django.template.response import TemplateResponse

from experiments.participation.launch import study_link, suggestion
from experiments.team_scope import study_or_404, visible_studies
from common.public_origin import origin_problem, public_origin

from . import bonuses, rules, services
from .sync import prolific_sync, prolific_sync_whole
from .client import NO_TOKEN, ProlificError, token_set
from .demographics import DemographicsRefused, demographics_codebook, demographics_import
from .models import ApiCall, Bonus, BonusMedianOf, BonusRule, Demographics, ProlificStudy
from .publish_form import PublishForm, initial_from


class BonusForm(forms.Form):
    median_of = forms.ChoiceField(choices=BonusMedianOf.choices, required=False, label="Median completion time of",
                                  help_text="The study's setting (003: all who completed); fixed at the first payment.")
    hourly_wage = forms.DecimalField(required=False, min_value=Decimal("0.01"), max_digits=8, decimal_places=2,
                                     label="Target hourly wage (003's rule)")
    amount = forms.DecimalField(required=False, min_value=Decimal("0.01"), max_digits=10, decimal_places=2,
                                label="or a fixed amount")
    confirm_total = forms.DecimalField(
        required=False, min_value=Decimal("0"), max_digits=12, decimal_places=2, label="Total to pay",
        help_text="To pay: type the total the dry run shows for this run. Nothing is paid without it.")

    def __init__(self, *args, arm_rate: Decimal | None = None, fixed: BonusRule | None = None, **kwargs):
        super().__init__(*args, **kwargs)
        if arm_rate is not None:
            self.fields["hourly_wage"].help_text = f"Empty: the human arm's Prolific minimum × multiplier, {arm_rate}."
            self.fields["hourly_wage"].widget.attrs["placeholder"] = str(arm_rate)
        if fixed is not None:  # the rule is the study's now: nothing to choose
            for name in ("median_of", "hourly_wage", "amount"):
                self.fields[name].disabled = True
            self.fields["hourly_wage"].help_text = f"Fixed at the first payment: {fixed.words}."
        ceiling = (Decimal(settings.DUET_PROLIFIC_BONUS_CEILING_CENTS) / 100).quantize(Decimal("0.01"))
        self.fields["amount"].max_value = ceiling  # (the wage rule's amount is checked against it when worked out)
        self.fields["amount"].validators.append(MaxValueValidator(ceiling))
        self.fields["amount"].help_text = f"At most {ceiling:.2f} a participant (DUET_PROLIFIC_BONUS_CEILING)."

    def clean(self):
        data = super().clean()
        if data.get("hourly_wage") is not None and data.get("amount") is not None:
            raise forms.ValidationError("Give either a target hourly wage or a fixed amount, not both (neither: 003's "
                                        "rule at the human arm's wage).")
        return data


class DemographicsForm(forms.Form):
    export = forms.FileField(label="Prolific's demographic export (CSV)")


@staff_member_required
def prolific_page(request, pk: int):
    study = study_or_404(user=request.user, pk=pk)
    link = ProlificStudy.objects.filter(study=study).first()
    do = request.POST.get("do")
    publish_form = PublishForm(request.POST if do == "publish" else None, initial=_publish_initial(study, link))
    fixed = BonusRule.objects.filter(study=study).first()
    bonus_form = BonusForm(request.POST if do == "bonus" else request.GET or None, fixed=fixed,
                           arm_rate=services.arm_of(study).hourly_rate(),
                           initial={"median_of": link.bonus_median_of if link else BonusMedianOf.COMPLETED})
    demographics_form = DemographicsForm(request.POST if do == "demographics" else None,
                                         request.FILES if do == "demographics" else None)
    review = bonus = None
    if request.method == "POST":
        if not request.user.has_perm("experiments.change_study"):
            raise PermissionDenied
        apply = request.POST.get("apply") == "yes"
        try:
            if do == "publish" and publish_form.is_valid():
                d = publish_form.cleaned_data
                services.prolific_publish(study=study, origin=public_origin(), reward_cents=d["reward"],
                                          places=d["places"], minutes=d["minutes"], name=d["name"],
                                          description=d["description"], create_again=d["create_again"],
                                          filters=d["wanted"], devices=d["devices"],
                                          visible=visible_studies(request.user))
                messages.success(request, "Published on Prolific.")
                return redirect(request.path)
            if do == "sync":
                synced = prolific_sync(study=study)
                (messages.success if synced.complete and not synced.refused else messages.warning)(
                    request, synced.words())
                return redirect(request.path)
            if do == "review":
                prolific_sync_whole(study=study)
                review = services.prolific_review(study=study, apply=apply)
                messages.success(request, "Review applied." if apply else "Dry run: nothing was sent to Prolific.")
            if do == "bonus" and bonus_form.is_valid():
                if apply and not request.user.has_perm("prolific.pay_bonus"):
                    raise services.ProlificRefused("Paying bonuses needs its own permission, 'Can pay bonuses to "
                                                   "participants on Prolific' (a superuser grants it): nothing was "
                                                   "paid. A dry run needs no more than changing the study.")
                d = bonus_form.cleaned_data
                if d.get("median_of") and fixed is None:
                    bonuses.bonus_median_set(study=study, median_of=d["median_of"])
                prolific_sync_whole(study=study)
                confirm = d.get("confirm_total")
                bonus = bonuses.prolific_bonus(study=study, apply=apply, hourly_wage=d.get("hourly_wage"),
                                                amount=d.get("amount"),
                                                confirm_cents=None if confirm is None else rules.cents(confirm))
                messages.success(request, "Bonuses paid (each participant once)." if apply else
                                 "Dry run: nothing was paid.")
                if fixed is None and bonus.rule.pk is not None:  # this payment fixed the rule: the form says so
                    bonus_form = BonusForm(fixed=bonus.rule, arm_rate=services.arm_of(study).hourly_rate())
            if do == "demographics" and demographics_form.is_valid():
                done = demographics_import(study=study, stream=demographics_form.cleaned_data["export"])
                messages.success(request, f"Imported {', '.join(done.columns)} for {done.joined} participants; "
                                          f"{done.skipped} rows of others skipped; columns not in the consent text "
                                          f"dropped: {', '.join(done.dropped_columns) or 'none'}.")
                return redirect(request.path)
        except (ProlificError, services.ProlificRefused, DemographicsRefused) as exc:
            messages.error(request, str(exc))
    checklist_green = not services.publish_problems(study=study, reward_cents=10**6, minutes=1, places=1)
    context = {
        **admin.site.each_context(request), "title": f"Prolific: {study.slug}", "study": study, "link": link,
        "publish_form": publish_form, "bonus_form": bonus_form, "checklist_green": checklist_green,
        "blocked": _blocked(), "study_url": _study_url(study),
        "rows": services.sync_rows(study=study) if link else [], "review": review,
        "bonus": bonus, "bonus_rule": _bonus_rule(study, link), "currency": services.arm_of(study).currency,
        "bonus_total": sum(line.amount_cents for line in bonus[0]) / 100 if bonus else 0,
        "bonus_to_pay": bonuses.to_pay_cents(bonus[0]) / 100 if bonus else 0,
        "bonus_each": bonus.rule.each_cents / 100 if bonus else 0,
        "bonus_payable": sum(1 for line in bonus.lines if line.state in bonuses.PAYABLE) if bonus else 0,
        "may_pay": request.user.has_perm("prolific.pay_bonus"),
        "ledger": Bonus.objects.filter(study=study).order_by("pk") if link else [],
        "calls": ApiCall.objects.filter(study=study)[:50], "demographics_form": demographics_form,
        "demographics": _demographics(study),
    }
    return TemplateResponse(request, "admin/prolific/study.html", context)


def _bonus_rule(study, link: ProlificStudy | None) -> str:
    """Which rule the study's bonuses follow, said when the page opens: the one fixed at the first payment, else
    the study's setting with the arm's wage (what a payment with the wage left empty would fix)."""
    if link is None or not link.prolific_id:
        return ""
    try:
        return bonuses.bonus_rule(study=study).described
    except services.ProlificRefused as exc:
        return str(exc)


def _publish_initial(study, link: ProlificStudy | None) -> dict:
    """What the publish form starts from: a row not yet sent keeps what was typed last; else the launch panel's
    suggestions (experiments/participation/launch.py)."""
    if link is not None:
        return initial_from(link)
    suggested = suggestion(study)
    return {"reward": suggested.reward_cents, "places": suggested.places, "minutes": suggested.minutes,
            "name": study.participant_title}


def _blocked() -> list[str]:
    """What stops a publish before anything is sent, said when the page opens (not only after Publish)."""
    return [why for why in (origin_problem(public_origin()), "" if token_set() else NO_TOKEN) if why]


def _study_url(study) -> str:
    """The link Prolific gets: the public origin and the study link (launch panel), or '' without an origin."""
    origin = public_origin()
    return origin + study_link(study, services.arm_of(study)) if origin else ""


def _demographics(study) -> dict:
    rows = Demographics.objects.filter(participant__study=study)
    columns = sorted({c for values in rows.values_list("values", flat=True) for c in values})
    return {"participants": rows.count(), "codebook": demographics_codebook(tuple(columns))}
