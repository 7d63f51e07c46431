"""The study's Prolific page in the admin (issue 38): publish only from a green checklist, sync, review and
bonuses with a dry run and an apply against the stand-in server, the demographics import; another team's study
is not found."""
from __future__ import annotations

import html

import pytest
from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile

from prolific.models import Bonus, ProlificStudy
from tests.factories import ParticipantFactory
from tests.prolific.standin import pid as P

pytestmark = pytest.mark.django_db


@pytest.fixture
def owner(client):
    client.force_login(get_user_model().objects.create_superuser("owner", password="x-" * 8))
    return client


def test_publish_sync_review_and_bonus_from_the_admin(standin, ready_study, owner, settings):
    settings.DUET_PUBLIC_ORIGIN = "https://duet.example.org"
    page = html.unescape(owner.get(f"/admin/experiments/study/{ready_study.pk}/change/").content.decode())
    assert f'id="launch-publish" href="/admin/prolific/{ready_study.pk}/"' in page
    url = f"/admin/prolific/{ready_study.pk}/"
    owner.post(url, {"do": "publish", "reward": "150", "places": "4", "minutes": "8"})
    link = ProlificStudy.objects.get(study=ready_study)
    assert link.state == "published" and standin.state.studies[link.prolific_id]["external_study_url"].startswith(
        f"https://duet.example.org/s/{ready_study.slug}/")
    sid = standin.add_submission(link.prolific_id, P("nobody"), time_taken=480)
    assert "no record in Duet" in owner.post(url, {"do": "sync"}, follow=True).content.decode()
    dry = owner.post(url, {"do": "review", "apply": "no"}).content.decode()
    assert "leave" in dry and "Duet has no record" in dry and not standin.state.transitions
    standin.state.submissions[sid]["status"] = "APPROVED"
    dry = html.unescape(owner.post(url, {"do": "bonus", "amount": "0.40", "apply": "no"}).content.decode())
    assert "Total 0.40." in dry and 'id="prolific-bonus-to-pay">0.40<' in dry and not Bonus.objects.exists()
    owner.post(url, {"do": "bonus", "amount": "0.40", "apply": "yes", "confirm_total": "0.40"})
    owner.post(url, {"do": "bonus", "amount": "0.40", "apply": "yes", "confirm_total": "0.00"})
    assert standin.paid() == {P("nobody"): 1}
    arm = ready_study.human_arm
    arm.consent_text = "Taking part is voluntary. We receive from Prolific your age."
    arm.save()
    ParticipantFactory(study=ready_study, prolific_pid="pidA")
    export = SimpleUploadedFile("export.csv", b"Participant id,Age,Sex\npidA,34,Female\n", content_type="text/csv")
    page = html.unescape(owner.post(url, {"do": "demographics", "export": export}, follow=True).content.decode())
    assert "Imported Age for 1 participants" in page and "columns not in the consent text dropped: Sex" in page
    assert "1 participants have demographics" in page and "age in whole years" in page
    calls = owner.get(url).content.decode()
    assert "/api/v1/bulk-bonus-payments/" in calls and standin.state.token not in calls


def test_no_publish_button_until_the_checklist_is_green_and_other_teams_see_nothing(standin, client):
    from tests.experiments.participation.test_pilot import draft_study

    study = draft_study()  # consent not reviewed
    client.force_login(get_user_model().objects.create_superuser("owner", password="x-" * 8))
    assert 'id="launch-publish"' not in client.get(f"/admin/experiments/study/{study.pk}/change/").content.decode()
    page = client.get(f"/admin/prolific/{study.pk}/").content.decode()
    assert 'id="prolific-not-ready"' in page and 'id="prolific-publish"' not in page
    staff = get_user_model().objects.create_user("stranger", password="x-" * 8, is_staff=True)
    client.force_login(staff)
    assert client.get(f"/admin/prolific/{study.pk}/").status_code == 404
