"""Hostile input to the API: each gets JSON with the right status, and nothing is stored."""

import json
import logging
from typing import Any

import pytest
from django.contrib.sessions.backends.db import SessionStore
from django.db import InterfaceError, OperationalError
from django.test import Client

from designer.models import Flow, FlowVersion
from engine.models import Run
from runs import services
from tests.django.fixture_types import ClientFor, DemoUsers

pytestmark = pytest.mark.django_db

LONG_SUM = "+".join(["1"] * 30_000)


def long_flow(slug: str = "long") -> dict[str, object]:
    """A flow whose set node holds a 30,000-term sum (it killed the server before)."""
    return {
        "format": "braid.graph/1",
        "name": slug,
        "state": {"n": {"reducer": "overwrite"}},
        "nodes": [
            {"id": "start", "type": "start"},
            {"id": "calc", "type": "set", "values": {"n": LONG_SUM}},
            {"id": "done", "type": "end"},
        ],
        "edges": [{"source": "start", "target": "calc"}, {"source": "calc", "target": "done"}],
    }


def stored() -> tuple[int, int, int]:
    """Count flows, versions and runs."""
    return Flow.objects.count(), FlowVersion.objects.count(), Run.objects.count()


@pytest.mark.parametrize(
    ("condition", "message"),
    [
        ("note__regex:^(a+)+$", "'note__regex' is not a state field of any published flow"),
        ("note__contains:x", "'note__contains' is not a state field of any published flow"),
        ("regex:^(a+)+$", "'regex' is not a state field of any published flow"),
        ("count]:3", "use field:value with a state field name, e.g. state=decision:approved"),
        ("oops", "use field:value with a state field name, e.g. state=decision:approved"),
    ],
)
def test_a_state_filter_on_anything_but_a_declared_field_is_a_400(
    demo: DemoUsers, client_for: ClientFor, condition: str, message: str
) -> None:
    response = client_for("admin").get("/api/runs/", {"state": condition})
    assert (response.status_code, response.json()) == (400, {"state": message})


def test_a_state_filter_names_the_flow_that_lacks_the_field(
    demo: DemoUsers, client_for: ClientFor
) -> None:
    response = client_for("admin").get("/api/runs/", {"state": "count:3", "flow": "b-and-d-or-e"})
    assert (response.status_code, response.json()) == (
        400,
        {"state": "'count' is not a state field of flow 'b-and-d-or-e'"},
    )


def test_a_state_filter_compares_json_values_for_equality_only(
    demo: DemoUsers, client_for: ClientFor
) -> None:
    admin = client_for("admin")
    for condition in ("count:3", 'count:"3"', "count:[3]"):
        response = admin.get("/api/runs/", {"state": condition})
        expected = 400 if condition.endswith("]") else 200
        assert response.status_code == expected, condition


@pytest.mark.parametrize(
    ("query", "field", "message"),
    [
        ({"limit": "1" * 30}, "limit", "must be a whole number from 1 to 500"),
        ({"limit": "0"}, "limit", "must be a whole number from 1 to 500"),
        ({"limit": "-5"}, "limit", "must be a whole number from 1 to 500"),
        ({"offset": "9" * 20}, "offset", "must be a whole number from 0 to 1,000,000"),
        ({"offset": "1e3"}, "offset", "must be a whole number from 0 to 1,000,000"),
        ({"created_after": "2026-13-45T99:99"}, "created_after",
         "not an ISO 8601 time: '2026-13-45T99:99'"),
        ({"created_before": "yesterday"}, "created_before", "not an ISO 8601 time: 'yesterday'"),
    ],
)  # fmt: skip
def test_malformed_paging_and_dates_are_a_400_naming_the_field(
    demo: DemoUsers, client_for: ClientFor, query: dict[str, str], field: str, message: str
) -> None:
    response = client_for("admin").get("/api/runs/", query)
    assert (response.status_code, response.json()) == (400, {field: message})


def test_a_plain_date_filters_from_midnight_utc(demo: DemoUsers, client_for: ClientFor) -> None:
    response = client_for("admin").get("/api/runs/", {"created_after": "2000-01-01"})
    assert (response.status_code, response.json()["count"]) == (200, 0)


def test_a_thirty_megabyte_body_is_a_json_413_and_nothing_is_stored(
    demo: DemoUsers, client_for: ClientFor
) -> None:
    before = stored()
    body = json.dumps({"slug": "huge", "draft": {"pad": "x" * (30 * 1024 * 1024)}})
    response = client_for("analyst").post("/api/flows/", body, content_type="application/json")
    assert (response.status_code, response.json()) == (
        413,
        {"code": "request.too_large", "detail": "the request body is over the limit of "
         "8,388,608 bytes"},
    )  # fmt: skip
    assert stored() == before


