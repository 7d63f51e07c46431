"""The experiments app's tables, one module per concern (Zulip's zerver/models/ is the model):

    choices.py       the closed lists of values (modality, answer, item kind, link kind, …)
    teams.py         Team: a lab, whose members see its studies
    studies.py       Study and its status machine; whether a study has responses
    items.py         Interpretation and Item (immutable once the study has responses)
    participants.py  Participant (one Prolific session) and Trial (one answer)
    human_arm.py     HumanArm: a study's settings for people, with its defaults and checks
    attention.py     the one definition of a failed attention check (read by the arm and every count)
    pilots.py        Pilot: a simulated pilot's background job
    presets.py       MappingPreset: a named mapping of a bank file's columns
    stored_lists.py  StoredLists and StoredList: the lists a study's settings draw, built once
    item_summary.py  StudyItemSummary: a study's items in figures (count, designs, list shape), built once
    questionnaires.py Questionnaire, Question and a participant's QuestionnaireAnswer / QuestionnaireCompletion:
                     the questionnaires before and after the items
    items_version.py StudyItemsVersion: a number raised by every write to a study's items (what is built once
                     from them records it)

This package is the bottom of the app: it imports nothing from the rest of experiments (tests/test_layers.py),
and Django loads every model through this file, so `from experiments.models import X` names any of them.
"""
from .attention import AttentionRule
from .choices import (
    ANSWERS, Answer, AnswerChannel, AnswerInput, Condition, ConsequenceKey, Device, ItemKind, LinkKind, LogicSystem,
    Modality, OptionLetter,
)
from .human_arm import HumanArm, PairedPresentation
from .item_summary import StudyItemSummary
from .items import Interpretation, Item, ItemQuerySet
from .items_version import StudyItemsVersion
from .participants import KeyMapping, Participant, ParticipantStatus, Trial, audience_q
from .pilots import Pilot, PilotStatus
from .presets import MappingPreset
from .questionnaires import (
    Placement, Question, QuestionKind, Questionnaire, QuestionnaireAnswer, QuestionnaireCompletion,
)
from .stored_lists import StoredList, StoredLists
from .studies import ItemsLocked, Study, StudyStatus, responses_exist
from .teams import DEFAULT_TEAM, Team, default_team_id

__all__ = [
    "ANSWERS", "Answer", "AnswerChannel", "AnswerInput", "AttentionRule", "Condition", "ConsequenceKey",
    "DEFAULT_TEAM", "Device", "HumanArm",
    "Interpretation", "Item", "ItemKind", "ItemQuerySet", "ItemsLocked", "KeyMapping", "LinkKind", "LogicSystem",
    "MappingPreset", "Modality", "OptionLetter", "PairedPresentation", "Participant", "ParticipantStatus", "Pilot",
    "PilotStatus", "Placement", "Question", "QuestionKind", "Questionnaire", "QuestionnaireAnswer",
    "QuestionnaireCompletion", "StoredList", "StoredLists", "Study", "StudyItemSummary", "StudyItemsVersion", "StudyStatus",
    "Team", "Trial", "audience_q", "default_team_id", "responses_exist",
]
