import pytest
from django.urls import reverse


@pytest.mark.django_db
def test_healthz_reports_the_database(client, expect_db):
    response = client.get(reverse("healthz"))
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "ok"
    if expect_db:
        assert body["database"] == expect_db
    assert client.post(reverse("healthz")).status_code == 405
