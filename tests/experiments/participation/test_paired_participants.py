"""Participants of paired designs (issue 6): one variant, at most one member of a pair (or of a
pair's perturbed copies) per participant, members balanced across participants."""
from __future__ import annotations

from collections import Counter

import pytest
from django.core.exceptions import ValidationError
from django.core.management import call_command

from experiments import services
from experiments.items import pairs as paired_items
from experiments.models import Item, Study, StudyStatus
from experiments.models.human_arm import default_attention_checks
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
    """n participants who arrive and agree (only consented participants count for the lists' balance)."""
    from experiments.participation.services import participant_consent

    return [participant_consent(participant=participant_start(study=study, prolific_pid=f"pid{k:021d}",
                                                              prolific_session_id=f"s{k}")[0], agree=True)
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
    paired_items.human_variant_set(study=study, variant="entail/yes-no")
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
        paired_items.human_variant_set(study=study, variant="nope")
    with pytest.raises(ValidationError, match="asks for True/False, but participants answer with the Yes/No keys"):
        paired_items.human_variant_set(study=study, variant="entail/true-false")
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


def test_within_participant_presentation_shows_both_members_spaced_in_counterbalanced_order():
    study = open_paired("rbw", "generate_items", "rulebreakers", "rbw", "--pairs", "24", items_per_participant=12,
                        paired_presentation="within", paired_min_gap=4,
                        attention_checks=default_attention_checks())
    items = {i.pk: i for i in study.items.all()}
    people = plans(study, 2)  # the two lists of the first block: the same pairs, members in the other order
    items = {i.pk: i for i in study.items.all()}  # the catch items too, created at the first start
    firsts = []
    for person in people:
        real = [pk for pk in person.plan if items[pk].design != "attention-check"]
        assert len(real) == 12
        by_pair: dict[str, list[int]] = {}
        for position, pk in enumerate(person.plan):
            if items[pk].pair_id:
                by_pair.setdefault(items[pk].pair_id, []).append(position)
        assert len(by_pair) == 6 and all(len(at) == 2 and at[1] - at[0] >= 4 for at in by_pair.values())
        firsts.append({pair: items[person.plan[at[0]]].pair_role for pair, at in by_pair.items()})
        assert Counter(firsts[-1].values()) == {"rulebreaker": 3, "non-rulebreaker": 3}
    assert firsts[0].keys() == firsts[1].keys()
    assert all(firsts[0][pair] != firsts[1][pair] for pair in firsts[0])


def test_a_study_whose_within_participant_lists_cannot_be_drawn_does_not_open():
    call_command("generate_items", "rulebreakers", "rbp", "--pairs", "24")
    study = Study.objects.get(slug="rbp")
    arm = human_arm_ensure(study=study)
    arm.items_per_participant, arm.paired_presentation, arm.completion_code = 13, "within", "C0MPLETE"
    arm.save()
    review_consent(study)
    with pytest.raises(ValidationError, match=r"lists cannot be drawn: Items per participant \(13\) must be even"):
        services.study_transition(study=study, to=StudyStatus.OPEN)
