"""Prolific's demographic export (a CSV the researcher downloads from Prolific) joined to the study's
participants by Prolific id (issue 38 item 6).

Only the columns the consent text lists as received from Prolific are kept: a column of CODEBOOK is kept when a
sentence of the study's consent text (as participants read it) says data is received from Prolific and names
the column ("We receive from Prolific your age, sex and first language."). Everything else in the file —
and every row of someone who is not a participant of the study — is dropped. The rows hang on the
participant (prolific.models.Demographics, on_delete=CASCADE): `participant_erase` removes them.

The file is read streaming with its bounds counted as it is read (DESIGN.md habit 18): at most MAX_BYTES,
MAX_ROWS rows, MAX_CELL characters a cell.
"""
from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass

from django.db import transaction

from experiments.models import Participant, Study, audience_q

from .models import Demographics

MAX_BYTES = 20 * 1024 * 1024
MAX_ROWS = 100_000
MAX_CELL = 200
ID_COLUMN = "Participant id"

# Prolific's export columns Duet may keep: name → (type, unit, description). Also the codebook of the study's
# demographics (prolific_demographics_codebook).
CODEBOOK: dict[str, tuple[str, str, str, tuple[str, ...]]] = {
    "Age": ("integer", "years", "age in whole years, as the participant told Prolific", ("age",)),
    "Sex": ("string", "", "sex, as the participant told Prolific", ("sex",)),
    "Ethnicity simplified": ("string", "", "ethnicity (Prolific's simplified categories)", ("ethnicity",)),
    "Country of birth": ("string", "", "country of birth", ("country of birth",)),
    "Country of residence": ("string", "", "country of residence", ("country of residence",)),
    "Nationality": ("string", "", "nationality", ("nationality",)),
    "Language": ("string", "", "first language", ("first language", "language")),
    "Student status": ("string", "", "whether a student", ("student status",)),
    "Employment status": ("string", "", "employment status", ("employment status", "employment")),
}
# The consent's words for the columns (each column's last tuple): matched as whole words, case ignored.
# Other spellings of the same columns in Prolific's exports (its API reference names "First language" and
# "Current country of residence"): read as the CODEBOOK column.
ALIASES = {"First language": "Language", "Current country of residence": "Country of residence"}


class DemographicsRefused(Exception):
    pass


@dataclass(frozen=True)
class Imported:
    columns: tuple[str, ...]
    joined: int  # participants whose row was stored
    skipped: int  # rows of people who are not participants of the study
    dropped_columns: tuple[str, ...]  # in the file, not allowed by the consent text


def consented_columns(consent_text: str) -> tuple[str, ...]:
    """The CODEBOOK columns the consent text lists as received from Prolific."""
    sentences = [s for s in re.split(r"(?<=[.!?])\s+", consent_text) if re.search(r"\breceiv", s, re.I)
                 and re.search(r"\bprolific\b", s, re.I)]
    return tuple(name for name, (*_, words) in CODEBOOK.items()
                 if any(re.search(rf"\b{re.escape(w)}\b", s, re.I) for s in sentences for w in words))


def _bounded_text(stream) -> str:
    data = stream.read(MAX_BYTES + 1)
    if len(data) > MAX_BYTES:
        raise DemographicsRefused(f"The file is larger than {MAX_BYTES // (1024 * 1024)} MB.")
    try:
        return data.decode("utf-8-sig") if isinstance(data, bytes) else data
    except UnicodeDecodeError:
        raise DemographicsRefused("The file is not UTF-8 text (Prolific's export is).") from None


