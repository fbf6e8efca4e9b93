"""Land where the work is (docs/approvals.md, "Landing"): after logging in, approvers land
on the inbox, admins on runs and analysts on flows, unless a safe `next` says otherwise."""

import pytest
from django.contrib.auth.models import Group, User
from django.test import Client

from tests.django.fixture_types import DemoUsers

pytestmark = pytest.mark.django_db

PASSWORDS = {"analyst": "braid-analyst", "finance": "braid-finance", "legal": "braid-legal",
             "admin": "braid-admin"}  # fmt: skip


def log_in(username: str, password: str, next_url: str | None = None) -> tuple[Client, str]:
    """Log in through the form; return the client and where it was sent."""
    client = Client()
    body = {"username": username, "password": password}
    if next_url is not None:
        body["next"] = next_url
    response = client.post("/login/", body)
    assert response.status_code == 302, response.content
    return client, response["Location"]


@pytest.mark.parametrize(
    ("username", "landing"),
    [("finance", "/inbox/"), ("legal", "/inbox/"), ("admin", "/runs/"), ("analyst", "/flows/")],
)
def test_each_demo_user_lands_where_their_work_is(
    demo_users: DemoUsers, username: str, landing: str
) -> None:
    client, location = log_in(username, PASSWORDS[username])
    assert location == landing
    assert client.get("/")["Location"] == landing
    assert client.get("/login/")["Location"] == landing


def test_a_safe_next_wins_over_the_landing_page(demo_users: DemoUsers) -> None:
    _, location = log_in("finance", "braid-finance", "/runs/?status=waiting")
    assert location == "/runs/?status=waiting"


@pytest.mark.parametrize(
    "unsafe", ["https://evil.example/", "//evil.example/inbox/", "http://testserver.evil/x"]
)
def test_a_next_to_another_host_is_ignored_for_the_landing_page(
    demo_users: DemoUsers, unsafe: str
) -> None:
    _, location = log_in("finance", "braid-finance", unsafe)
    assert location == "/inbox/"


def test_someone_in_several_roles_lands_by_the_strongest(demo_users: DemoUsers) -> None:
    person = User.objects.create_user("both", password="pw-both-1234")
    person.groups.add(Group.objects.get(name="finance"), Group.objects.get(name="analysts"))
    assert log_in("both", "pw-both-1234")[1] == "/flows/"
    person.groups.add(Group.objects.get(name="admins"))
    assert log_in("both", "pw-both-1234")[1] == "/runs/"


def test_someone_without_a_group_lands_on_flows(demo_users: DemoUsers) -> None:
    User.objects.create_user("nobody", password="pw-nobody-1234")
    assert log_in("nobody", "pw-nobody-1234")[1] == "/flows/"
