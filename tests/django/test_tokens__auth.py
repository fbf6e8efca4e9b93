"""`Authorization: Bearer` on the API: a token is its user, with that user's role and no
more; a bad, expired or revoked token is a 401 saying which; pages never take one; a token
needs no CSRF token and a session still does."""

import datetime as dt
import json

import pytest
from django.contrib.auth.models import Group, User
from django.test import Client
from django.utils import timezone
from pytest_django import DjangoAssertNumQueries

from tests.django.fixture_types import DemoUsers, TestResponse
from tests.django.test_permissions__sweep import GRAPH
from tokens import services
from tokens.models import ApiToken

pytestmark = pytest.mark.django_db


def token_of(user: User, expires_at: dt.datetime | None = None) -> tuple[ApiToken, str]:
    """Issue a token for the user; return it with its secret."""
    return services.issue(user, "test", expires_at)


def call(secret: str, path: str = "/api/flows/", client: Client | None = None) -> TestResponse:
    """GET a path with the secret as a Bearer token."""
    return (client or Client()).get(path, HTTP_AUTHORIZATION=f"Bearer {secret}")


def refusal(response: TestResponse) -> tuple[int, str, str]:
    """Return a refusal's status, code and WWW-Authenticate challenge."""
    return response.status_code, response.json()["code"], response.get("WWW-Authenticate", "")


INVALID = 'Bearer realm="api", error="invalid_token"'
MALFORMED = 'Bearer realm="api", error="invalid_request"'


def test_a_token_calls_the_api_as_its_user(demo_users: DemoUsers) -> None:
    _, secret = token_of(demo_users["analyst"])
    response = call(secret, "/api/me/notifications/")
    assert (response.status_code, response.json()) == (200, {"email_requests": True})
    body = {"slug": "by-token", "draft": GRAPH}
    made = Client().post("/api/flows/", json.dumps(body), "application/json",
                         HTTP_AUTHORIZATION=f"Bearer {secret}")  # fmt: skip
    assert made.status_code == 201, made.content
    assert made.json()["owner"] == "analyst"


def test_a_token_carries_its_users_role_and_nothing_more(demo_users: DemoUsers) -> None:
    _, finance = token_of(demo_users["finance"])
    _, admin = token_of(demo_users["admin"])
    body = json.dumps({"action": "retry", "ids": ["00000000-0000-0000-0000-000000000001"]})

    def bulk(secret: str) -> TestResponse:
        return Client().post("/api/runs/bulk/", body, "application/json",
                             HTTP_AUTHORIZATION=f"Bearer {secret}")  # fmt: skip

    refused = bulk(finance)
    assert (refused.status_code, refused.json()) == (403, {
        "code": "permission_denied",
        "detail": "Your role (approver) may not cancel and retry runs.",
    })  # fmt: skip
    assert bulk(admin).status_code == 200
    flow = Client().post("/api/flows/", json.dumps({"slug": "nope", "draft": GRAPH}),
                         "application/json", HTTP_AUTHORIZATION=f"Bearer {finance}")  # fmt: skip
    assert flow.status_code == 403


def test_a_role_taken_away_is_gone_from_the_token_at_once(demo_users: DemoUsers) -> None:
    operator = User.objects.create_user("operator", password="braid-operator")
    operator.groups.add(Group.objects.get(name="admins"))  # an admin by group, not a superuser
    _, secret = token_of(operator)
    assert call(secret, "/api/tokens/?all=true").status_code == 200
    operator.groups.remove(Group.objects.get(name="admins"))
    assert call(secret, "/api/tokens/?all=true").status_code == 403


def test_an_expired_token_is_refused_saying_when(demo_users: DemoUsers) -> None:
    token, secret = token_of(demo_users["analyst"], timezone.now() + dt.timedelta(days=1))
    assert call(secret).status_code == 200
    token.expires_at = dt.datetime(2026, 3, 4, 5, 6, 7, tzinfo=dt.UTC)
    token.save()
    response = call(secret)
    assert refusal(response) == (401, "token.expired", INVALID)
    assert (
        response.json()["detail"] == f"this token ({token.prefix}…) expired at 2026-03-04 05:06 UTC"
    )


def test_a_revoked_token_is_refused_saying_when(demo_users: DemoUsers) -> None:
    token, secret = token_of(demo_users["analyst"])
    services.revoke(token, demo_users["analyst"])
    token.revoked_at = dt.datetime(2026, 1, 2, 3, 4, tzinfo=dt.UTC)
    token.save()
    response = call(secret)
    assert refusal(response) == (401, "token.revoked", INVALID)
    assert (
        response.json()["detail"]
        == f"this token ({token.prefix}…) was revoked at 2026-01-02 03:04 UTC"
    )