@transaction.atomic
def demographics_import(*, study: Study, stream) -> Imported:
    """Store the consented columns of Prolific's export for the study's participants (replacing earlier ones)."""
    from experiments.participation.services import human_arm_ensure

    allowed = consented_columns(human_arm_ensure(study=study).consent())
    if not allowed:
        raise DemographicsRefused(
            "The study's consent text lists no demographic data as received from Prolific, so none is imported. To "
            "import some, say so in the consent text (Human arm › Consent), e.g. 'We receive from Prolific your age "
            "and sex.', review the consent again, and import the file.")
    reader = csv.DictReader(io.StringIO(_bounded_text(stream), newline=""))
    if reader.fieldnames:
        reader.fieldnames = [ALIASES.get(name.strip(), name.strip()) for name in reader.fieldnames]
    header = reader.fieldnames or []
    if ID_COLUMN not in header:
        raise DemographicsRefused(f"The file has no '{ID_COLUMN}' column: is it Prolific's demographic export?")
    keep = tuple(c for c in allowed if c in header)
    by_pid = {p.prolific_pid: p for p in Participant.objects.filter(study=study).real()}
    joined = skipped = 0
    for number, row in enumerate(reader, start=2):
        if number > MAX_ROWS + 1:
            raise DemographicsRefused(f"The file has more than {MAX_ROWS} rows.")
        participant = by_pid.get((row.get(ID_COLUMN) or "").strip())
        if participant is None:
            skipped += 1
            continue
        values = {}
        for column in keep:
            cell = (row.get(column) or "").strip()
            if len(cell) > MAX_CELL:
                raise DemographicsRefused(f"Line {number}: '{column}' is longer than {MAX_CELL} characters.")
            if CODEBOOK[column][0] == "integer" and cell and not cell.isdigit():
                cell = ""  # Prolific writes DATA_EXPIRED or CONSENT_REVOKED where it has no value
            values[column] = cell
        Demographics.objects.update_or_create(participant=participant, defaults={"values": values})
        joined += 1
    dropped = tuple(c for c in header if c != ID_COLUMN and c not in keep)
    return Imported(columns=keep, joined=joined, skipped=skipped, dropped_columns=dropped)


def demographics_codebook(columns: tuple[str, ...]) -> list[dict[str, str]]:
    """Codebook rows (analysis/codebook.py's columns) for the demographic columns a study holds."""
    return [{"column": c, "type": CODEBOOK[c][0], "unit": CODEBOOK[c][1], "allowed_values": "",
             "description": CODEBOOK[c][2] + " (from Prolific's demographic export)"} for c in columns]


DATA_FILE = "demographics"  # the report folder's data/demographics.csv (and .parquet)


def demographics_frame(*, study: Study, participant_ids=None):
    """The study's demographics as a table for the report folder: one row per participant (`participant_ids`:
    those of data/trials.csv; None: every real participant with a stored row), labelled as the data files
    label them (P + id), and only the columns the consent text lists now (a column it stopped listing is
    left out, whatever was imported), in the codebook's order; with their codebook entries (column →
    (type, unit, description)). None when the study holds no such data."""
    import pandas as pd

    from experiments.participation.services import human_arm_ensure
    from experiments.schema import pseudonym

    allowed = consented_columns(human_arm_ensure(study=study).consent())
    rows = Demographics.objects.filter(audience_q("participant__"), participant__study=study)
    if participant_ids is not None:
        rows = rows.filter(participant_id__in=list(participant_ids))
    stored = list(rows.order_by("participant_id").values_list("participant_id", "values"))
    columns = [c for c in allowed if any(c in values for _, values in stored)]
    if not stored or not columns:
        return None
    frame = pd.DataFrame([{"participant": pseudonym(pk), **{c: values.get(c, "") for c in columns}}
                          for pk, values in stored], columns=["participant", *columns])
    for column in columns:
        if CODEBOOK[column][0] == "integer":
            frame[column] = pd.to_numeric(frame[column].replace("", None), errors="coerce").astype("Int64")
    described = {"participant": ("string", "", "pseudonymous participant label (P + database id), as in "
                                 "data/trials.csv")}
    described |= {row["column"]: (row["type"], row["unit"], row["description"]) for row in demographics_codebook(
        tuple(columns))}
    return frame, described
