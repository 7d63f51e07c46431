"""Prolific's eligibility filters on publish (issue 47 item 4): typed on the command line (`--filter ID=VALUE[,VALUE]`,
repeatable; `--not-in`; `--device`) or in the admin's publish form, checked against Prolific's filter list before
anything is created, sent in Prolific's documented shape (shown against the stand-in, which refuses what Prolific
would), stored with the study and listed on the launch panel; Prolific's list read as outside data."""
from __future__ import annotations

import html
import json
import re
import secrets

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command

from prolific import filters, services
from prolific.client import Client, ProlificError
from prolific.eligibility import filters_checked
from prolific.models import ApiCall, ProlificStudy
from tests import hostile
from tests.factories import StudyFactory

pytestmark = pytest.mark.django_db
ORIGIN = "https://duet.example.org"
PUBLISH = ("--reward", "150", "--places", "4", "--minutes", "8", "--origin", ORIGIN)


def _text(response) -> str:
    return html.unescape(response.content.decode())


def _posts(standin) -> list:
    return [c for c in standin.state.calls if c.method == "POST"]


def _earlier(standin, slug: str = "earlier-study") -> tuple[str, str]:
    """A Duet study already on Prolific (the stand-in lists it): its slug and Prolific id."""
    sid = secrets.token_hex(12)
    standin.state.studies[sid] = {"id": sid, "internal_name": f"duet:{slug}:0000", "status": "COMPLETED"}
    study = StudyFactory(slug=slug)
    ProlificStudy.objects.create(study=study, prolific_id=sid, internal_name=f"duet:{slug}:0000", reward_cents=100,
                                 places=1, minutes=1, state="published")
    return slug, sid


# ------------------------------------------------------------------------------------------ typed text
@pytest.mark.parametrize("typed,wanted", [
    ("first-language=19", filters.Wanted("first-language", ("19",))),
    ("first_language=English, German", filters.Wanted("first-language", ("English", "German"))),
    ("country=United Kingdom", filters.Wanted("current-country-of-residence", ("United Kingdom",))),
    ("approval_rate=95..100", filters.Wanted("approval_rate", lower="95", upper="100", is_range=True)),
    ("approval_rate=95-100", filters.Wanted("approval_rate", lower="95", upper="100", is_range=True)),
    ("submissions=..50", filters.Wanted("approval_numbers", upper="50", is_range=True)),
    ("date-of-birth=1980-01-01..1999-12-31",
     filters.Wanted("date-of-birth", lower="1980-01-01", upper="1999-12-31", is_range=True)),
    ("not-in=a,b", filters.Wanted("previous_studies_blocklist", ("a", "b"))),
])
def test_what_is_typed_is_read_as_a_select_or_a_range(typed, wanted):
    assert filters.parse(typed) == wanted


@pytest.mark.parametrize("typed,words", [
    ("first-language", "is not a filter: write ID=VALUE"),
    ("=19", "is not a filter"),
    ("first-language=", "is not a filter"),
    ("first language=19", "is not a Prolific filter id"),
    ("first-language=19,,34", "an empty value between commas"),
    ("approval_rate=..", "a range is LOW..HIGH, with at least one"),
    ("approval_rate=1..2..3", "a range is LOW..HIGH"),
])
def test_bad_syntax_is_refused_in_words(typed, words):
    with pytest.raises(filters.FilterSyntax, match=words):
        filters.parse(typed)


