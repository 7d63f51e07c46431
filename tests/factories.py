"""factory_boy factories for the experiments app."""
import factory

from experiments.models import Answer, Item, KeyMapping, Participant, Study, Trial


class StudyFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Study

    slug = factory.Sequence(lambda n: f"study-{n}")
    title = factory.Sequence(lambda n: f"Study {n}")
    design = "modal-syllogisms"


class ItemFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Item

    study = factory.SubFactory(StudyFactory)
    code = factory.Sequence(lambda n: f"item-{n}")
    design = "csv-import"
    gold_answer = Answer.YES
    premises = factory.LazyFunction(lambda: ["Jane is watching a show or John is reading a book.", "Jane isn't watching a show."])
    question = "Can we infer that John is reading a book?"
    prompt = "Consider the following statements:\n…"


class ParticipantFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Participant

    study = factory.SubFactory(StudyFactory)
    prolific_pid = factory.Sequence(lambda n: f"{n:024x}")
    key_mapping = KeyMapping.F_YES


class TrialFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Trial

    participant = factory.SubFactory(ParticipantFactory)
    item = factory.SubFactory(ItemFactory, study=factory.SelfAttribute("..participant.study"))
    index = factory.Sequence(lambda n: n)
    key = "f"
    answer = Answer.YES
    correct = True
    rt_ms = 1234.5


def review_consent(study, *, contact: str = "Dr A. Researcher, duet-study@example.org", by=None,
                   completion_code: str = "C0MPLETE"):
    """What a researcher does on the study's admin page before opening it: name a contact, paste
    Prolific's completion code (when none is set) and mark the consent text reviewed
    (experiments/participation/consent.py, readiness.py). Returns the human arm."""
    from experiments.participation.consent import consent_review
    from experiments.participation.services import human_arm_ensure

    arm = human_arm_ensure(study=study)
    if not arm.contact or not arm.completion_code:
        arm.contact = arm.contact or contact
        arm.completion_code = arm.completion_code or completion_code
        arm.save(update_fields=["contact", "completion_code"])
    return consent_review(arm=arm, by=by)


def join_default_team(user):
    """Make `user` a member of the default team, where studies made without a team go (issue 34
    item 6: a staff user sees only their teams' studies). Returns the user."""
    from experiments.models import Team, default_team_id

    Team.objects.get(pk=default_team_id()).members.add(user)
    return user
