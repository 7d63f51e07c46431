"""Prolific's demographic export (issue 38 item 6): joined by participant id, only the columns the consent text
lists as received from Prolific, deleted with the participant."""
from __future__ import annotations

import io

import pytest
from django.contrib.auth import get_user_model

from experiments.participation.erasure import participant_erase
from experiments.participation.services import human_arm_ensure
from prolific.demographics import DemographicsRefused, consented_columns, demographics_codebook, demographics_import
from prolific.models import Demographics
from tests.factories import ParticipantFactory, StudyFactory

pytestmark = pytest.mark.django_db

# The header of Prolific's demographic export (a subset of its columns, in its spelling), two rows of ours, one not.
EXPORT = (
    "Submission id,Participant id,Status,Time taken,Age,Sex,Ethnicity simplified,Country of residence,Language,"
    "Student status\n"
    "s1,pidA,APPROVED,600,34,Female,White,United Kingdom,English,No\n"
    "s2,pidB,APPROVED,700,DATA_EXPIRED,Male,Mixed,Canada,French,Yes\n"
    "s3,pidZ,APPROVED,650,51,Male,Black,United States,English,No\n"
)


def test_only_the_columns_the_consent_text_lists_as_received_are_kept():
    assert consented_columns("We receive from Prolific your age, sex and first language.") == ("Age", "Sex",
                                                                                              "Language")
    # 'age' inside 'page' is not a column; a sentence that does not say data is received lists nothing
    assert consented_columns("We receive from Prolific nothing but this page's answers.") == ()
    assert consented_columns("The researchers can see, on Prolific, your age and sex.") == ()


def test_the_export_is_joined_by_participant_id_and_erased_with_the_participant():
    study = StudyFactory()
    a = ParticipantFactory(study=study, prolific_pid="pidA")
    b = ParticipantFactory(study=study, prolific_pid="pidB")
    with pytest.raises(DemographicsRefused, match="lists no demographic data as received from Prolific"):
        demographics_import(study=study, stream=io.BytesIO(EXPORT.encode()))  # the default consent text
    assert not Demographics.objects.exists()
    arm = human_arm_ensure(study=study)
    arm.consent_text = "Taking part is voluntary. We receive from Prolific your age and sex, nothing else."
    arm.save()
    done = demographics_import(study=study, stream=io.BytesIO(EXPORT.encode()))
    assert done.columns == ("Age", "Sex") and done.joined == 2 and done.skipped == 1
    assert "Ethnicity simplified" in done.dropped_columns and "Language" in done.dropped_columns
    assert Demographics.objects.get(participant=a).values == {"Age": "34", "Sex": "Female"}
    assert Demographics.objects.get(participant=b).values == {"Age": "", "Sex": "Male"}  # DATA_EXPIRED: no value
    assert [r["column"] for r in demographics_codebook(done.columns)] == ["Age", "Sex"]
    participant_erase(participant=a, by=get_user_model().objects.create_superuser("r", password="x-" * 8))
    assert list(Demographics.objects.values_list("participant__prolific_pid", flat=True)) == ["pidB"]


def test_a_file_that_is_not_prolifics_export_changes_nothing():
    study = StudyFactory()
    ParticipantFactory(study=study, prolific_pid="pidA")
    arm = human_arm_ensure(study=study)
    arm.consent_text = "We receive from Prolific your age."
    arm.save()
    with pytest.raises(DemographicsRefused, match="no 'Participant id' column"):
        demographics_import(study=study, stream=io.BytesIO(b"id,age\npidA,3\n"))
    other_spelling = b"Participant id,First language,Age\npidA,Welsh,40\n"
    assert demographics_import(study=study, stream=io.BytesIO(other_spelling)).columns == ("Age",)
    arm.consent_text = "We receive from Prolific your first language."
    arm.save()
    assert demographics_import(study=study, stream=io.BytesIO(other_spelling)).columns == ("Language",)
    Demographics.objects.all().delete()
    with pytest.raises(DemographicsRefused, match="not UTF-8"):
        demographics_import(study=study, stream=io.BytesIO(b"\xff\xfe\x00bad"))
    assert not Demographics.objects.exists()


def test_the_report_folders_demographics_hold_only_what_the_consent_text_lists_now(tmp_path):
    """demographics_frame (the report folder's data/demographics.csv): participants labelled as in the data
    files, the consented columns in the codebook's order, integers as integers; a column the consent text
    stopped listing is left out; and the codebook describes every column of the file written."""
    from analysis import codebook
    from experiments.schema import pseudonym
    from prolific.demographics import demographics_frame

    study = StudyFactory()
    a = ParticipantFactory(study=study, prolific_pid="pidA")
    b = ParticipantFactory(study=study, prolific_pid="pidB")
    assert demographics_frame(study=study) is None  # nothing imported
    arm = human_arm_ensure(study=study)
    arm.consent_text = "We receive from Prolific your sex, age and first language."
    arm.save()
    demographics_import(study=study, stream=io.BytesIO(EXPORT.encode()))
    frame, described = demographics_frame(study=study)
    assert list(frame.columns) == ["participant", "Age", "Sex", "Language"]
    assert list(frame["participant"]) == [pseudonym(a.pk), pseudonym(b.pk)]
    assert str(frame["Age"].dtype) == "Int64" and frame["Age"].iloc[0] == 34 and frame["Age"].isna().iloc[1]
    assert described["Age"] == ("integer", "years", "age in whole years, as the participant told Prolific "
                                "(from Prolific's demographic export)")
    only_b, _ = demographics_frame(study=study, participant_ids=[b.pk])
    assert list(only_b["participant"]) == [pseudonym(b.pk)]
    arm.consent_text = "We receive from Prolific your sex."  # narrowed after the import
    arm.save()
    frame, described = demographics_frame(study=study)
    assert list(frame.columns) == ["participant", "Sex"] and set(described) == {"participant", "Sex"}
    (tmp_path / "data").mkdir()
    frame.to_csv(tmp_path / "data" / "demographics.csv", index=False)
    book = codebook.write_codebook(tmp_path, described={"data/demographics.csv": described})
    rows = book[book["file"] == "data/demographics.csv"].set_index("column")
    assert list(rows.index) == ["participant", "Sex"] and rows.loc["Sex", "description"].endswith("export)")
