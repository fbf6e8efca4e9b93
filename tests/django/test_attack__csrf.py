"""CSRF on every state-changing endpoint under session auth.

The operations come from the OpenAPI schema, so a new endpoint is swept the day it lands:
without the token it must be refused with the API's JSON 403, with the token it must
reach its view. Known operations name the role that may use them and the exact status
their view answers; an operation without a row is still swept (any answer but the CSRF
refusal and a 5xx). The session pages that change state (login, logout) are swept too.
"""

import base64
import json
import uuid
from typing import Any

import pytest
from django.contrib.auth.models import Group, User
from django.test import Client
from drf_spectacular.generators import SchemaGenerator

from approvals.models import ApprovalRequest
from designer.models import Flow
from engine.models import Run
from tests.django.fixture_types import DemoUsers
from tests.django.test_permissions__sweep import GRAPH, start_invoice_run
from tokens import services as tokens
from tokens.models import ApiToken

pytestmark = pytest.mark.django_db

STATE_CHANGING = ("post", "put", "patch", "delete")
SCHEMA = SchemaGenerator().get_schema(request=None, public=True)
OPERATIONS = sorted(
    f"{method.upper()} {path}"
    for path, operations in SCHEMA["paths"].items()
    for method in operations
    if method in STATE_CHANGING
)
DRAFT = "csrf-draft"
# operation -> (role, body, status with the token); {slug}, {id} are filled per operation.
ROWS: dict[str, tuple[str, Any, int]] = {
    "POST /api/flows/": ("analyst", {"slug": "csrf-made", "draft": GRAPH}, 201),
    "PUT /api/flows/{slug}/": ("analyst", {"draft": GRAPH}, 200),
    "PATCH /api/flows/{slug}/": ("analyst", {"name": "Renamed"}, 200),
    "DELETE /api/flows/{slug}/": ("analyst", None, 204),
    "POST /api/flows/{slug}/publish/": ("analyst", None, 201),
    "POST /api/flows/{slug}/validate/": ("analyst", {}, 200),
    "POST /api/flows/{slug}/test-run/": ("analyst", {"input": {}}, 200),
    "POST /api/flows/import/": ("analyst", {"graph": GRAPH, "slug": "csrf-imported"}, 201),
    "POST /api/flows/import/check/": ("analyst", {"graph": GRAPH}, 200),
    "POST /api/runs/": ("analyst", {"flow": "staged-gathers", "input": {}}, 201),
    "POST /api/runs/{id}/cancel/": ("admin", {"reason": "csrf"}, 202),
    "POST /api/runs/{id}/retry/": ("admin", None, 409),  # reached the view: not failed
    "POST /api/runs/bulk/": ("admin", {"action": "retry", "ids": [str(uuid.UUID(int=1))]}, 200),
    "POST /api/approvals/{id}/decide/": ("finance", {"decision": "approve"}, 202),
    "POST /api/approvals/decide/": ("finance", {"ids": ["{id}"], "decision": "reject"}, 200),
    "POST /api/approvals/{id}/delegate/": ("finance", {"to": "finance2"}, 200),
    "POST /api/approvals/{id}/reassign/": ("admin", {"to": "legal"}, 200),
    "PUT /api/me/notifications/": ("finance", {"email_requests": False}, 200),
    "POST /api/tokens/": ("finance", {"name": "csrf"}, 201),
    "DELETE /api/tokens/{id}/": ("finance", None, 204),
}
REFUSED = {"code": "permission_denied", "detail": "CSRF Failed: CSRF token missing."}


def test_the_schema_lists_twenty_state_changing_operations() -> None:
    assert len(OPERATIONS) == 20
    assert sorted(ROWS) == OPERATIONS


@pytest.fixture
def targets(demo: DemoUsers) -> dict[str, str]:
    """A draft flow, a waiting run and its finance request; return what fills each path."""
    finance2 = User.objects.create_user("finance2", password="braid-finance2")
    finance2.groups.add(Group.objects.get(name="finance"))
    Flow.objects.create(slug=DRAFT, name="CSRF", owner=demo["analyst"], draft=GRAPH)
    analyst = Client()
    analyst.force_login(demo["analyst"])
    run = start_invoice_run(analyst)
    approval = ApprovalRequest.objects.get(run=run, node="fin")
    token, _ = tokens.issue(demo["finance"], "finance's", None)
    return {"slug": DRAFT, "run": str(run.pk), "approval": str(approval.pk), "token": str(token.pk)}


