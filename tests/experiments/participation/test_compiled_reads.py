"""The entry's reads compiled once (experiments/participation/compiled.py) give what their querysets give,
on SQLite and on PostgreSQL (there through a cursor that binds on the server), whatever the values."""
from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from experiments.models import HumanArm, Participant, ParticipantStatus, StoredList, StoredLists
from experiments.participation import drawing, list_store, selectors, services
from experiments.participation.compiled import CompiledRead, field_names

from .conftest import make_open_study

pytestmark = pytest.mark.django_db


def _people(study):
    arm = services.human_arm_ensure(study=study)
    people = [services.participant_start(study=study, prolific_pid=f"pid{n:021d}", prolific_session_id=f"s{n}",
                                         arm=arm)[0] for n in range(6)]
    for person in people[:3]:  # some hold a place, on their lists
        services.participant_consent(participant=person, agree=True)
    services.participant_transition(participant=people[3], to=ParticipantStatus.RETURNED)
    return arm, people


def test_each_entry_read_gives_what_its_queryset_gives():
    study, other = make_open_study(), make_open_study()
    arm, people = _people(study)
    _people(other)  # another study's rows are never read
    header = list_store.stored_lists_current(study=study, arm=arm, build=lambda: services._every_list(study, arm))

    def same(read: CompiledRead, **values):
        compiled = sorted(read.rows(**values), key=repr)
        direct = sorted((tuple(row) for row in read.build(**values)), key=repr)
        assert compiled == direct
        return compiled

    assert same(services._PENDING, study=study.pk) and same(services._HELD_REAL, study=study.pk)
    assert same(drawing._CATCH_ITEMS, study=study.pk)
    assert same(list_store._LIST, owner=header.pk, number=1)[0][0] == StoredList.objects.get(
        owner=header, number=1).items
    (row,) = same(list_store._HEADER, study=study.pk)
    assert row[:-1] == tuple(getattr(header, name) for name in field_names(StoredLists))
    person = people[0]
    (found,) = same(services._RESUMABLE_BY_PID, study=study.pk, pid=person.prolific_pid)
    assert found == tuple(getattr(Participant.objects.get(pk=person.pk), name) for name in field_names(Participant))
    assert len(same(services._RESUMABLE, study=study.pk, pid=person.prolific_pid,
                    session=people[1].prolific_session_id)) == 2
    assert same(services._RESUMABLE, study=study.pk, pid="nobody", session="none") == []
    assert same(services._PENDING, study=10**9) == []


def test_the_study_and_its_arm_in_one_read_are_the_models_as_stored():
    study = make_open_study()
    arm = HumanArm.objects.get(study=study)
    with CaptureQueriesContext(connection) as queries:
        found_study, found_arm = selectors.study_and_arm(slug=study.slug)
    assert len(queries) == 1 and queries[0]["sql"]  # logged like Django's own queries, with its SQL
    for model, found, stored in ((type(study), found_study, study), (HumanArm, found_arm, arm)):
        stored = model.objects.get(pk=stored.pk)
        assert {n: getattr(found, n) for n in field_names(model)} == {n: getattr(stored, n) for n in field_names(model)}
    assert found_arm.study is found_study
    assert selectors.study_and_arm(slug="no-such-study") is None


def test_a_value_of_the_wrong_type_or_a_value_the_sql_does_not_take_is_refused():
    with pytest.raises(TypeError):
        services._PENDING.rows(study="1")
    with pytest.raises(TypeError):
        services._PENDING.rows(study=True)
    with pytest.raises(TypeError):
        CompiledRead(lambda study: None, study=float)
    constant = CompiledRead(lambda study: Participant.objects.filter(study=1).values_list("pk"), study=int)
    with pytest.raises(ValueError, match="does not take"):
        constant.rows(study=1)
