"""Every page requires login; the three sections load and say what they hold."""

import re

import pytest
from django.test import Client

from tests.django.fixture_types import ClientFor, DemoUsers

PAGES = ["/", "/flows/", "/runs/", "/inbox/"]  # /healthz answers anyone (test_health)


@pytest.mark.parametrize("path", PAGES)
def test_an_anonymous_visitor_is_sent_to_the_login_page(db: None, path: str) -> None:
    response = Client().get(path)
    assert response.status_code == 302
    assert response["Location"] == f"/login/?next={path}"


@pytest.mark.parametrize("path", ["/api/", "/api/schema/"])
def test_the_api_refuses_anonymous_callers_with_403_not_a_redirect(db: None, path: str) -> None:
    response = Client().get(path, HTTP_ACCEPT="application/json")
    assert response.status_code == 403


def test_a_demo_user_logs_in_with_the_printed_password_and_lands_on_flows(
    demo_users: DemoUsers,
) -> None:
    client = Client()
    response = client.post("/login/", {"username": "analyst", "password": "braid-analyst"})
    assert response.status_code == 302
    assert response["Location"] == "/flows/"
    assert client.get("/").headers["Location"] == "/flows/"


def test_a_wrong_password_shows_an_error_on_the_login_page(demo_users: DemoUsers) -> None:
    response = Client().post("/login/", {"username": "analyst", "password": "nope"})
    assert response.status_code == 200
    assert "That user name and password do not match" in response.content.decode()


def test_logging_out_ends_the_session(client_for: ClientFor) -> None:
    client = client_for("legal")
    assert client.post("/logout/").status_code == 302
    assert client.get("/runs/").status_code == 302


@pytest.mark.parametrize(
    ("path", "current", "text"),
    [
        ("/flows/", "Flows", "No flows yet"),
        ("/runs/", "Runs", "it lists runs from the API and updates them live"),
        ("/inbox/", "Inbox", "Loading your approval requests"),
    ],
)
def test_each_section_loads_marks_itself_current_and_says_what_it_holds(
    client_for: ClientFor, path: str, current: str, text: str
) -> None:
    html = client_for("finance").get(path).content.decode()
    # the Inbox link carries the count badge (hidden at 0) after its name
    badge = '(<span class="nav-count"[^>]*></span>)?'
    assert re.search(f'aria-current="page">{current}{badge}</a>', html)
    assert text in html
    for link in ('href="/flows/"', 'href="/runs/"', 'href="/inbox/"'):
        assert link in html


def test_the_inbox_names_the_approval_groups_of_the_user(client_for: ClientFor) -> None:
    html = client_for("finance").get("/inbox/").content.decode()
    assert '"groups": ["finance"]' in html  # the page's settings; it names them when empty
