"""The permission table (web/permissions.py) swept over every route and every role.

Each row is one request; each column the exact status a role gets. A route that the URL
resolver serves but this table does not name fails the first test: a new route cannot
ship without deciding who may use it. The websocket routes have their own table, checked
the same way against braid/routing.py.
"""

import asyncio
import json
import re
from typing import Any

import pytest
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import User
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver

from approvals.models import ApprovalRequest
from braid.asgi import application
from braid.routing import websocket_urlpatterns
from engine.models import Run
from tests.django.durable_driver import drain
from tests.django.fixture_types import DemoUsers
from tests.django.socket_helpers import turned_away
from tokens import services as tokens

pytestmark = pytest.mark.django_db

ROLES = ("anonymous", "nobody", "analyst", "finance", "admin")
GRAPH = {
    "format": "braid.graph/1",
    "name": "Swept",
    "nodes": [{"id": "start", "type": "start"}, {"id": "done", "type": "end"}],
    "edges": [{"source": "start", "target": "done"}],
}
NO_RUN = "00000000-0000-0000-0000-000000000001"  # a bulk action refuses it in its results
# (method, path, body, {role: status}); {run}, {approval} and {role} are filled in. Rows run
# in order, every role in turn, so the run is cancelled only at the end.
ANON, LOGGED = 302, 200
ROWS: list[tuple[str, str, Any, tuple[int, int, int, int, int]]] = [
    ("GET", "/", None, (302, 302, 302, 302, 302)),
    ("GET", "/login/", None, (200, 302, 302, 302, 302)),
    ("GET", "/favicon.ico", None, (200, 200, 200, 200, 200)),  # no login: every page asks
    ("GET", "/logout/", None, (302, 405, 405, 405, 405)),
    # Off unless BRAID_METRICS_TOKEN is set, and then for the token, never for a login
    # (tests/django/test_metrics__endpoint.py).
    ("GET", "/metrics", None, (404, 404, 404, 404, 404)),
    ("GET", "/flows/", None, (ANON, LOGGED, LOGGED, LOGGED, LOGGED)),
    ("GET", "/flows/invoice-sign-off/", None, (ANON, LOGGED, LOGGED, LOGGED, LOGGED)),
    ("GET", "/runs/", None, (ANON, LOGGED, LOGGED, LOGGED, LOGGED)),
    ("GET", "/runs/{run}/", None, (ANON, 404, 200, 200, 200)),
    ("GET", "/inbox/", None, (ANON, LOGGED, LOGGED, LOGGED, LOGGED)),
    ("GET", "/inbox/notifications/", None, (ANON, LOGGED, LOGGED, LOGGED, LOGGED)),
    ("GET", "/tokens/", None, (ANON, LOGGED, LOGGED, LOGGED, LOGGED)),
    ("GET", "/admin/", None, (302, 302, 302, 302, 200)),
    ("GET", "/api/", None, (403, 200, 200, 200, 200)),
    ("GET", "/api/schema/", None, (403, 200, 200, 200, 200)),
    ("GET", "/api/docs/", None, (403, 200, 200, 200, 200)),
    ("GET", "/api/flows/", None, (403, 200, 200, 200, 200)),
    ("POST", "/api/flows/", {"slug": "made-{role}", "draft": GRAPH}, (403, 403, 201, 403, 201)),
    ("POST", "/api/flows/import/", {"graph": GRAPH, "slug": "imported-{role}"},
     (403, 403, 201, 403, 201)),
    ("POST", "/api/flows/import/check/", {"graph": GRAPH}, (403, 403, 200, 403, 200)),
    ("GET", "/api/flows/invoice-sign-off/", None, (403, 200, 200, 200, 200)),
    ("PATCH", "/api/flows/made-analyst/", {"name": "Renamed"}, (403, 403, 200, 403, 200)),
    ("PUT", "/api/flows/made-analyst/", {"draft": GRAPH}, (403, 403, 200, 403, 200)),
    ("GET", "/api/flows/invoice-sign-off/export/", None, (403, 200, 200, 200, 200)),
    ("POST", "/api/flows/invoice-sign-off/validate/", {}, (403, 403, 200, 403, 200)),
    ("POST", "/api/flows/b-and-d-or-e/test-run/", {"input": {"urgent": True}},
     (403, 403, 200, 403, 200)),
    ("POST", "/api/flows/made-analyst/publish/", None, (403, 403, 201, 403, 200)),
    ("GET", "/api/flows/invoice-sign-off/versions/", None, (403, 200, 200, 200, 200)),
    ("GET", "/api/flows/invoice-sign-off/versions/1/", None, (403, 200, 200, 200, 200)),
    ("DELETE", "/api/flows/invoice-sign-off/", None, (403, 403, 409, 403, 409)),
    ("DELETE", "/api/flows/imported-{role}/", None, (403, 403, 204, 403, 204)),
    ("GET", "/api/actions/", None, (403, 200, 200, 200, 200)),
    ("GET", "/api/runs/", None, (403, 200, 200, 200, 200)),
    ("POST", "/api/runs/", {"flow": "staged-gathers", "input": {}}, (403, 403, 201, 201, 201)),
    ("GET", "/api/runs/{run}/", None, (403, 404, 200, 200, 200)),
    ("GET", "/api/runs/{run}/tree/", None, (403, 404, 200, 200, 200)),
    ("GET", "/api/runs/{run}/trace/", None, (403, 404, 200, 200, 200)),
    ("GET", "/api/runs/{run}/writes/?node=start", None, (403, 404, 200, 200, 200)),
    ("GET", "/api/runs/{run}/executions/", None, (403, 404, 200, 200, 200)),
    ("GET", "/api/runs/{run}/execution/?id=root:1", None, (403, 404, 200, 200, 200)),
    ("GET", "/api/approvals/", None, (403, 200, 200, 200, 200)),
    ("GET", "/api/approvals/{approval}/", None, (403, 404, 404, 200, 200)),
    ("GET", "/api/approvals/count/", None, (403, 200, 200, 200, 200)),
    ("GET", "/api/me/notifications/", None, (403, 200, 200, 200, 200)),
    ("PUT", "/api/me/notifications/", {"email_requests": True}, (403, 200, 200, 200, 200)),
    ("GET", "/api/tokens/", None, (403, 200, 200, 200, 200)),
    ("GET", "/api/tokens/?all=true", None, (403, 403, 403, 403, 200)),
    ("POST", "/api/tokens/", {"name": "swept"}, (403, 201, 201, 201, 201)),
    ("DELETE", "/api/tokens/{token}/", None, (403, 404, 404, 404, 204)),  # legal's token
    ("GET", "/api/approvals/?status=closed", None, (403, 200, 200, 200, 200)),
    ("POST", "/api/approvals/{approval}/delegate/", {"to": "legal"}, (403, 404, 404, 400, 403)),
    ("POST", "/api/approvals/decide/", {"ids": [999999], "decision": "reject"},
     (403, 200, 200, 200, 200)),
    ("POST", "/api/approvals/{approval}/decide/", {"decision": "approve"},
     (403, 404, 404, 202, 403)),
    ("POST", "/api/approvals/{approval}/reassign/", {"to": "legal"}, (403, 403, 403, 403, 200)),
    ("POST", "/api/runs/{run}/retry/", None, (403, 403, 403, 403, 409)),
    ("POST", "/api/runs/bulk/", {"action": "retry", "ids": [NO_RUN]}, (403, 403, 403, 403, 200)),
    ("POST", "/api/runs/{run}/cancel/", {"reason": "swept"}, (403, 403, 403, 403, 202)),
]  # fmt: skip


