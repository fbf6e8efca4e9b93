"""Personal API tokens through /api/tokens/: made with the secret shown once and only its
hash stored, listed, expiring, revoked; admins see and revoke anyone's."""

import base64
import datetime as dt
import hashlib
import json
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.utils import timezone
from pytest_django import Settings

from tests.django.fixture_types import ClientFor, DemoUsers, TestResponse
from tokens.models import ApiToken

pytestmark = pytest.mark.django_db

LISTED = ["id", "name", "prefix", "user", "created_at", "expires_at", "last_used_at", "expired"]


def post(client: Client, body: object, headers: dict[str, str] | None = None) -> TestResponse:
    """POST a body to /api/tokens/."""
    return client.post("/api/tokens/", json.dumps(body), "application/json", headers=headers)


def make(client: Client, name: str, **expiry: object) -> dict[str, Any]:
    """Make a token through the API; return the answer's body."""
    response = post(client, {"name": name, **expiry})
    assert response.status_code == 201, response.content
    body: dict[str, Any] = response.json()
    return body


def bearer(secret: str) -> dict[str, str]:
    """Return the headers of a token-authenticated call."""
    return {"Authorization": f"Bearer {secret}"}


def basic(username: str, password: str) -> dict[str, str]:
    """Return the headers of a Basic-auth call."""
    pair = base64.b64encode(f"{username}:{password}".encode()).decode()
    return {"Authorization": f"Basic {pair}"}


def names(response: TestResponse) -> list[str]:
    """Return the names of a token list, in its order."""
    assert response.status_code == 200, response.content
    return [token["name"] for token in response.json()["results"]]


def test_a_new_token_shows_its_secret_once_and_stores_only_its_sha256(
    client_for: ClientFor,
) -> None:
    client = client_for("analyst")
    response = post(client, {"name": "nightly export"})
    assert response.status_code == 201
    assert response["Cache-Control"] == "no-store"
    body = response.json()
    secret = body.pop("token")
    assert sorted(body) == sorted(LISTED)
    assert (body["name"], body["user"], body["expires_at"], body["last_used_at"]) == (
        "nightly export", "analyst", None, None,
    )  # fmt: skip
    assert body["expired"] is False
    assert secret.startswith("braid_") and len(secret) == 49
    assert body["prefix"] == secret[:14]

    row = ApiToken.objects.values().get(pk=body["id"])
    assert row["digest"] == hashlib.sha256(secret.encode()).hexdigest()
    assert not [column for column, value in row.items() if secret[6:20] in str(value)]
    listed = client.get("/api/tokens/").json()["results"]
    assert listed == [body]


def test_each_token_has_its_own_secret(client_for: ClientFor) -> None:
    client = client_for("analyst")
    secrets = {make(client, f"t{n}")["token"] for n in range(5)}
    assert len(secrets) == 5
    assert ApiToken.objects.values("digest").distinct().count() == 5


def test_an_expiry_in_days_or_at_a_time_is_kept(client_for: ClientFor) -> None:
    client = client_for("finance")
    before = timezone.now()
    week = make(client, "week", expires_in_days=7)
    after = timezone.now()
    expires = dt.datetime.fromisoformat(week["expires_at"])
    assert before + dt.timedelta(days=7) <= expires <= after + dt.timedelta(days=7)
    dated = make(client, "dated", expires_at="2030-01-02T03:04:05Z")
    assert dated["expires_at"] == "2030-01-02T03:04:05Z"
    assert ApiToken.objects.get(pk=dated["id"]).expires_at == dt.datetime(
        2030, 1, 2, 3, 4, 5, tzinfo=dt.UTC
    )


@pytest.mark.parametrize(
    ("body", "errors"),
    [
        ({}, {"name": ["This field is required."]}),
        ({"name": ""}, {"name": ["This field may not be blank."]}),
        ({"name": "x" * 101}, {"name": ["Ensure this field has no more than 100 characters."]}),
        ({"name": "t", "expires_in_days": 0},
         {"expires_in_days": ["Ensure this value is greater than or equal to 1."]}),
        ({"name": "t", "expires_in_days": 3651},
         {"expires_in_days": ["Ensure this value is less than or equal to 3650."]}),
        ({"name": "t", "expires_at": "2001-01-01T00:00:00Z"},
         {"expires_at": ["must be in the future"]}),
        ({"name": "t", "expires_at": "2999-01-01T00:00:00Z"},
         {"expires_at": ["must be within 3,650 days"]}),
        ({"name": "t", "expires_in_days": 1, "expires_at": "2030-01-01T00:00:00Z"},
         {"expires_at": ["give expires_in_days or expires_at, not both"]}),
    ],
)  # fmt: skip
def test_a_bad_new_token_is_refused_naming_its_field(
    client_for: ClientFor, body: dict[str, object], errors: dict[str, list[str]]
) -> None:
    response = post(client_for("analyst"), body)
    assert (response.status_code, response.json()) == (400, errors)
    assert ApiToken.objects.count() == 0


