"""A structured editor for the human arm's question lists (practice questions, attention checks),
instead of raw JSON: one block per question — its premises (one per line), the question, the answer
(yes / no, or A–D for a four-option question with its four options), the practice question's
logical form — a box to remove it, and blank blocks to add more. The list it assembles is checked
by the model field's own validators (arm.validate_practice, validate_attention_checks), whose
messages name the question by number.
"""
from __future__ import annotations

from django import forms

from .arm import MC_LETTERS

EXTRA_BLANKS = 2
FIELDS = ("premises", "question", "answer", "options", "logical_form")


class QuestionListWidget(forms.Widget):
    template_name = "admin/widgets/question_list.html"

    def __init__(self, *, with_form: bool = False, attrs=None):
        super().__init__(attrs)
        self.with_form = with_form  # practice questions carry an optional logical form

    def format_value(self, value):
        return value if isinstance(value, list) else []

    def get_context(self, name, value, attrs):
        context = super().get_context(name, value, attrs)
        entries = [e for e in self.format_value(value) if isinstance(e, dict)]
        blocks = []
        for n, entry in enumerate([*entries, *({} for _ in range(EXTRA_BLANKS))]):
            premises = entry.get("premises") or []
            options = entry.get("options") or []
            blocks.append({
                "n": n, "number": n + 1, "blank": not entry, "prefix": f"{name}-{n}",
                "premises": "\n".join(p for p in premises if isinstance(p, str)),
                "question": entry.get("question", ""), "answer": entry.get("answer", ""),
                "options": "\n".join(o for o in options if isinstance(o, str)),
                "logical_form": entry.get("logical_form", ""),
            })
        context["widget"].update(blocks=blocks, count=len(blocks), with_form=self.with_form,
                                 answers=("yes", "no", *MC_LETTERS))
        return context

    def render(self, name, value, attrs=None, renderer=None):
        """Rendered with the project's templates (Django's form renderer only sees its own widgets')."""
        from django.template.loader import render_to_string
        from django.utils.safestring import mark_safe

        return mark_safe(render_to_string(self.template_name, self.get_context(name, value, attrs)))

    def value_from_datadict(self, data, files, name):
        try:
            count = int(data.get(f"{name}-count", 0))
        except (TypeError, ValueError):
            count = 0
        entries = []
        for n in range(min(count, 500)):
            prefix = f"{name}-{n}"
            if data.get(f"{prefix}-delete"):
                continue
            text = {field: (data.get(f"{prefix}-{field}") or "").strip() for field in FIELDS}
            if not any(text.values()):
                continue  # a blank block left blank
            entry = {"premises": [line.strip() for line in text["premises"].splitlines() if line.strip()],
                     "question": text["question"], "answer": text["answer"]}
            if text["options"]:
                entry["options"] = [line.strip() for line in text["options"].splitlines() if line.strip()]
            if text["logical_form"]:
                entry["logical_form"] = text["logical_form"]
            entries.append(entry)
        return entries

    def value_omitted_from_data(self, data, files, name):
        return f"{name}-count" not in data


class QuestionListField(forms.JSONField):
    """The JSON list, edited through QuestionListWidget (the value travels as a list, not as text)."""

    def __init__(self, *, with_form: bool = False, **kwargs):
        kwargs["widget"] = QuestionListWidget(with_form=with_form)
        super().__init__(**kwargs)

    def prepare_value(self, value):
        return value

    def bound_data(self, data, initial):
        return initial if self.disabled else data

    def to_python(self, value):
        return [] if value in (None, "") else value

    def has_changed(self, initial, data):
        return (initial or []) != (data or [])
