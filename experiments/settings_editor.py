"""The study's settings as form fields (issue 18 item 3), instead of a raw JSON box.

`study.settings` holds what a researcher chooses for the analysis and for some designs:
- "analysis_exclusions": which human data the report leaves out (experiments/report_rules.py: Exclusions);
- "multiple_choice": the four-option keys and whether a list holds every circular mutant (seed 001);
- "paired_report": the paired sections' test options (seeds 000 and 002, experiments/report_rules.py);
- "human_variant": the prompt variant participants see in a paired design;
- "factors": the columns the study's items vary by, for Table 1 and the humans-vs-models model
  (experiments/factors.py; empty: the designs' own);
- "participant_factors": questionnaire questions (by key) the report splits people by (experiments/factors.py);
and what generation records ("lexicon", "paired_designs"), shown read-only and kept as it is.

Each field is checked by the same code that reads the setting later (Exclusions, mc_settings,
paired_report_options, human_variant_problem), so the form cannot store what a report or a
participant page would refuse. A group is written out in full once it differs from its defaults (or
was stored before), so a stored study says exactly what it used. What participants see (the keys, all
mutants, the human variant) is fixed once the study has responses.
"""
from __future__ import annotations

import dataclasses
from types import SimpleNamespace

from django import forms
from django.core.exceptions import ValidationError

from common.structured import structured_html

from .items.pairs import human_variant_problem
from .factors import (
    PARTICIPANT_SETTING, attribute_keys, check_participant, declared_factors, question_kinds, validate,
)
from .participation.arm import mc_settings
from .participation.item_summary import item_summary
from .report_rules import ALTERNATIVES, RT_LOG_SD_MIN, Exclusions, exclusion_settings, paired_report_options

EXCLUSIONS = "analysis_exclusions"
MULTIPLE_CHOICE = "multiple_choice"
PAIRED_REPORT = "paired_report"
HUMAN_VARIANT = "human_variant"
FACTORS = "factors"
EDITED = (EXCLUSIONS, MULTIPLE_CHOICE, PAIRED_REPORT, HUMAN_VARIANT, FACTORS, PARTICIPANT_SETTING)

# form field → (settings group, key in the group)
_EXCLUSION_FIELDS = {
    "exclude_preview": "drop_preview",
    "exclude_failed_attention": "drop_failed_attention",
    "exclude_incomplete": "completed_only",
    "exclude_rt_min_ms": "rt_min_ms",
    "exclude_rt_log_sd": "rt_log_sd",
}
_MC_FIELDS = {"mc_keys": "keys", "mc_all_mutants": "all_mutants"}
_PAIRED_FIELDS = {"paired_alternative": "alternative", "paired_alpha": "alpha", "paired_exact_max": "exact_max",
                  "paired_drop_unknown_pairs": "drop_unknown_pairs"}
FIXED_ONCE_ANSWERED = ("mc_keys", "mc_all_mutants", "human_variant")

FIELDSETS = (
    ("Analysis: the factors the items vary by", {"fields": ("factors", "participant_factors")}),
    ("Analysis: which human data the report leaves out", {"fields": tuple(_EXCLUSION_FIELDS)}),
    ("Four-option trials (multiple-choice design, seed 001)", {"classes": ("collapse",), "fields": tuple(_MC_FIELDS)}),
    ("Paired designs (seeds 000 and 002)", {"classes": ("collapse",),
                                             "fields": ("human_variant", *_PAIRED_FIELDS)}),
)


def _exclusion_defaults() -> dict:
    return exclusion_settings({})


def _mid_sentence(error: Exception) -> str:
    """A reader's message inside the editor's own sentence."""
    text = str(error)
    return text[:1].lower() + text[1:]