# ------------------------------------------------------------------------------------------ sent as documented
def test_select_range_and_previous_studies_filters_are_sent_in_prolifics_documented_shape(standin, touch_study):
    ready_study = touch_study  # answered by taps too: Prolific may offer it on phones
    slug, earlier = _earlier(standin)
    other = secrets.token_hex(12)
    standin.state.studies[other] = {"id": other, "internal_name": "made in Prolific's web app"}
    wanted = [filters.parse(t) for t in ("first-language=English", "fluent-languages=19,German",
                                         "country=United Kingdom,1", "approval_rate=95..100", "submissions=10..",
                                         "date-of-birth=1980-01-01..", f"not-in={slug},{other}")]
    link = services.prolific_publish(study=ready_study, origin=ORIGIN, reward_cents=150, places=4, minutes=8,
                                     filters=wanted, devices=["desktop", "mobile"])
    sent = standin.state.created[-1]
    assert sent["filters"] == [
        {"filter_id": "first-language", "selected_values": ["19"]},
        {"filter_id": "fluent-languages", "selected_values": ["19", "34"]},
        {"filter_id": "current-country-of-residence", "selected_values": ["0", "1"]},
        {"filter_id": "approval_rate", "selected_range": {"lower": 95, "upper": 100}},
        {"filter_id": "approval_numbers", "selected_range": {"lower": 10}},
        {"filter_id": "date-of-birth", "selected_range": {"lower": "1980-01-01"}},
        {"filter_id": "previous_studies_blocklist", "selected_values": [earlier, other]},
    ]
    assert sent["device_compatibility"] == ["desktop", "mobile"]
    assert link.filters_sent() == sent["filters"] and link.devices == ["desktop", "mobile"]
    assert link.filter_words()[0] == "First language (first-language): English (19)"
    assert link.filter_words()[3] == "Approval Rate (approval_rate): 95 to 100"
    assert link.filter_words()[6].startswith(f"Exclude participants from previous studies (previous_studies_blocklist): "
                                             f"{slug} ({earlier}), {other}")
    assert standin.state.studies[link.prolific_id]["status"] == "ACTIVE"


def test_without_filters_no_list_is_asked_for_and_the_payload_is_desktop_only(standin, ready_study):
    services.prolific_publish(study=ready_study, origin=ORIGIN, reward_cents=150, places=4, minutes=8)
    assert "filters" not in standin.state.created[-1]
    assert standin.state.created[-1]["device_compatibility"] == ["desktop"]
    assert not [c for c in standin.state.calls if "/filters/" in c.path]
    assert standin.state.created[-1]["description"].endswith("answer questions about them with the F and J keys.")


def test_the_default_description_says_how_a_touch_study_is_answered(standin, touch_study):
    services.prolific_publish(study=touch_study, origin=ORIGIN, reward_cents=150, places=4, minutes=8,
                              devices=["desktop", "mobile"])
    assert standin.state.created[-1]["description"].endswith(
        "with the F and J keys, or by clicking or tapping the answer buttons.")


@pytest.mark.parametrize("typed,words", [
    ("no-such-filter=1", "Prolific does not know a filter 'no-such-filter'"),
    ("first-language=Klingon", "first-language: 'Klingon' is not among its choices (a choice id or its label, "
                               "e.g. 19 = English"),
    ("approval_rate=90..101", "approval_rate: 101 is outside the filter's bounds (0..100)"),
    ("approval_rate=99..90", "the lower bound 99 is above the upper bound 90"),
    ("approval_rate=9x..", "'9x' is not a whole number"),
    ("first-language=1..3", "first-language is a select filter: give its values"),
    ("approval_rate=95", "approval_rate is a range filter: give a range, ID=LOW..HIGH (its bounds: 0..100)"),
    ("date-of-birth=1850-01-01..", "outside the filter's bounds"),
    ("not-in=no-such-study", "'no-such-study' is neither a Duet study nor a Prolific study id"),
    (f"not-in={'ab' * 12}", "is not among the studies Prolific lists for it"),
])
def test_a_filter_prolific_does_not_allow_is_refused_before_anything_is_created(standin, ready_study, typed, words):
    _earlier(standin)  # (Prolific lists the workspace's studies as the previous-studies filter's choices)
    with pytest.raises(services.ProlificRefused, match=re.escape(words)) as refused:
        services.prolific_publish(study=ready_study, origin=ORIGIN, reward_cents=150, places=4, minutes=8,
                                  filters=[filters.parse("country=United Kingdom"), filters.parse(typed)])
    assert "No study was created on Prolific" in str(refused.value)
    assert not _posts(standin) and not standin.state.created
    assert not ProlificStudy.objects.filter(study=ready_study).exists()
    assert [c.path for c in standin.state.calls][0] == "/api/v1/filters/"  # only the list was read


