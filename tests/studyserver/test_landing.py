"""`/` is a landing page (issue 29: it was a bare 404): the admin, the documentation and, once the
demo is set up, the demo study."""
from __future__ import annotations

import re

import pytest

from demo import DEMO_SLUG


@pytest.mark.django_db
def test_the_landing_page_links_the_admin_and_the_docs_and_no_demo_before_there_is_one(client):
    page = client.get("/")
    assert page.status_code == 200
    html = page.content.decode()
    assert 'id="admin-link" href="/admin/"' in html
    assert 'href="/docs/README.md"' in html and 'href="/docs/analysis.md"' in html
    assert 'id="demo"' not in html
    assert 'id="guide-link" href="/docs/guide.md"' in html and 'href="/docs/"' in html
    readme = client.get("/docs/README.md")  # a page in the site's style (tests/studyserver/test_docs.py)
    assert readme.status_code == 200 and readme["Content-Type"] == "text/html; charset=utf-8"
    assert '<h1 id="duet">Duet</h1>' in readme.content.decode()
    for name in ("../pyproject.toml", "settings.py", "nothing.md", "..%2Fpyproject.toml"):
        assert client.get(f"/docs/{name}").status_code == 404, name


@pytest.mark.django_db
def test_the_landing_page_links_the_open_demo_study_with_a_fresh_participant_each_time(client):
    from designs.modal.items import items_generate
    from experiments import services
    from experiments.models import Participant, StudyStatus
    from experiments.participation.services import human_arm_ensure
    from tests.factories import review_consent

    study = services.study_create(slug=DEMO_SLUG, title="Modal syllogisms (paper 003 demo)", design="modal-syllogisms")
    items_generate(study=study, design="modal-syllogisms", interpretations=24, seed=0)
    html = client.get("/").content.decode()
    assert "Modal syllogisms (paper 003 demo) (draft)" in html and 'id="demo-preview"' in html
    assert 'id="demo-participant"' not in html  # a draft takes no participants
    arm = human_arm_ensure(study=study)
    arm.completion_code = "DEMOCODE"
    arm.save()
    review_consent(study)
    services.study_transition(study=study, to=StudyStatus.OPEN)
    links = [re.search(r'id="demo-participant" href="([^"]+)"', client.get("/").content.decode()).group(1)
             for _ in range(2)]
    assert links[0] != links[1] and all(link.startswith(f"/s/{DEMO_SLUG}/?PROLIFIC_PID=demo-") for link in links)
    entry = client.get(links[0].replace("&amp;", "&"))
    assert entry.status_code == 302 and Participant.objects.filter(study=study).count() == 1
