"""A pilot with a built-in effect (issue 47 item 5): simulated participants take an accuracy, and a response-time
shift, per level of a declared factor, from the command (--accuracy-by FACTOR=LEVEL:ACCURACY, --rt-shift-by
FACTOR=LEVEL:MS, repeatable) and the admin's pilot form, both read by one parser; bad input is refused with a
message and nothing is created."""
from __future__ import annotations

import pytest
from django.core.management import CommandError, call_command

from experiments.models import Participant, Study, Trial
from experiments.participation import pilot_effects
from experiments.participation.pilot import BotProfile, Pilot, pilot_create

pytestmark = pytest.mark.django_db


def rulebreakers_study(slug: str = "rb-pilot", pairs: int = 24) -> Study:
    call_command("generate_items", "rulebreakers", slug, "--pairs", str(pairs), "--seed", "3")
    return Study.objects.get(slug=slug)


def answers(study) -> dict[str, list]:
    """The bots' answers to the study's items by pair role: (correct, rt_ms) per trial."""
    by_role: dict[str, list] = {}
    for role, correct, rt in Trial.objects.filter(participant__study=study).exclude(item__pair_role="").values_list(
            "item__pair_role", "correct", "rt_ms"):
        by_role.setdefault(role, []).append((correct, rt))
    return by_role


def test_the_command_builds_an_accuracy_and_a_response_time_shift_per_level_into_the_pilot(capsys):
    study = rulebreakers_study()
    call_command("simulate_participants", study.slug, "--n", "4", "--seed", "2", "--accuracy", "0.5",
                 "--accuracy-by", "pair_role=rulebreaker:0", "--accuracy-by", "pair_role=non-rulebreaker:1",
                 "--rt-shift-by", "pair_role=rulebreaker:700", "--rt-log-sd", "0", "--rt-median", "1500")
    assert "4 simulated participants, 4 completed" in capsys.readouterr().out
    by_role = answers(study)
    assert set(by_role) == {"rulebreaker", "non-rulebreaker"} and all(len(v) >= 4 for v in by_role.values())
    assert not any(correct for correct, _ in by_role["rulebreaker"])  # accuracy 0 on one level
    assert all(correct for correct, _ in by_role["non-rulebreaker"])  # 1 on the other
    assert {round(rt) for _, rt in by_role["rulebreaker"]} == {2200}  # 1500 + 700 ms (no spread: log-SD 0)
    assert {round(rt) for _, rt in by_role["non-rulebreaker"]} == {1500}
    pilot = Pilot.objects.get(study=study)
    assert pilot.profile["accuracy_by"] == {"pair_role": {"rulebreaker": 0.0, "non-rulebreaker": 1.0}}
    assert pilot.profile["rt_shift_by"] == {"pair_role": {"rulebreaker": 700.0}}


def test_a_level_not_named_keeps_the_overall_accuracy_and_levels_may_be_written_by_their_codes():
    study = rulebreakers_study()
    profile = BotProfile(accuracy=1.0, accuracy_by={"pair_role": {"rulebreaker": 0.0}}).for_study(study)
    items = {item.pair_role: item for item in study.items.all()}
    assert profile.accuracy_on(items["rulebreaker"]) == 0.0 and profile.accuracy_on(items["non-rulebreaker"]) == 1.0
    assert profile.rt_shift_on(items["rulebreaker"]) == 0.0
    # paper 003's argument forms by their ASCII codes, stored as the items store them
    call_command("generate_items", "modal-syllogisms", "modal-pilot", "--interpretations", "2", "--seed", "0")
    modal = Study.objects.get(slug="modal-pilot")
    checked = BotProfile(accuracy_by=pilot_effects.parse(["argform=MP:0.9", "modality=box:0.2"], "accuracy")
                         ).for_study(modal)
    assert checked.accuracy_by == {"argform": {"→ᴸ⊢": 0.9}, "modality": {"box": 0.2}}
    both = next(i for i in modal.items.all() if i.argument_form == "→ᴸ⊢" and i.modality == "box")
    assert 0.2 < checked.accuracy_on(both) < 0.9  # two factors: their logit departures from 0.8 added up
    assert pilot_effects.combined_accuracy(0.8, [0.9, 0.2]) == pytest.approx(0.36, abs=0.01)