def request_for(operation: str, targets: dict[str, str]) -> tuple[str, str, str, str]:
    """Return (role, method, path, JSON body) of one operation on the fixture's objects."""
    method, template = operation.split(" ")
    role, body, _ = ROWS.get(operation, ("admin", {}, 0))
    kind = next((kind for kind in ("approval", "token") if f"/{kind}s/" in template), "run")
    ident = targets[kind]
    path = template.replace("{slug}", targets["slug"]).replace("{id}", ident)
    data = "" if body is None else json.dumps(body).replace('"{id}"', targets["approval"])
    return role, method, path, data


def session(user: User, enforce: bool = True) -> tuple[Client, str]:
    """Return a logged-in client that enforces CSRF, and its token (from a page's cookie)."""
    client = Client(enforce_csrf_checks=enforce)
    client.force_login(user)
    assert client.get("/flows/").status_code == 200
    return client, client.cookies["csrftoken"].value


@pytest.mark.parametrize("operation", OPERATIONS)
def test_a_state_changing_call_without_the_token_is_refused_and_changes_nothing(
    operation: str, targets: dict[str, str], demo: DemoUsers
) -> None:
    role, method, path, data = request_for(operation, targets)
    client, _ = session(User.objects.get(username=role))
    before = counts()
    response = client.generic(method, path, data, "application/json")
    assert (response.status_code, response.json()) == (403, REFUSED)
    wrong = client.generic(method, path, data, "application/json", HTTP_X_CSRFTOKEN="x" * 32)
    assert wrong.status_code == 403
    assert wrong.json()["code"] == "permission_denied"
    assert wrong.json()["detail"].startswith("CSRF Failed: CSRF token")
    assert counts() == before


@pytest.mark.parametrize("operation", OPERATIONS)
def test_a_state_changing_call_with_the_token_reaches_its_view(
    operation: str, targets: dict[str, str], demo: DemoUsers
) -> None:
    role, method, path, data = request_for(operation, targets)
    client, token = session(User.objects.get(username=role))
    response = client.generic(method, path, data, "application/json", HTTP_X_CSRFTOKEN=token)
    expected = ROWS.get(operation, ("", None, 0))[2]
    if expected:
        assert response.status_code == expected, response.content
    else:  # an operation this table does not know yet: only "not refused, not broken"
        assert response.status_code < 500 and response.content != json.dumps(REFUSED).encode()


def test_basic_auth_needs_no_token_because_a_browser_never_sends_it_on_its_own(
    demo: DemoUsers,
) -> None:
    client = Client(enforce_csrf_checks=True)
    token = base64.b64encode(b"analyst:braid-analyst").decode()
    response = client.post(
        "/api/flows/import/check/",
        json.dumps({"graph": GRAPH}),
        "application/json",
        HTTP_AUTHORIZATION=f"Basic {token}",
    )
    assert response.status_code == 200


def test_login_and_logout_refuse_a_post_without_the_token(demo: DemoUsers) -> None:
    client = Client(enforce_csrf_checks=True)
    login = client.post("/login/", {"username": "analyst", "password": "braid-analyst"})
    assert login.status_code == 403
    assert "_auth_user_id" not in client.session
    token = client.get("/login/").cookies["csrftoken"].value
    form = {"username": "analyst", "password": "braid-analyst", "csrfmiddlewaretoken": token}
    login = client.post("/login/", form)
    assert (login.status_code, login["Location"]) == (302, "/flows/")  # where an analyst lands

    logout = client.post("/logout/")
    assert logout.status_code == 403
    assert client.get("/api/flows/").status_code == 200  # still logged in
    token = client.cookies["csrftoken"].value
    logout = client.post("/logout/", {"csrfmiddlewaretoken": token})
    assert (logout.status_code, logout["Location"]) == (302, "/login/")
    assert client.get("/api/flows/").status_code == 403


def test_the_login_page_never_redirects_to_another_site(demo: DemoUsers) -> None:
    client = Client()
    for target in (
        "https://evil.example/",
        "//evil.example/",
        "/\\evil.example/",
        "javascript:window.__xss=1",
        "https:evil.example",
        " //evil.example/",
    ):
        response = client.post(
            "/login/", {"username": "analyst", "password": "braid-analyst", "next": target}
        )
        assert (response.status_code, response["Location"]) == (302, "/flows/"), target
        client.post("/logout/")
    page = client.get("/login/", {"next": '"><script>window.__xss=1</script>'}).content.decode()
    assert "<script>window.__xss" not in page
    assert 'value="&quot;&gt;&lt;script&gt;window.__xss=1&lt;/script&gt;"' in page


def counts() -> tuple[int, int, int, int, int]:
    """Count what a state-changing call could change: flows, runs, open requests, statuses,
    unrevoked API tokens."""
    return (
        Flow.objects.count(),
        Run.objects.count(),
        ApprovalRequest.objects.filter(status="open").count(),
        Run.objects.exclude(status="waiting").count(),
        ApiToken.objects.filter(revoked_at__isnull=True).count(),
    )
