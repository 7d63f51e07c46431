"""Participants of paired designs (issue 6): one variant, at most one member of a pair (or of a
pair's perturbed copies) per participant, members balanced across participants."""
from __future__ import annotations

from collections import Counter

import pytest
from django.core.exceptions import ValidationError
from django.core.management import call_command

from experiments import paired_services, services
from experiments.models import Item, Study, StudyStatus
from experiments.participation.services import human_arm_ensure, participant_start
from tests.factories import review_consent

pytestmark = pytest.mark.django_db


def open_paired(slug: str, *command, items_per_participant: int, **arm_settings) -> Study:
    call_command(*command)
    study = Study.objects.get(slug=slug)
    arm = human_arm_ensure(study=study)
    for name, value in {"items_per_participant": items_per_participant, "attention_checks": [],
                        "completion_code": "C0MPLETE", **arm_settings}.items():
        setattr(arm, name, value)
    arm.save()
    review_consent(study)
    services.study_transition(study=study, to=StudyStatus.OPEN)
    return study


def plans(study, n):
    return [participant_start(study=study, prolific_pid=f"pid{k:021d}", prolific_session_id=f"s{k}")[0]
            for k in range(n)]


def test_rulebreaker_lists_pair_across_participants():
    study = open_paired("rbh", "generate_items", "rulebreakers", "rbh", "--pairs", "24", items_per_participant=12)
    items = {i.pk: i for i in study.items.all()}
    people = plans(study, 8)
    assert [p.list_number for p in people] == list(range(4)) * 2
    for person in people:
        shown = [items[pk] for pk in person.plan]
        assert len(shown) == 12
        assert {i.variant for i in shown} == {"follow/yes-no"}  # the study's human variant only
        assert len({i.pair_id for i in shown}) == 12  # never both members of a pair
        assert Counter(i.pair_role for i in shown) == Counter({"rulebreaker": 6, "non-rulebreaker": 6})
    # four lists show every member of every pair exactly once; eight lists twice
    seen = Counter(pk for p in people for pk in p.plan)
    assert len(seen) == 48 and set(seen.values()) == {2}
    assert {(items[pk].pair_id, items[pk].pair_role) for pk in seen} == {
        (i.pair_id, i.pair_role) for i in items.values()}


def test_another_human_variant_and_perturbed_copies_in_the_same_family():
    study = open_paired("rbh2", "generate_items", "rulebreakers", "rbh2", "--pairs", "16", "--perturb", "names",
                        items_per_participant=8, include_nonsense=True)
    paired_services.human_variant_set(study=study, variant="entail/yes-no")
    items = {i.pk: i for i in study.items.select_related("original")}

    def family(item):
        return (item.original or item).pair_id

    people = plans(study, 8)
    for person in people:
        shown = [items[pk] for pk in person.plan]
        assert {i.variant for i in shown} == {"entail/yes-no"}
        assert len({family(i) for i in shown}) == 8  # one item of a pair and its perturbed copy
        assert Counter((i.condition, i.pair_role) for i in shown) == Counter(
            {(c, r): 2 for c in ("real", "names") for r in ("rulebreaker", "non-rulebreaker")})
    seen = Counter(pk for p in people for pk in p.plan)
    assert len(seen) == 64 and set(seen.values()) == {1}  # 16 pairs × 4 members, each once over 8 lists
    with pytest.raises(ValidationError, match="not one of the study's prompt variants"):
        paired_services.human_variant_set(study=study, variant="nope")
    with pytest.raises(ValidationError, match="asks for True/False, but participants answer with the Yes/No keys"):
        paired_services.human_variant_set(study=study, variant="entail/true-false")
    study.refresh_from_db()
    assert study.settings["human_variant"] == "entail/yes-no"


def test_dual_sided_lists(tmp_path):
    bank = tmp_path / "bank.csv"
    bank.write_text("premise,conclusion,flipped_conclusion\n" + "".join(
        f"Thing {k} is heated,Thing {k} expands,Thing {k} does not expand\n" for k in range(10)))
    study = open_paired("dsh", "import_items", "dual-sided", str(bank), "dsh", items_per_participant=10)
    people = plans(study, 2)
    items = {i.pk: i for i in Item.objects.filter(study=study)}
    for person in people:
        assert {items[pk].variant for pk in person.plan} == {"template-3"}
        assert len({items[pk].pair_id for pk in person.plan}) == 10
    assert set(people[0].plan).isdisjoint(people[1].plan)