# The sockets (braid/routing.py): "open" when the socket accepts and sends its first message,
# else the close code (4401 not logged in, 4403 not allowed, 4404 no such socket). The last
# row stands for the route that refuses every path the others do not serve.
OPEN = "open"
UNROUTED = "/ws/nothing/"
SOCKET_ROWS: list[tuple[str, tuple[int | str, int | str, int | str, int | str, int | str]]] = [
    ("/ws/runs/{run}/", (4401, 4403, OPEN, OPEN, OPEN)),
    ("/ws/runs/", (4401, OPEN, OPEN, OPEN, OPEN)),
    ("/ws/inbox/", (4401, OPEN, OPEN, OPEN, OPEN)),
    (UNROUTED, (4404, 4404, 4404, 4404, 4404)),
]


def canonical_routes() -> set[str]:
    """Return every route the resolver serves, without format suffixes, as a path shape."""
    found: set[str] = set()

    def walk(patterns: list[Any], prefix: str) -> None:
        for pattern in patterns:
            text = prefix + str(pattern.pattern)
            if isinstance(pattern, URLResolver):
                if text == "admin/":
                    found.add("admin/")
                    continue
                walk(pattern.url_patterns, text)
            elif isinstance(pattern, URLPattern) and "format" not in text:
                found.add(shape(text))

    walk(get_resolver().url_patterns, "")
    return found


