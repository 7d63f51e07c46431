"""The questionnaire answers as data (issue 47 item 2): one row per participant, keyed by the pseudonymous
label the analysis uses (P<id>), one column per question named by its key — the shape analysts expect of a
survey (Gorilla's and Qualtrics' "wide" export), beside data/trials.csv. A blank cell: no answer (an
optional question skipped, or a page the participant never reached).

The same rows feed the admin's CSV (questionnaire_csv_response) and the report's data/questionnaire.csv
(analysis/services.py); `codebook` describes each column: its kind, its allowed values (the choices or the
scale), whether it was required, and the question's wording."""
from __future__ import annotations

import csv
from collections.abc import Iterable

from django.db.models import Exists, OuterRef, Q
from django.http import StreamingHttpResponse

from logic import questions as rules
from common import csvsafe

from ..models import Participant, Question, QuestionnaireAnswer, Study, audience_q
from ..schema import pseudonym

PARTICIPANT = "participant"
DATA_FILE = "questionnaire"  # the report folder's data/questionnaire.csv (and .parquet)


def questions_of(study: Study) -> list[Question]:
    """The study's questions that can hold data: those of a questionnaire shown to participants and any with
    answers, in page order (the questionnaires before the items first)."""
    answered = QuestionnaireAnswer.objects.filter(question=OuterRef("pk"))
    rows = (Question.objects.filter(questionnaire__arm__study=study)
            .filter(Q(questionnaire__enabled=True) | Exists(answered)).select_related("questionnaire"))
    order = {"before": 0, "after": 1}
    return sorted(rows, key=lambda q: (order.get(q.questionnaire.placement, 2), q.questionnaire.position,
                                       q.questionnaire_id, q.position, q.pk))


def rows(study: Study, *, participant_ids: Iterable[int] | None = None, include_preview: bool = False,
         include_simulated: bool = False, prolific_ids: bool = False) -> tuple[list[str], list[list]]:
    """(header, rows): every participant of the audience asked for with at least one answer (`participant_ids`:
    only those), a column per question (questions_of); values as stored (text; a scale step or a number as
    its text)."""
    questions = questions_of(study)
    answers = QuestionnaireAnswer.objects.filter(
        audience_q("participant__", include_preview=include_preview, include_simulated=include_simulated),
        participant__study=study, question__in=questions)
    if participant_ids is not None:
        answers = answers.filter(participant_id__in=list(participant_ids))
    by_person: dict[int, dict[int, str]] = {}
    for person, question, value in answers.order_by("participant_id").values_list("participant_id", "question_id",
                                                                                   "value").iterator(chunk_size=2000):
        by_person.setdefault(person, {})[question] = value
    names = {}
    if prolific_ids:
        names = dict(Participant.objects.filter(pk__in=list(by_person)).values_list("pk", "prolific_pid"))
    header = [PARTICIPANT, *(q.key for q in questions)]
    table = [[names.get(person, pseudonym(person)) if prolific_ids else pseudonym(person),
              *(given.get(q.pk, "") for q in questions)] for person, given in by_person.items()]
    return header, table


def column_type(question: Question) -> str:
    if question.kind == rules.LIKERT or (question.kind == rules.NUMBER and question.whole_number):
        return "integer"
    return "number" if question.kind == rules.NUMBER else "string"


def describe(question: Question) -> str:
    """The codebook's description of a question's column: where it was asked, its kind, and its wording."""
    where = question.questionnaire.get_placement_display().split(" (")[0]
    scale = ""
    if question.kind == rules.LIKERT:
        low, high = question.rule().scale()[0], question.rule().scale()[-1]
        scale = (f"; {low} = {question.scale_low_label or 'lowest'}, {high} = {question.scale_high_label or 'highest'}")
    return (f"questionnaire “{question.questionnaire.title}” ({where}), {question.get_kind_display()}, "
            f"{'required' if question.required else 'optional (blank: not answered)'}{scale}: “{question.text}”")


def codebook(questions: list[Question]) -> dict[str, tuple[str, str, str, str]]:
    """column → (type, unit, description, allowed values) for the file's columns."""
    described = {PARTICIPANT: ("string", "", "pseudonymous participant label (P + database id), as in "
                                             "data/trials.csv", "")}
    for question in questions:
        described[question.key] = (column_type(question), "", describe(question), question.rule().allowed())
    return described


class _Echo:
    def write(self, value):
        return value


def questionnaire_csv_response(*, study: Study) -> StreamingHttpResponse:
    """The study's questionnaire answers as CSV (real participants, pseudonymous labels)."""
    header, table = rows(study)
    writer = csv.writer(_Echo())

    def lines():
        yield writer.writerow(header)
        for row in table:
            yield writer.writerow(csvsafe.values(row))

    response = StreamingHttpResponse(lines(), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{study.slug}-questionnaire.csv"'
    return response


def frame(study: Study, *, participant_ids: Iterable[int] | None = None, include_simulated: bool = False):
    """The report's data/questionnaire table (pandas; integer columns as Int64, numbers as floats) and its
    codebook entries; None when the study holds no answers."""
    import pandas as pd

    questions = questions_of(study)
    header, table = rows(study, participant_ids=participant_ids, include_simulated=include_simulated,
                         include_preview=True)
    if not table or not questions:
        return None
    data = pd.DataFrame(table, columns=header)
    for question in questions:
        kind = column_type(question)
        if kind != "string":
            values = pd.to_numeric(data[question.key].replace("", None), errors="coerce")
            data[question.key] = values.astype("Int64") if kind == "integer" else values.astype(float)
    return data, codebook(questions)