def test_the_list_is_the_callers_own_newest_first_expired_marked_revoked_gone(
    client_for: ClientFor, demo_users: DemoUsers
) -> None:
    analyst, finance = client_for("analyst"), client_for("finance")
    make(finance, "finance's")
    first, second, third = (make(analyst, name) for name in ("first", "second", "third"))
    ApiToken.objects.filter(pk=first["id"]).update(
        expires_at=timezone.now() - dt.timedelta(seconds=1)
    )
    assert analyst.delete(f"/api/tokens/{second['id']}/").status_code == 204

    listed = analyst.get("/api/tokens/").json()["results"]
    assert [(t["name"], t["expired"]) for t in listed] == [("third", False), ("first", True)]
    assert names(finance.get("/api/tokens/")) == ["finance's"]
    assert ApiToken.objects.get(pk=second["id"]).revoked_by == demo_users["analyst"]
    assert third["id"] in {t["id"] for t in listed}


def test_revoking_twice_or_another_persons_token_is_a_404_that_changes_nothing(
    client_for: ClientFor,
) -> None:
    analyst, finance = client_for("analyst"), client_for("finance")
    theirs = make(finance, "finance's")
    response = analyst.delete(f"/api/tokens/{theirs['id']}/")
    assert (response.status_code, response.json()["code"]) == (404, "not_found")
    assert ApiToken.objects.get(pk=theirs["id"]).revoked_at is None
    assert finance.delete(f"/api/tokens/{theirs['id']}/").status_code == 204
    assert finance.delete(f"/api/tokens/{theirs['id']}/").status_code == 404
    assert analyst.delete("/api/tokens/1234567890123456789/").status_code == 404
    assert analyst.delete("/api/tokens/abc/").status_code == 404


def test_only_admins_list_others_tokens(client_for: ClientFor) -> None:
    analyst, admin = client_for("analyst"), client_for("admin")
    make(client_for("finance"), "finance's")
    make(analyst, "analyst's")
    make(admin, "admin's")
    for query in ("?all=true", "?user=finance"):
        refused = analyst.get(f"/api/tokens/{query}")
        assert (refused.status_code, refused.json()) == (403, {
            "code": "permission_denied",
            "detail": "Your role (analyst) may not list and revoke anyone's API tokens.",
        })  # fmt: skip
    assert names(analyst.get("/api/tokens/?user=analyst")) == ["analyst's"]
    assert names(admin.get("/api/tokens/")) == ["admin's"]
    assert names(admin.get("/api/tokens/?all=true")) == ["admin's", "analyst's", "finance's"]
    assert names(admin.get("/api/tokens/?user=finance")) == ["finance's"]
    assert names(admin.get("/api/tokens/?user=nobody-at-all")) == []
    bad = admin.get("/api/tokens/?all=yes")
    assert (bad.status_code, bad.json()) == (400, {"all": "true or false"})


def test_an_admin_revokes_anyones_token(client_for: ClientFor, demo_users: DemoUsers) -> None:
    theirs = make(client_for("finance"), "finance's")
    assert client_for("admin").delete(f"/api/tokens/{theirs['id']}/").status_code == 204
    row = ApiToken.objects.get(pk=theirs["id"])
    assert row.revoked_by == demo_users["admin"]
    refused = Client().get("/api/flows/", headers=bearer(theirs["token"]))
    assert (refused.status_code, refused.json()["code"]) == (401, "token.revoked")


def test_a_token_may_not_make_tokens_but_may_revoke_itself(client_for: ClientFor) -> None:
    made = make(client_for("analyst"), "script")
    script = Client()
    response = post(script, {"name": "successor"}, bearer(made["token"]))
    assert (response.status_code, response.json()) == (403, {
        "code": "token.not_with_token",
        "detail": "a token may not make tokens; make one while logged in, or with Basic auth",
    })  # fmt: skip
    assert ApiToken.objects.count() == 1
    assert names(script.get("/api/tokens/", headers=bearer(made["token"]))) == ["script"]
    assert (
        script.delete(f"/api/tokens/{made['id']}/", headers=bearer(made["token"])).status_code
        == 204
    )
    assert script.get("/api/tokens/", headers=bearer(made["token"])).status_code == 401


def test_basic_auth_makes_a_token_for_a_script(demo_users: DemoUsers) -> None:
    response = post(Client(), {"name": "from curl"}, basic("legal", "braid-legal"))
    assert response.status_code == 201
    assert ApiToken.objects.get().user == demo_users["legal"]


def test_one_person_holds_at_most_the_configured_number_of_tokens(
    client_for: ClientFor, settings: Settings
) -> None:
    settings.BRAID_TOKENS_PER_USER = 2
    client = client_for("analyst")
    first = make(client, "one")
    make(client, "two")
    response = post(client, {"name": "three"})
    assert (response.status_code, response.json()) == (409, {
        "code": "token.limit",
        "detail": "you have 2 tokens, the most one person may hold; revoke one first",
    })  # fmt: skip
    assert client.delete(f"/api/tokens/{first['id']}/").status_code == 204
    assert make(client, "three")["name"] == "three"


def test_the_django_admin_lists_and_revokes_tokens(
    client_for: ClientFor, demo_users: DemoUsers
) -> None:
    made = make(client_for("finance"), "finance's")
    admin = client_for("admin")
    page = admin.get("/admin/tokens/apitoken/")
    assert page.status_code == 200
    assert made["prefix"] in page.content.decode()
    assert admin.get("/admin/tokens/apitoken/add/").status_code == 403
    action = {"action": "revoke", "_selected_action": [str(made["id"])]}
    assert admin.post("/admin/tokens/apitoken/", action).status_code == 302
    row = ApiToken.objects.get(pk=made["id"])
    assert (row.revoked_by, row.revoked_at is not None) == (demo_users["admin"], True)
    assert User.objects.get(username="finance").api_tokens.count() == 1
