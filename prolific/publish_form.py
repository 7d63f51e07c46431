"""The Prolific page's publish form (prolific/admin_views.py): the reward, places and time, and who may take the
study (issue 47 item 4) — friendly fields for the common filters, the devices, the earlier studies whose
participants are kept out, and free `ID=VALUE` lines for any other filter by its Prolific id. The form checks the
syntax; Prolific's list checks the rest when Publish is pressed (prolific/eligibility.py). A refused publish shows
the form as typed; a stored try's filters come back into the same fields."""
from __future__ import annotations

from django import forms

from . import rules
from .filters import COMMON, DEVICES, PREVIOUS_STUDIES, FilterSyntax, Wanted, parse, parse_lines, values_of
from .models import ProlificStudy

SELECTS = [c for c in COMMON if c.kind == "select"]
RANGES = [c for c in COMMON if c.kind == "range"]
BOUNDS = {"approval_rate": (0, 100), "submissions": (0, rules.MAX_CENTS)}


class PublishForm(forms.Form):
    reward = forms.IntegerField(min_value=1, max_value=rules.MAX_CENTS, label="Reward (cents)")
    places = forms.IntegerField(min_value=1, max_value=rules.MAX_CENTS)
    minutes = forms.IntegerField(min_value=1, max_value=rules.MAX_CENTS, label="Estimated time (minutes)")
    name = forms.CharField(required=False, max_length=120, label="Name on Prolific")
    description = forms.CharField(required=False, max_length=2000, widget=forms.Textarea(attrs={"rows": 3}))
    devices = forms.MultipleChoiceField(
        choices=[(d, d) for d in DEVICES], initial=["desktop"], widget=forms.CheckboxSelectMultiple, required=False,
        label="Devices", help_text="Prolific's device compatibility: the devices participants may take it on (the "
        "study's own answering must work on them: a study answered by keys, as 003's protocol, is refused on a tablet or "
        "a phone; those need the human arm's answer input “keys, clicks or taps”). None ticked: desktop.")
    not_in = forms.CharField(
        required=False, max_length=20_000, label="Not in these earlier studies",
        help_text="Duet studies (their slugs) or Prolific study ids, comma-separated: their participants cannot take "
        "this one (Prolific's previous_studies_blocklist).")
    other_filters = forms.CharField(
        required=False, max_length=100_000, widget=forms.Textarea(attrs={"rows": 3}), label="Other filters",
        help_text="Any Prolific filter by its id, one a line: ID=VALUE[,VALUE] (choice ids or labels) or "
        "ID=LOW..HIGH (e.g. handedness=Left-handed, age=18..40).")
    create_again = forms.BooleanField(required=False, label="Create again", help_text="Only when Duet says so, "
                                      "after checking in Prolific's web app that an earlier creation made no study.")

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        order = list(self.fields)
        for c in SELECTS:
            self.fields[c.name] = forms.CharField(
                required=False, max_length=5000, label=c.label,
                help_text=f"Prolific's {c.filter_id}: labels or choice ids as Prolific lists them, comma-separated.")
        for c in RANGES:
            low, high = BOUNDS[c.name]
            for end in ("min", "max"):
                self.fields[f"{c.name}_{end}"] = forms.IntegerField(
                    required=False, min_value=low, max_value=high,
                    label=f"{c.label}: {'at least' if end == 'min' else 'at most'}",
                    help_text=f"Prolific's {c.filter_id} (empty: no bound)." if end == "max" else "")
        friendly = [c.name for c in SELECTS] + [f"{c.name}_{end}" for c in RANGES for end in ("min", "max")]
        at = order.index("devices") + 1
        self.order_fields(order[:at] + friendly + order[at:])

    def clean(self):
        data = super().clean()
        wanted: list[Wanted] = []
        for c in SELECTS:
            text = (data.get(c.name) or "").strip()
            if text:
                try:
                    wanted.append(values_of(c.filter_id, text))
                except FilterSyntax as exc:
                    self.add_error(c.name, str(exc))
        for c in RANGES:
            low, high = data.get(f"{c.name}_min"), data.get(f"{c.name}_max")
            if low is not None and high is not None and low > high:
                self.add_error(f"{c.name}_max", "At most is below at least.")
            elif low is not None or high is not None:
                wanted.append(Wanted(c.filter_id, lower=None if low is None else str(low),
                                     upper=None if high is None else str(high), is_range=True))
        for name, read in (("not_in", lambda t: [values_of(PREVIOUS_STUDIES, t)]), ("other_filters", parse_lines)):
            text = (data.get(name) or "").strip()
            if text:
                try:
                    wanted += read(text)
                except FilterSyntax as exc:
                    self.add_error(name, str(exc))
        data["wanted"] = wanted
        data["devices"] = data.get("devices") or ["desktop"]
        return data


def initial_from(link: ProlificStudy) -> dict:
    """The form's fields from a stored try: its values, devices and filters, each in the field it came from."""
    initial = {"reward": link.reward_cents, "places": link.places, "minutes": link.minutes,
               "devices": list(link.devices or ["desktop"])}
    by_id = {c.filter_id: c for c in COMMON}
    other = []
    for typed in link.filters_typed():
        filter_id, _, text = typed.partition("=")
        common = by_id.get(filter_id)
        if filter_id == PREVIOUS_STUDIES and ".." not in text:  # (values: never re-read as a range)
            initial["not_in"] = ", ".join(v.strip() for v in text.split(","))
        elif common is not None and common.kind == "select" and ".." not in text:
            initial[common.name] = ", ".join(v.strip() for v in text.split(","))
        elif common is not None and common.kind == "range":
            try:
                w = parse(typed)
            except FilterSyntax:
                continue
            initial[f"{common.name}_min"], initial[f"{common.name}_max"] = w.lower, w.upper
        else:
            other.append(typed)
    if other:
        initial["other_filters"] = "\n".join(other)
    return initial