def test_a_duet_study_not_yet_on_prolific_is_refused_with_what_to_do(standin, ready_study):
    StudyFactory(slug="not-yet-published")
    with pytest.raises(services.ProlificRefused, match="the Duet study not-yet-published has no study on Prolific yet"):
        services.prolific_publish(study=ready_study, origin=ORIGIN, reward_cents=150, places=4, minutes=8,
                                  filters=[filters.parse("not-in=not-yet-published")])


def test_a_refused_try_keeps_no_filters_for_the_next(standin, ready_study):
    standin.fail("POST /api/v1/studies/", 400)  # Prolific refuses the create: nothing made, the next try may create
    with pytest.raises(ProlificError):
        services.prolific_publish(study=ready_study, origin=ORIGIN, reward_cents=150, places=4, minutes=8,
                                  filters=[filters.parse("approval_rate=90..")])
    assert ProlificStudy.objects.get(study=ready_study).filters_typed() == ["approval_rate=90.."]
    services.prolific_publish(study=ready_study, origin=ORIGIN, reward_cents=150, places=4, minutes=8,
                              filters=[filters.parse("handedness=Left-handed")])
    assert standin.state.created[-1]["filters"] == [{"filter_id": "handedness", "selected_values": ["1"]}]


# ------------------------------------------------------------------------------------------ the command
def test_the_command_takes_repeated_filters_earlier_studies_and_devices(standin, touch_study, capsys):
    ready_study = touch_study  # answered by taps too: Prolific may offer it on tablets
    slug, earlier = _earlier(standin)
    call_command("prolific", "publish", ready_study.slug, *PUBLISH, "--filter", "first-language=English",
                 "--filter", "approval_rate=95-100", "--filter", "handedness=0,2", "--not-in", slug,
                 "--device", "desktop", "--device", "tablet")
    sent = standin.state.created[-1]
    assert sent["filters"] == [
        {"filter_id": "first-language", "selected_values": ["19"]},
        {"filter_id": "approval_rate", "selected_range": {"lower": 95, "upper": 100}},
        {"filter_id": "handedness", "selected_values": ["0", "2"]},
        {"filter_id": "previous_studies_blocklist", "selected_values": [earlier]},
    ]
    assert sent["device_compatibility"] == ["desktop", "tablet"]
    out = capsys.readouterr().out
    assert "devices: desktop, tablet" in out and "Filter: Handedness (handedness): Right-handed (0), Ambidextrous (2)" in out


def test_earlier_studies_and_a_common_filters_field_are_values_never_a_range(standin, ready_study, owner, settings):
    settings.DUET_PUBLIC_ORIGIN = ORIGIN
    slug, earlier = _earlier(standin, "2024-2025")  # a slug that reads like LOW-HIGH
    assert filters.values_of(filters.PREVIOUS_STUDIES, " 2024-2025, ") == filters.Wanted(
        filters.PREVIOUS_STUDIES, ("2024-2025",))
    standin.fail("POST /api/v1/studies/", 400)  # the first try is stored, not created: its fields come back
    owner.post(f"/admin/prolific/{ready_study.pk}/", {"do": "publish", "reward": "150", "places": "4",
                                                      "minutes": "8", "not_in": slug})
    form = owner.get(f"/admin/prolific/{ready_study.pk}/").context["publish_form"]
    assert form["not_in"].value() == slug and not form["other_filters"].value()
    call_command("prolific", "publish", ready_study.slug, *PUBLISH, "--not-in", slug)
    assert standin.state.created[-1]["filters"] == [{"filter_id": "previous_studies_blocklist",
                                                     "selected_values": [earlier]}]