def _stored(settings: dict) -> tuple[dict, list[str]]:
    """Each edited group as stored (defaults where absent or unreadable) and what could not be read."""
    values, problems = {}, []
    try:
        exclusions = exclusion_settings(settings)
        Exclusions(**exclusions)
    except (TypeError, ValueError) as error:
        problems.append(f"stored {EXCLUSIONS} could not be read ({_mid_sentence(error)}); the defaults are shown")
        exclusions = _exclusion_defaults()
    values.update({name: exclusions[key] for name, key in _EXCLUSION_FIELDS.items()})
    try:
        mc = dataclasses.asdict(mc_settings(SimpleNamespace(settings=settings)))
    except ValidationError as error:
        problems.append(f"stored {MULTIPLE_CHOICE} could not be read ({'; '.join(error.messages)}); defaults shown")
        mc = dataclasses.asdict(mc_settings(SimpleNamespace(settings={})))
    values.update({name: mc[key] for name, key in _MC_FIELDS.items()})
    try:
        paired = paired_report_options(settings)
    except ValueError as error:
        problems.append(f"stored {PAIRED_REPORT} could not be read ({error}); the defaults are shown")
        paired = paired_report_options({})
    values.update({name: paired[key] for name, key in _PAIRED_FIELDS.items()})
    values["human_variant"] = settings.get(HUMAN_VARIANT) or ""
    stored = settings.get(FACTORS)
    values["factors"] = " ".join(stored) if isinstance(stored, list) else str(stored or "")
    people = settings.get(PARTICIPANT_SETTING)
    values["participant_factors"] = " ".join(people) if isinstance(people, list) else str(people or "")
    return values, problems