def shape(text: str) -> str:
    """Return a route with each parameter as {}: `api/^runs/(?P<pk>[^/.]+)/$` -> api/runs/{}/."""
    text = re.sub(r"\(\?P<\w+>[^)]*\)|<[\w:]+>", "{}", text)
    return text.replace("^", "").replace("$", "")


def test_every_route_has_a_row_in_the_table() -> None:
    paths = (path.split("?")[0].lstrip("/") for _, path, _, _ in ROWS)
    swept = {shape(re.sub(r"/[^/]*[{-][^/]*/", "/{}/", path)) for path in paths}
    swept |= {"flows/{}/", "api/flows/{}/versions/{}/", "healthz", "admin/"}
    missing = canonical_routes() - swept - {""}
    assert sorted(missing) == []


@pytest.fixture
def clients(demo: DemoUsers) -> dict[str, Client]:
    """A client per role; `nobody` is logged in and in no group."""
    nobody = User.objects.create_user("nobody", password="braid-nobody-pw")
    users = {**demo, "nobody": nobody}
    result = {"anonymous": Client()}
    for role in ROLES[1:]:
        result[role] = Client()
        result[role].force_login(users[role])
    return result


def test_each_role_gets_the_tables_status_on_every_route(clients: dict[str, Client]) -> None:
    run = start_invoice_run(clients["analyst"])
    approval = ApprovalRequest.objects.get(run=run, node="fin")
    token, _ = tokens.issue(User.objects.get(username="legal"), "legal's", None)
    got, expected = {}, {}
    for method, template, body, statuses in ROWS:
        for role, status in zip(ROLES, statuses, strict=True):
            path = template.format(run=run.pk, approval=approval.pk, role=role, token=token.pk)
            data = json.dumps(body).replace("{role}", role) if body is not None else None
            response = clients[role].generic(method, path, data or "", "application/json")
            got[(method, template, role)] = response.status_code
            expected[(method, template, role)] = status
    assert {k: v for k, v in got.items() if v != expected[k]} == {}


def start_invoice_run(client: Client) -> Run:
    """Start an invoice run as the analyst and drive it to its two approvals."""
    body = {
        "flow": "invoice-sign-off",
        "input": {"invoice": {"id": "INV-1", "amount": 900, "vendor": "Acme"}},
    }
    response = client.post("/api/runs/", json.dumps(body), content_type="application/json")
    assert response.status_code == 201, response.content
    run = drain(Run.objects.get(pk=response.json()["id"]))
    assert run.status == "waiting"
    return run


def test_every_socket_route_has_a_row_in_the_table() -> None:
    served = {shape(str(pattern.pattern)) for pattern in websocket_urlpatterns}
    swept = {shape(re.sub(r"\{\w+\}", "<x>", path.lstrip("/"))) for path, _ in SOCKET_ROWS}
    assert served == swept - {shape(UNROUTED.lstrip("/"))} | {""}


@pytest.mark.django_db(transaction=True)
def test_each_role_gets_the_tables_answer_on_every_socket(demo: DemoUsers) -> None:
    nobody = User.objects.create_user("nobody", password="braid-nobody-pw")
    users = {**demo, "nobody": nobody}
    analyst = Client()
    analyst.force_login(users["analyst"])
    run = start_invoice_run(analyst)
    cookies: dict[str, str | None] = {"anonymous": None}
    for role in ROLES[1:]:
        client = Client()
        client.force_login(users[role])
        cookies[role] = client.cookies["sessionid"].value

    async def answer(path: str, session: str | None) -> int | str | None:
        headers = [(b"origin", b"http://127.0.0.1:8000")]
        headers += [] if session is None else [(b"cookie", f"sessionid={session}".encode())]
        code = await turned_away(WebsocketCommunicator(application, path, headers=headers))
        return OPEN if code == "open" else code

    async def sweep() -> dict[tuple[str, str], int | str | None]:
        return {
            (template, role): await answer(template.format(run=run.pk), cookies[role])
            for template, _ in SOCKET_ROWS
            for role in ROLES
        }

    got = asyncio.run(sweep())
    expected = {
        (template, role): status
        for template, statuses in SOCKET_ROWS
        for role, status in zip(ROLES, statuses, strict=True)
    }
    assert {key: value for key, value in got.items() if value != expected[key]} == {}