@pytest.mark.parametrize("arguments,words,asked", [
    (("--filter", "first-language"), "--filter/--not-in: 'first-language' is not a filter: write ID=VALUE", False),
    (("--filter", "approval_rate=.."), "a range is LOW..HIGH", False),
    (("--filter", "approval_rate=90..", "--filter", "approval_rate=95.."), "approval_rate is given twice", False),
    (("--filter", "no-such-filter=1"), "Prolific does not know a filter 'no-such-filter'", True),
    (("--filter", "country=Atlantis"), "'Atlantis' is not among its choices", True),
])
def test_the_command_refuses_bad_filters_in_words_and_creates_nothing(standin, ready_study, arguments, words, asked):
    with pytest.raises(CommandError, match=re.escape(words)):
        call_command("prolific", "publish", ready_study.slug, *PUBLISH, *arguments)
    assert not _posts(standin) and not ProlificStudy.objects.exists()
    # a syntax problem is refused before Prolific is asked anything; a value, after its list is read
    assert [c.path.split("?")[0] for c in standin.state.calls][:1] == (["/api/v1/filters/"] if asked else [])


@pytest.mark.parametrize("answer_input", ["keys", "keys_buttons"])
def test_a_study_answered_by_keys_is_not_offered_on_phones_or_tablets(standin, ready_study, owner, settings,
                                                                      answer_input):
    """A human arm answering by keys (the page turns phones and tablets away) is published for desktops only: a
    tablet or a phone asked for is refused in words — by the service, the command and the admin's form — before
    Prolific is asked anything and before anything is stored; desktop alone is sent as Prolific's
    device_compatibility."""
    from tests.factories import review_consent

    settings.DUET_PUBLIC_ORIGIN = ORIGIN
    arm = services.arm_of(ready_study)
    arm.answer_input = answer_input
    arm.save(update_fields=["answer_input"])
    review_consent(ready_study)  # the answer input is part of what the consent review covers
    label = arm.input_mode().label
    said = ("Prolific would offer this study on tablet and mobile devices, but its participants answer by "
            f"“{label}” (the human arm's answer input), and the participant page turns phones and tablets away. "
            "Publish it for desktop only, or first let the human arm take taps (answer input “keys, clicks or taps on "
            "the buttons (phones and tablets welcome)”). Nothing was sent to Prolific.")
    with pytest.raises(services.ProlificRefused) as refused:
        services.prolific_publish(study=ready_study, origin=ORIGIN, reward_cents=150, places=4, minutes=8,
                                  devices=["mobile", "desktop", "tablet"], filters=[filters.parse("handedness=0")])
    assert str(refused.value) == said
    with pytest.raises(CommandError, match=re.escape("Prolific would offer this study on mobile devices, but")):
        call_command("prolific", "publish", ready_study.slug, *PUBLISH, "--device", "desktop", "--device", "mobile")
    page = _text(owner.post(f"/admin/prolific/{ready_study.pk}/", {
        "do": "publish", "reward": "150", "places": "4", "minutes": "8", "devices": ["desktop", "tablet"]}))
    assert "Prolific would offer this study on tablet devices, but its participants answer by" in page
    assert not standin.state.calls and not ProlificStudy.objects.exists()  # nothing asked, nothing stored
    services.prolific_publish(study=ready_study, origin=ORIGIN, reward_cents=150, places=4, minutes=8)
    assert standin.state.created[-1]["device_compatibility"] == ["desktop"]


def test_the_command_refuses_an_unknown_device(standin, ready_study):
    with pytest.raises(CommandError, match="invalid choice: 'phone'"):
        call_command("prolific", "publish", ready_study.slug, *PUBLISH, "--device", "phone")
    assert not standin.state.calls


# ------------------------------------------------------------------------------------------ the admin
@pytest.fixture
def owner(client):
    client.force_login(get_user_model().objects.create_superuser("owner", password="x-" * 8))
    return client