def start_raising(
    error: Exception,
    client_for: ClientFor,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> Any:
    """POST a start whose view raises `error`, the API's log captured from WARNING up."""

    def raising(*args: object, **kwargs: object) -> None:
        raise error

    monkeypatch.setattr(services, "latest_version", raising)
    with caplog.at_level(logging.WARNING, logger="braid.api"):
        return client_for("analyst").post(
            "/api/runs/", {"flow": "staged-gathers"}, content_type="application/json"
        )


def test_an_unexpected_error_in_a_view_is_a_json_500_with_a_request_id(
    demo: DemoUsers,
    client_for: ClientFor,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    before = stored()
    response = start_raising(RuntimeError("secret internals"), client_for, monkeypatch, caplog)
    body = response.json()
    assert response.status_code == 500
    assert body == {
        "code": "server.error",
        "detail": f"an unexpected error occurred; the log has it as request {body['request_id']}",
        "request_id": body["request_id"],
    }
    assert len(body["request_id"]) == 32
    assert "secret" not in response.content.decode()
    logged = [r for r in caplog.records if r.name == "braid.api"]
    assert [r.getMessage() for r in logged] == [
        f"request {body['request_id']} to /api/runs/ failed"
    ]
    assert logged[0].exc_info is not None
    assert stored() == before


@pytest.mark.parametrize(
    "error",
    [
        OperationalError('connection failed: FATAL:  database "braid" is not currently '
                         "accepting connections"),
        InterfaceError("connection already closed"),
    ],
    ids=["refused", "closed"],
)  # fmt: skip
def test_a_database_that_cannot_answer_is_a_json_503_to_retry(
    demo: DemoUsers,
    client_for: ClientFor,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    error: Exception,
) -> None:
    before = stored()
    response = start_raising(error, client_for, monkeypatch, caplog)
    body = response.json()
    assert (response.status_code, response["Retry-After"]) == (503, "2")
    assert body == {
        "code": "server.unavailable",
        "detail": "the database cannot be reached or gave the transaction up; try again in 2 s "
        f"(the log has it as request {body['request_id']})",
        "request_id": body["request_id"],
    }
    assert "accepting" not in response.content.decode()
    assert [(r.levelname, r.getMessage()) for r in caplog.records if r.name == "braid.api"] == [
        ("WARNING", f"request {body['request_id']} to /api/runs/: the database is unavailable: "
                    f"{error}"),
    ]  # fmt: skip
    assert stored() == before


@pytest.mark.parametrize(
    ("path", "kind"), [("/api/runs/", "json"), ("/runs/", "page")], ids=["api", "page"]
)
def test_a_database_that_fails_before_any_view_is_a_503_too(
    demo: DemoUsers,
    client_for: ClientFor,
    monkeypatch: pytest.MonkeyPatch,
    path: str,
    kind: str,
) -> None:
    """The session is read in the middleware, before any view: a database restart failed
    it there, where neither DRF nor the API's middleware sees the exception."""
    client = client_for("admin")
    client.raise_request_exception = False

    def away(*args: object, **kwargs: object) -> None:
        raise OperationalError("connection failed: server closed the connection unexpectedly")

    monkeypatch.setattr(SessionStore, "load", away)
    response = client.get(path)
    assert (response.status_code, response["Retry-After"]) == (503, "2")
    if kind == "json":
        body = response.json()
        assert body == {
            "code": "server.unavailable",
            "detail": "the database cannot be reached or gave the transaction up; try again "
            f"in 2 s (the log has it as request {body['request_id']})",
            "request_id": body["request_id"],
        }
        assert body["request_id"] == response["X-Request-ID"]
    else:
        page = response.content.decode()
        assert "<h1>Braid cannot reach its database</h1>" in page
        assert "server closed" not in page


def test_anything_else_that_fails_before_any_view_is_a_500_in_the_apis_shape(
    demo: DemoUsers, client_for: ClientFor, monkeypatch: pytest.MonkeyPatch
) -> None:
    client = client_for("admin")
    client.raise_request_exception = False

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("secret internals")

    monkeypatch.setattr(SessionStore, "load", broken)
    api = client.get("/api/runs/")
    assert (api.status_code, api.json()["code"], api.has_header("Retry-After")) == (
        500, "server.error", False,
    )  # fmt: skip
    page = client.get("/runs/")
    assert page.status_code == 500 and "<h1>Something went wrong</h1>" in page.content.decode()
    assert "secret" not in api.content.decode() + page.content.decode()


def test_an_unknown_api_url_is_a_json_404(client_for: ClientFor, demo: DemoUsers) -> None:
    response = client_for("admin").get("/api/nothing-here/")
    assert (response.status_code, response.json()) == (
        404,
        {"code": "not_found", "detail": "no API resource at /api/nothing-here/"},
    )


def test_an_anonymous_api_call_is_a_json_403_with_a_code() -> None:
    response = Client().get("/api/runs/")
    assert response.status_code in (401, 403)
    assert response.json() == {
        "code": "not_authenticated",
        "detail": "Authentication credentials were not provided.",
    }


def test_a_thirty_thousand_term_expression_is_refused_everywhere_with_a_report(
    demo: DemoUsers, client_for: ClientFor
) -> None:
    analyst = client_for("analyst")
    before = stored()
    imported = analyst.post(
        "/api/flows/import/",
        {"graph": long_flow(), "publish": True},
        content_type="application/json",
    )
    assert imported.status_code == 400
    assert [e["code"] for e in imported.json()["errors"]] == ["expression.limit"]
    assert stored() == before

    created = analyst.post(
        "/api/flows/", {"slug": "long", "draft": long_flow()}, content_type="application/json"
    )
    assert created.status_code == 201
    checked = analyst.post("/api/flows/long/validate/", {}, content_type="application/json")
    assert checked.status_code == 200
    assert [(e["code"], e["node"], e["field"]) for e in checked.json()["errors"]] == [
        ("expression.limit", "calc", "values.n")
    ]
    published = analyst.post("/api/flows/long/publish/")
    assert published.status_code == 400
    assert FlowVersion.objects.filter(flow__slug="long").count() == 0


def test_a_nul_character_in_json_is_a_400_on_every_database(
    demo: DemoUsers, client_for: ClientFor
) -> None:
    before = stored()
    draft = '{"format": "braid.graph/1", "name": "a\\u0000b", "nodes": [], "edges": []}'
    body = '{"slug": "nul", "draft": ' + draft + "}"
    response = client_for("analyst").post("/api/flows/", body, content_type="application/json")
    assert (response.status_code, response.json()) == (
        400,
        {"draft": ["a NUL character (\\u0000) cannot be stored"]},
    )
    assert stored() == before