@pytest.mark.parametrize("flags, message", [
    (["--accuracy-by", "pair_role:0.3"], "'pair_role:0.3' is not FACTOR=LEVEL:ACCURACY"),
    (["--accuracy-by", "pair_role=rulebreaker:high"], "'high' is not a number"),
    (["--accuracy-by", "pair_role=rulebreaker:1.2"], "an accuracy is a probability between 0 and 1 (got 1.2)"),
    (["--accuracy-by", "pair_role=rulebreaker:-0.1"], "between 0 and 1 (got -0.1)"),
    (["--accuracy-by", "pair_role=rulebreaker:0.3", "--accuracy-by", "pair_role=rulebreaker:0.4"], "named twice"),
    (["--accuracy-by", "modality=box:0.3"], "'modality' is not one of the study's declared factors (pair_role)"),
    (["--accuracy-by", "colour=red:0.3"], "'colour' is not one of the study's declared factors"),
    (["--accuracy-by", "pair_role=rulebreakr:0.3"],
     "pair_role has no level 'rulebreakr' among the study's items (its levels: non-rulebreaker, rulebreaker)"),
    (["--rt-shift-by", "pair_role=rulebreaker:fast"], "--rt-shift-by FACTOR=LEVEL:MS: 'pair_role=rulebreaker:fast'"),
    (["--rt-shift-by", "pair_role=rulebreaker:90000"], "at most ±30000 ms"),
    (["--rt-shift-by", "pair_role=nobody:100"], "pair_role has no level 'nobody'"),
])
def test_bad_built_in_effects_are_refused_with_a_message_and_nothing_is_created(flags, message):
    study = rulebreakers_study()
    with pytest.raises(CommandError) as refused:
        call_command("simulate_participants", study.slug, "--n", "2", *flags)
    assert message in str(refused.value)
    assert not Pilot.objects.exists() and not Participant.objects.exists()


def test_a_profile_given_by_hand_is_checked_too():
    study = rulebreakers_study()
    with pytest.raises(ValueError, match="an accuracy is between 0 and 1"):
        BotProfile(accuracy_by={"pair_role": {"rulebreaker": 2}})
    with pytest.raises(ValueError, match="'argform' is not one of the study's declared factors"):
        pilot_create(study=study, participants=2, profile=BotProfile(accuracy_by={"argform": {"MP": 0.5}}), run=False)
    assert not Pilot.objects.exists()


def test_the_admins_pilot_form_offers_the_same_effects_through_the_same_parser(admin_client, settings,
                                                                              django_capture_on_commit_callbacks):
    settings.DUET_TASK_MODE = "eager"
    study = rulebreakers_study()
    fields = {"action": "run_pilot", "_selected_action": [study.pk], "confirm": "yes", "participants": "3",
              "accuracy": "0.8", "attention_accuracy": "1", "rt_median_ms": "1800", "rt_log_sd": "0.4", "seed": "1"}
    form = admin_client.post("/admin/experiments/study/", {"action": "run_pilot", "_selected_action": [study.pk]})
    assert b"Accuracy by level" in form.content and b"Response-time shift by level" in form.content
    for text, message in [("pair_role=rulebreaker:2", "an accuracy is a probability between 0 and 1"),
                          ("pair_role rulebreaker 0.3", "is not FACTOR=LEVEL:ACCURACY"),
                          ("modality=box:0.3", f"{study.slug}: --accuracy-by FACTOR=LEVEL:ACCURACY: 'modality' is "
                                               "not one of the study&#x27;s declared factors")]:
        page = admin_client.post("/admin/experiments/study/", {**fields, "accuracy_by": text}).content.decode()
        assert message.replace("'", "&#x27;") in page.replace("'", "&#x27;"), text
    assert not Pilot.objects.exists()
    with django_capture_on_commit_callbacks(execute=True):
        admin_client.post("/admin/experiments/study/", {
            **fields, "accuracy_by": "pair_role=rulebreaker:0\npair_role=non-rulebreaker:1",
            "rt_shift_by": "pair_role=non-rulebreaker:-300"})
    pilot = Pilot.objects.get(study=study)
    assert pilot.profile["accuracy_by"] == {"pair_role": {"rulebreaker": 0.0, "non-rulebreaker": 1.0}}
    by_role = answers(study)
    assert not any(c for c, _ in by_role["rulebreaker"]) and all(c for c, _ in by_role["non-rulebreaker"])
    listing = admin_client.get("/admin/experiments/pilot/").content.decode()
    assert "pair_role=rulebreaker:0, pair_role=non-rulebreaker:1" in listing
    assert "pair_role=non-rulebreaker:-300 ms" in listing
    detail = admin_client.get(f"/admin/experiments/pilot/{pilot.pk}/change/").content.decode()
    assert "accuracy by level" in detail and "non-rulebreaker" in detail