def test_the_admin_form_takes_the_filters_keeps_them_on_a_refusal_and_the_launch_panel_lists_them(
        standin, touch_study, owner, settings):
    ready_study = touch_study  # answered by taps too: Prolific may offer it on tablets
    settings.DUET_PUBLIC_ORIGIN = ORIGIN
    slug, earlier = _earlier(standin)
    url = f"/admin/prolific/{ready_study.pk}/"
    panel = _text(owner.get(f"/admin/experiments/study/{ready_study.pk}/change/"))
    assert 'id="launch-eligibility"' in panel and "<strong>Prolific eligibility:</strong> not set yet" in panel
    typed = {"do": "publish", "reward": "150", "places": "4", "minutes": "8", "devices": ["desktop", "tablet"],
             "first_language": "English", "country": "Atlantis", "approval_rate_min": "95", "submissions_max": "500",
             "not_in": slug, "other_filters": "handedness=Left-handed\n\ndate-of-birth=1980-01-01..1999-12-31"}
    answer = owner.post(url, typed)
    page = _text(answer)
    assert "current-country-of-residence: 'Atlantis' is not among its choices" in page
    assert not _posts(standin) and not ProlificStudy.objects.filter(study=ready_study).exists()
    form = answer.context["publish_form"]  # what was typed, as typed
    assert (form["country"].value(), form["first_language"].value(), form["approval_rate_min"].value(),
            form["not_in"].value(), form["devices"].value()) == ("Atlantis", "English", "95", slug,
                                                                ["desktop", "tablet"])
    assert 'value="Atlantis"' in page and "handedness=Left-handed" in page
    asked = len(standin.state.calls)
    bad = owner.post(url, {**typed, "other_filters": "handedness"})  # bad syntax: the form says so, nothing asked
    assert "is not a filter: write ID=VALUE" in _text(bad) and len(standin.state.calls) == asked
    assert not _posts(standin)

    owner.post(url, {**typed, "country": "United Kingdom"})
    link = ProlificStudy.objects.get(study=ready_study)
    assert standin.state.created[-1]["filters"] == [
        {"filter_id": "first-language", "selected_values": ["19"]},
        {"filter_id": "current-country-of-residence", "selected_values": ["0"]},
        {"filter_id": "approval_rate", "selected_range": {"lower": 95}},
        {"filter_id": "approval_numbers", "selected_range": {"upper": 500}},
        {"filter_id": "previous_studies_blocklist", "selected_values": [earlier]},
        {"filter_id": "handedness", "selected_values": ["1"]},
        {"filter_id": "date-of-birth", "selected_range": {"lower": "1980-01-01", "upper": "1999-12-31"}},
    ]
    assert standin.state.created[-1]["device_compatibility"] == ["desktop", "tablet"] == link.devices
    panel = _text(owner.get(f"/admin/experiments/study/{ready_study.pk}/change/"))
    assert "Prolific eligibility</strong> (sent with the study; devices: desktop, tablet)" in panel
    for words in ("First language (first-language): English (19)",
                  "Current Country of Residence (current-country-of-residence): United Kingdom (0)",
                  "Approval Rate (approval_rate): at least 95", "Approval Numbers (approval_numbers): at most 500",
                  f"(previous_studies_blocklist): {slug} ({earlier})", "Handedness (handedness): Left-handed (1)",
                  "Date of birth (date-of-birth): 1980-01-01 to 1999-12-31"):
        assert f"{words}</li>" in panel
    assert "at least 95" in _text(owner.get(url))  # the Prolific page says them too


def test_a_stored_try_comes_back_into_the_fields_it_came_from(standin, ready_study, owner, settings):
    settings.DUET_PUBLIC_ORIGIN = ORIGIN
    standin.fail("POST /api/v1/studies/", 400)
    owner.post(f"/admin/prolific/{ready_study.pk}/", {
        "do": "publish", "reward": "150", "places": "4", "minutes": "8", "first_language": "English",
        "approval_rate_min": "95", "approval_rate_max": "100", "other_filters": "handedness=0"})
    form = owner.get(f"/admin/prolific/{ready_study.pk}/").context["publish_form"]
    assert (form["first_language"].value(), form["approval_rate_min"].value(), form["approval_rate_max"].value(),
            form["other_filters"].value(), form["devices"].value()) == (
        "English", "95", "100", "handedness=0", ["desktop"])


def test_a_slug_names_only_a_study_the_user_sees(standin, ready_study):
    slug, _ = _earlier(standin)
    from experiments.models import Study
    with pytest.raises(services.ProlificRefused, match=f"'{slug}' is neither a Duet study"):
        services.prolific_publish(study=ready_study, origin=ORIGIN, reward_cents=150, places=4, minutes=8,
                                  filters=[filters.parse(f"not-in={slug}")], visible=Study.objects.none())