class StudySettingsFields(forms.Form):
    """Declared fields mixed into the study's admin form; the form calls `settings_initial` in its
    __init__ and `settings_clean` in its clean."""

    factors = forms.CharField(
        required=False, label="Factors",
        help_text="Column names separated by spaces: item fields (modality, argument_form, condition, form_id, "
                  "pair_role, variant) or a CSV bank's descriptive columns. Table 1 and the humans-vs-models model "
                  "are by these. Empty: the designs' own (003: modality and argument form).")
    participant_factors = forms.CharField(
        required=False, label="Participant factors (questionnaire)",
        help_text="Keys of multiple-choice or Likert questions of the study's questionnaires, separated by spaces "
                  "(e.g. aid_use age_band): the report shows people's accuracy by each answer and fits a model by it. "
                  "Empty: none.")
    exclude_preview = forms.BooleanField(required=False, label="Leave out preview sessions",
                                         help_text="Researchers' previews of the participant pages are never data.")
    exclude_failed_attention = forms.BooleanField(
        required=False, label="Leave out participants who failed the attention checks",
        help_text="The failure rule itself is the human arm's (below: attention rule).")
    exclude_incomplete = forms.BooleanField(required=False, label="Leave out sessions that were not completed",
                                            help_text="Returned, timed-out or abandoned sessions' answers.")
    exclude_rt_min_ms = forms.FloatField(
        required=False, min_value=0, label="Leave out trials faster than (ms)",
        help_text="Empty: no floor. Default 200 ms.")
    exclude_rt_log_sd = forms.FloatField(
        required=False, min_value=RT_LOG_SD_MIN,
        label="Leave out trials this many SD from the participant's mean log RT",
        help_text=f"Empty: no cut. Default 3; at least {RT_LOG_SD_MIN:g} (a cut nearer the mean could leave out every "
                  "answer of a participant).")
    mc_keys = forms.ChoiceField(
        choices=(("dfjk", "D F J K"), ("1234", "1 2 3 4")), label="Keys for options A–D",
        help_text="Left to right; physical keys, so every keyboard layout answers the same way.")
    mc_all_mutants = forms.BooleanField(
        required=False, label="Every circular mutant of each question in one list",
        help_text="Off: a participant sees one mutant per question.")
    human_variant = forms.ChoiceField(
        required=False, label="Prompt variant participants see",
        help_text="One of the study's generated Yes/No phrasings (the models answer every variant).")
    paired_alternative = forms.ChoiceField(
        label="Alternative of the matched-pair test",
        help_text="n12>n21: more pairs right only in the original than only in the perturbed version (002).")
    paired_alpha = forms.FloatField(min_value=0.0001, max_value=0.5, label="Benjamini–Hochberg level across models",
                                    help_text="The false-discovery rate the tests of several models are held to.")
    paired_exact_max = forms.IntegerField(
        min_value=0, label="Exact binomial test up to this many discordant pairs",
        help_text="McNemar's z test above.")
    paired_drop_unknown_pairs = forms.BooleanField(
        required=False, label="Leave out pairs about facts a model does not know (000 §4.1)",
        help_text="Read from the study's knowledge-probe runs; without one, every pair stays in.")

    def settings_initial(self, study) -> None:
        self.fields["paired_alternative"].choices = [(a, a) for a in ALTERNATIVES]
        summary = item_summary(study=study) if study.pk else None  # kept figures, not a scan of the items
        variants = list(summary.variants) if summary else []
        field = self.fields["human_variant"]
        field.choices = [("", "— none (not a paired design) —" if not variants else "— choose —"),
                         *[(v, v) for v in variants]]
        if not variants:
            field.disabled = True
        if study.pk:
            try:
                now = ", ".join(declared_factors(study, designs=summary.designs)) or "none (Table 1 overall)"
            except ValueError as error:
                now = f"unreadable ({error})"
            self.fields["factors"].help_text += f" The report now reads: {now}."
        values, self.settings_problems = _stored(study.settings or {})
        for name, value in values.items():
            self.initial.setdefault(name, value)
        if study.pk and study.has_responses():
            for name in FIXED_ONCE_ANSWERED:
                self.fields[name].disabled = True
                self.fields[name].help_text += " Fixed: the study has responses."

    def settings_clean(self, study, cleaned: dict) -> dict | None:
        """The study's new settings from the cleaned fields (None when a field has an error, added to it)."""
        if any(name in self.errors for name in self.settings_field_names()):
            return None
        old = dict(study.settings or {})
        new = {k: v for k, v in old.items() if k not in EDITED}
        groups = {
            EXCLUSIONS: ({key: cleaned.get(name) for name, key in _EXCLUSION_FIELDS.items()}, _exclusion_defaults()),
            MULTIPLE_CHOICE: ({key: cleaned.get(name) for name, key in _MC_FIELDS.items()},
                              dataclasses.asdict(mc_settings(SimpleNamespace(settings={})))),
            PAIRED_REPORT: ({key: cleaned.get(name) for name, key in _PAIRED_FIELDS.items()}, paired_report_options({})),
        }
        for group, (value, defaults) in groups.items():
            if value != defaults or group in old:
                new[group] = value
        variant = cleaned.get("human_variant") or ""
        if variant:
            problem = human_variant_problem(study=study, variant=variant) if study.pk else "save the study first"
            if problem:
                self.add_error("human_variant", problem)
                return None
            new[HUMAN_VARIANT] = variant
        elif HUMAN_VARIANT in old:
            new[HUMAN_VARIANT] = old[HUMAN_VARIANT]  # a disabled field (no variants left) keeps what was chosen
        if (cleaned.get("factors") or "").strip():
            try:
                new[FACTORS] = validate(study, cleaned["factors"]) if study.pk else None
            except ValueError as error:
                self.add_error("factors", str(error))
                return None
            if new[FACTORS] is None:
                self.add_error("factors", "Save the study (and give it items) before naming its factors.")
                return None
        if (cleaned.get("participant_factors") or "").strip():
            try:
                new[PARTICIPANT_SETTING] = check_participant(cleaned["participant_factors"],
                                                             question_kinds(study) if study.pk else {},
                                                             attribute_keys(study) if study.pk else set())
            except ValueError as error:
                self.add_error("participant_factors", str(error))
                return None
        # the readers themselves, once more: nothing is stored that a report or a page would refuse
        try:
            Exclusions(**new.get(EXCLUSIONS, {}))
            paired_report_options(new)
            mc_settings(SimpleNamespace(settings=new))
        except (TypeError, ValueError, ValidationError) as error:
            self.add_error(None, f"These settings would be refused later: {error}")
            return None
        return new

    @classmethod
    def settings_field_names(cls) -> tuple[str, ...]:
        return tuple(cls.declared_fields)


def stored_settings_html(study) -> str:
    """The settings as stored, with what generation recorded, for the study page: tables, not JSON."""
    return structured_html(dict(sorted((study.settings or {}).items())))