def test_an_unknown_token_or_a_deactivated_user_is_refused(demo_users: DemoUsers) -> None:
    _, secret = token_of(demo_users["analyst"])
    unknown = call(secret[:-1] + ("A" if secret[-1] != "A" else "B"))
    assert refusal(unknown) == (401, "token.unknown", INVALID)
    assert unknown.json()["detail"] == "this token is not known: mistyped, or never issued"
    demo_users["analyst"].is_active = False
    demo_users["analyst"].save()
    assert refusal(call(secret)) == (401, "token.user_inactive", INVALID)


@pytest.mark.parametrize(
    ("header", "code"),
    [
        ("Bearer", "token.malformed"),
        ("Bearer    ", "token.malformed"),
        ("Bearer braid_abc", "token.malformed"),
        ("Bearer {secret} extra", "token.malformed"),
        ("Bearer {secret}\u00e9", "token.malformed"),
        ("bearer {secret}x", "token.malformed"),
        ("Token {secret}", "auth.scheme"),
        ("{secret}", "auth.scheme"),
    ],
)
def test_a_malformed_authorization_header_is_a_401_saying_how_to_send_one(
    demo_users: DemoUsers, header: str, code: str
) -> None:
    _, secret = token_of(demo_users["analyst"])
    response = Client().get("/api/flows/", HTTP_AUTHORIZATION=header.format(secret=secret))
    assert refusal(response) == (401, code, MALFORMED)
    assert response.json()["detail"].endswith(
        "; send `Authorization: Bearer braid_…` with a token from the API tokens page"
    )


def test_the_scheme_is_read_without_regard_to_case(demo_users: DemoUsers) -> None:
    _, secret = token_of(demo_users["analyst"])
    response = Client().get("/api/flows/", HTTP_AUTHORIZATION=f"BEARER {secret}")
    assert response.status_code == 200


def test_no_credentials_keep_the_apis_403(demo_users: DemoUsers) -> None:
    response = Client().get("/api/flows/")
    assert (response.status_code, response.json()["code"]) == (403, "not_authenticated")
    assert Client().get("/api/flows/", HTTP_AUTHORIZATION="").status_code == 403


@pytest.mark.parametrize("page", ["/runs/", "/flows/", "/inbox/", "/tokens/", "/admin/"])
def test_a_token_opens_no_page(demo_users: DemoUsers, page: str) -> None:
    _, secret = token_of(demo_users["admin"])
    response = call(secret, page)
    assert response.status_code == 302
    assert response["Location"].startswith("/login/") or response["Location"].startswith(
        "/admin/login/"
    )


def test_a_token_needs_no_csrf_token_and_a_session_still_does(demo: DemoUsers) -> None:
    _, secret = token_of(demo["analyst"])
    body = json.dumps({"name": "again"})
    scripted = Client(enforce_csrf_checks=True)
    response = scripted.post("/api/runs/", json.dumps({"flow": "staged-gathers", "input": {}}),
                             "application/json", HTTP_AUTHORIZATION=f"Bearer {secret}")  # fmt: skip
    assert response.status_code == 201, response.content

    browser = Client(enforce_csrf_checks=True)
    browser.force_login(demo["analyst"])
    assert browser.get("/tokens/").status_code == 200  # the page sets the CSRF cookie
    refused = browser.post("/api/tokens/", body, "application/json")
    assert (refused.status_code, refused.json()["detail"]) == (
        403, "CSRF Failed: CSRF token missing."
    )  # fmt: skip
    assert ApiToken.objects.count() == 1
    csrf = browser.cookies["csrftoken"].value
    made = browser.post("/api/tokens/", body, "application/json", HTTP_X_CSRFTOKEN=csrf)
    assert made.status_code == 201


def test_a_token_beside_a_session_cookie_is_who_calls(demo_users: DemoUsers) -> None:
    _, secret = token_of(demo_users["finance"])
    browser = Client()
    browser.force_login(demo_users["analyst"])
    listed = browser.get("/api/tokens/", HTTP_AUTHORIZATION=f"Bearer {secret}").json()
    assert [token["user"] for token in listed["results"]] == ["finance"]
    assert refusal(call("braid_" + "x" * 43, "/api/flows/", browser))[:2] == (401, "token.unknown")


def test_last_used_is_written_at_most_once_a_minute(
    demo_users: DemoUsers, django_assert_num_queries: DjangoAssertNumQueries
) -> None:
    token, secret = token_of(demo_users["analyst"])
    assert token.last_used_at is None
    before = timezone.now()
    with django_assert_num_queries(3):  # the token and its user, last used, the setting
        assert call(secret, "/api/me/notifications/").status_code == 200
    used = ApiToken.objects.get(pk=token.pk).last_used_at
    assert used is not None and before <= used <= timezone.now()
    with django_assert_num_queries(2):  # the token and its user, the setting: no write
        assert call(secret, "/api/me/notifications/").status_code == 200
    assert ApiToken.objects.get(pk=token.pk).last_used_at == used
    ApiToken.objects.filter(pk=token.pk).update(last_used_at=used - dt.timedelta(seconds=61))
    assert call(secret, "/api/me/notifications/").status_code == 200
    again = ApiToken.objects.get(pk=token.pk).last_used_at
    assert again is not None and again > used