# ------------------------------------------------------------------------------------------ the list is outside data
def _serving(body) -> hostile.Peer:
    data = json.dumps(body).encode()
    return hostile.Peer(lambda peer, conn, request: hostile.send(conn, 200, data))


def test_entries_of_the_wrong_shape_are_not_used_and_nothing_of_them_is_repeated(monkeypatch):
    marker = hostile.MARKER
    listed = {"results": [
        {"filter_id": "first-language", "type": "select", "choices": [marker]},  # choices not a mapping
        {"filter_id": marker + " x", "type": "select", "choices": {}},  # not an id
        {"filter_id": "approval_rate", "type": "range", "data_type": "integer", "min": marker, "max": 100},
        {"filter_id": "handedness", "type": "weird", "choices": {"0": marker}},
        {"filter_id": "fluent-languages", "title": marker * 20, "type": "select", "choices": {"19": "English"}},
        "not a filter", 7,
    ], "_links": {"next": {"href": None}}}
    with _serving(listed) as prolific:
        client = Client(base_url=prolific.url, token="t0ken-filters")
        with pytest.raises(filters.FilterRefused) as refused:
            filters_checked(wanted=[filters.parse(t) for t in ("first-language=19", "approval_rate=90..",
                                                               "handedness=0", "fluent-languages=Klingon")],
                            client=client)
    said = str(refused.value)
    assert marker not in said
    for name in ("first-language", "approval_rate", "handedness"):
        assert f"Prolific does not know a filter '{name}'" in said
    assert "fluent-languages: 'Klingon' is not among its choices (a choice id or its label, e.g. 19 = English)" in said
    assert len(filters.read_list(listed["results"]).known["fluent-languages"].title) == filters.MAX_WORDS


def test_a_list_that_is_not_a_list_or_too_long_is_refused_in_words(monkeypatch):
    with _serving({"results": hostile.MARKER}) as prolific:
        with pytest.raises(ProlificError, match="without a list of results") as failed:
            filters_checked(wanted=[filters.parse("x=1")], client=Client(base_url=prolific.url, token="t0ken"))
    assert hostile.MARKER not in str(failed.value)
    many = [{"filter_id": f"f{i}", "type": "select", "choices": {}} for i in range(filters.MAX_FILTERS + 1)]
    with pytest.raises(filters.ListShape, match=f"more than {filters.MAX_FILTERS} filters"):
        filters.read_list(many)
    wide = [{"filter_id": f"f{i}", "type": "select", "choices": {str(n): "x" for n in range(filters.MAX_CHOICES)}}
            for i in range(filters.MAX_ALL_CHOICES // filters.MAX_CHOICES + 1)]
    with pytest.raises(filters.ListShape, match="choices"):
        filters.read_list(wide)


def test_the_filter_list_call_is_recorded_on_the_study_without_a_body(standin, ready_study):
    with pytest.raises(services.ProlificRefused):
        services.prolific_publish(study=ready_study, origin=ORIGIN, reward_cents=150, places=4, minutes=8,
                                  filters=[filters.parse("no-such=1")])
    calls = list(ApiCall.objects.filter(study=ready_study).values_list("method", "path", "status"))
    assert ("GET", "/api/v1/filters/", 200) in calls and all(path.startswith("/api/v1/filters/") for _, path, _ in calls)


def test_a_filter_list_without_end_is_read_to_its_page_cap_only():
    from prolific.client import FILTER_PAGES

    def endless(peer, conn, request):
        page = {"results": [{"filter_id": f"f{len(peer.requests)}", "type": "select", "choices": {}}],
                "_links": {"next": {"href": f"{peer.url}/api/v1/filters/?page={len(peer.requests) + 1}"}}}
        hostile.send(conn, 200, json.dumps(page).encode())

    with hostile.Peer(endless) as prolific:
        with pytest.raises(ProlificError, match=f"more than {FILTER_PAGES} pages"):
            filters_checked(wanted=[filters.parse("x=1")], client=Client(base_url=prolific.url, token="t0ken"))
        assert len(prolific.requests) == FILTER_PAGES
