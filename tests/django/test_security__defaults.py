"""Production defaults: a CSP on every page, API docs without inline script, login lockout."""

import base64
import re
from typing import TypedDict

import pytest
from django.core.management import call_command
from django.test import Client

from tests.django.fixture_types import ClientFor, DemoUsers

pytestmark = pytest.mark.django_db

POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "font-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'self'; "
    "form-action 'self'; frame-ancestors 'none'"
)
PAGES = ["/login/", "/flows/", "/flows/invoice-sign-off/", "/runs/", "/inbox/", "/healthz"]


@pytest.mark.parametrize("path", PAGES)
def test_every_page_sends_the_content_security_policy(
    demo: DemoUsers, client_for: ClientFor, path: str
) -> None:
    client = Client() if path == "/login/" else client_for("admin")
    response = client.get(path)
    assert response.status_code in (200, 503)  # healthz: 503 without the worker thread
    assert response["Content-Security-Policy"] == POLICY


@pytest.mark.parametrize("path", PAGES[:-1])
def test_no_page_has_an_inline_script(demo: DemoUsers, client_for: ClientFor, path: str) -> None:
    client = Client() if path == "/login/" else client_for("admin")
    html = client.get(path).content.decode()
    scripts = re.findall(r"<script\b[^>]*>", html)
    assert [tag for tag in scripts if "src=" not in tag and "application/json" not in tag] == []


def test_the_api_docs_are_served_locally_without_inline_script(
    demo: DemoUsers, client_for: ClientFor
) -> None:
    response = client_for("analyst").get("/api/docs/")
    html = response.content.decode()
    assert response.status_code == 200
    assert "/static/drf_spectacular_sidecar/swagger-ui-dist/swagger-ui-bundle.js" in html
    assert "cdn" not in html.lower()
    assert [tag for tag in re.findall(r"<script\b[^>]*>", html) if "src=" not in tag] == []
    assert "'sha256-" in response["Content-Security-Policy"]
    assert "script-src 'self';" in response["Content-Security-Policy"]


def test_the_api_docs_need_a_login() -> None:
    response = Client().get("/api/docs/")
    assert response.status_code in (401, 403)


class BasicAuth(TypedDict):
    """The WSGI header of a Basic-auth API call, as the test client's keyword argument."""

    HTTP_AUTHORIZATION: str


def basic(username: str, password: str) -> BasicAuth:
    """Return the header of a Basic-auth API call."""
    token = base64.b64encode(f"{username}:{password}".encode()).decode()
    return {"HTTP_AUTHORIZATION": f"Basic {token}"}


def test_five_failed_logins_lock_the_user_out_of_the_login_page(demo: DemoUsers) -> None:
    client = Client()
    for _ in range(4):
        failed = client.post("/login/", {"username": "analyst", "password": "wrong"})
        assert failed.status_code == 200
    locked = client.post("/login/", {"username": "analyst", "password": "wrong"})
    assert locked.status_code == 429
    assert "Login locked" in locked.content.decode()
    right = client.post("/login/", {"username": "analyst", "password": "braid-analyst"})
    assert right.status_code == 429  # even the right password, until the cool-off ends

    call_command("axes_reset", verbosity=0)
    unlocked = client.post("/login/", {"username": "analyst", "password": "braid-analyst"})
    assert (unlocked.status_code, unlocked["Location"]) == (302, "/flows/")


def test_failed_basic_auth_locks_the_api_out_with_a_json_403(demo: DemoUsers) -> None:
    client = Client()
    for _ in range(4):
        assert client.get("/api/flows/", **basic("analyst", "wrong")).status_code in (401, 403)
    locked = client.get("/api/flows/", **basic("analyst", "wrong"))
    assert (locked.status_code, locked.json()) == (
        403,
        {
            "code": "auth.locked_out",
            "detail": "too many failed logins for this user from this address; try again in "
            "15 minutes, or ask an admin to unlock it",
        },
    )
    assert client.get("/api/flows/", **basic("analyst", "braid-analyst")).status_code == 403
    assert client.get("/api/flows/", **basic("legal", "braid-legal")).status_code == 200
