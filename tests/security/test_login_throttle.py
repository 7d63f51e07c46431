"""Admin login throttling (issue 17 hole 4): 60 wrong passwords in a few seconds, then the right
one, logged in. Now a client address or a user name with DUET_LOGIN_FAILURE_LIMIT failures is locked
out (429, nothing logged in) for the cool-off time; a success before that clears the count."""
from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

pytestmark = pytest.mark.django_db
LOGIN = "/admin/login/"
RIGHT = "correct-horse-battery"


def attempt(client: Client, username: str, password: str):
    client.get(LOGIN)
    return client.post(LOGIN, {"username": username, "password": password, "next": "/admin/",
                               "csrfmiddlewaretoken": client.cookies["csrftoken"].value})


def logged_in(client: Client) -> bool:
    return "_auth_user_id" in client.session


@pytest.fixture
def researcher():
    return get_user_model().objects.create_user("ada", password=RIGHT, is_staff=True)


def test_sixty_wrong_passwords_then_the_right_one_does_not_log_in(researcher, settings):
    attacker = Client(enforce_csrf_checks=True, REMOTE_ADDR="203.0.113.7")
    codes = [attempt(attacker, "ada", f"guess-{n}").status_code for n in range(60)]
    assert codes[: settings.AXES_FAILURE_LIMIT - 1] == [200] * (settings.AXES_FAILURE_LIMIT - 1)  # the form again
    assert set(codes[settings.AXES_FAILURE_LIMIT:]) == {429}
    response = attempt(attacker, "ada", RIGHT)
    assert response.status_code == 429 and b"Too many failed logins" in response.content
    assert not logged_in(attacker)
    # the user name is locked from anywhere (per user name), and the address for any name (per address)
    elsewhere = Client(enforce_csrf_checks=True, REMOTE_ADDR="198.51.100.20")
    assert attempt(elsewhere, "ada", RIGHT).status_code == 429 and not logged_in(elsewhere)
    get_user_model().objects.create_user("grace", password=RIGHT, is_staff=True)
    assert attempt(attacker, "grace", RIGHT).status_code == 429
    third = Client(enforce_csrf_checks=True, REMOTE_ADDR="198.51.100.30")
    assert attempt(third, "grace", RIGHT).status_code == 302 and logged_in(third)


def test_a_success_before_the_limit_clears_the_count(researcher, settings):
    client = Client(enforce_csrf_checks=True, REMOTE_ADDR="203.0.113.8")
    for n in range(settings.AXES_FAILURE_LIMIT - 1):
        assert attempt(client, "ada", f"typo-{n}").status_code == 200
    assert attempt(client, "ada", RIGHT).status_code == 302 and logged_in(client)
    client.logout()
    for n in range(settings.AXES_FAILURE_LIMIT - 1):
        assert attempt(client, "ada", f"typo-again-{n}").status_code == 200
    assert attempt(client, "ada", RIGHT).status_code == 302


def test_behind_the_trusted_proxy_the_forwarded_address_is_the_one_locked(researcher, settings):
    settings.DUET_TRUSTED_PROXIES = 1
    one = Client(enforce_csrf_checks=True, REMOTE_ADDR="10.0.0.2", HTTP_X_FORWARDED_FOR="203.0.113.50")
    for n in range(settings.AXES_FAILURE_LIMIT):
        attempt(one, "nobody", f"x{n}")
    assert attempt(one, "ada", RIGHT).status_code == 429  # 203.0.113.50 is locked
    other = Client(enforce_csrf_checks=True, REMOTE_ADDR="10.0.0.2", HTTP_X_FORWARDED_FOR="203.0.113.51")
    assert attempt(other, "ada", RIGHT).status_code == 302  # same proxy, another client: not locked


def test_the_address_axes_stores_is_an_ip_or_nothing(rf, settings):
    from common.ratelimit import login_client_ip

    assert login_client_ip(rf.get("/", REMOTE_ADDR="203.0.113.5")) == "203.0.113.5"
    request = rf.get("/")
    request.META.pop("REMOTE_ADDR", None)  # force_login's request has none: 'unknown' would break inet
    assert login_client_ip(request) is None and login_client_ip(None) is None
    settings.DUET_TRUSTED_PROXIES = 1
    assert login_client_ip(rf.get("/", REMOTE_ADDR="10.0.0.2", HTTP_X_FORWARDED_FOR="not-an-ip")) is None


def test_force_login_works_on_every_database(client):
    user = get_user_model().objects.create_user("login-anywhere", password=RIGHT, is_staff=True)
    client.force_login(user)  # raised inside django-axes on PostgreSQL (an 'unknown' address for inet)
    assert client.get("/admin/").status_code == 200
