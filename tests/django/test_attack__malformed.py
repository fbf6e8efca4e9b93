"""Malformed payloads on every write endpoint: a JSON error with the right status, never a 500.

The operations come from the OpenAPI schema (as in test_attack__csrf.py), each called by a
role allowed to use it, on objects that exist, so that what answers is the endpoint's
handling of the body and not a permission or a missing object.
"""

import json

import pytest

from approvals.models import ApprovalRequest
from designer.models import Flow
from engine.models import Run
from tests.django.durable_driver import drain
from tests.django.fixture_types import ClientFor, DemoUsers
from tests.django.test_attack__csrf import OPERATIONS, counts, request_for, targets  # noqa: F401

pytestmark = pytest.mark.django_db

DEEP = 100_000
# name -> (raw body, the answer's exact status, its exact `code` when it has one)
PAYLOADS: dict[str, tuple[bytes, int, str | None]] = {
    "deeply nested arrays": (b"[" * DEEP + b"]" * DEEP, 400, "json.invalid"),
    "deeply nested objects": (b'{"a":' * DEEP + b"1" + b"}" * DEEP, 400, "json.invalid"),
    "101 levels of nesting": (b'{"input": {"a": ' + b"[" * 99 + b"]" * 99 + b"}}", 400,
                              "json.invalid"),
    "a raw NUL byte": (b'{"name": "a\x00b"}', 400, "json.invalid"),
    "invalid UTF-8": (b'{"name": "\xff\xfe"}', 400, "json.invalid"),
    "a lone surrogate": (b'{"name": "\\ud800", "slug": "\\udfff", "draft": "\\ud83d"}', 400,
                         "json.invalid"),
    "a lone surrogate as a key": (b'{"\\ud800": 1}', 400, "json.invalid"),
    "not JSON": (b"{'name': 1}", 400, "json.invalid"),
    "a list body": (b"[1, 2, 3]", 400, None),
    "a number body": (b"12", 400, None),
    "a string body": (b'"flows"', 400, None),
    "null": (b"null", 400, None),
    "wrong types everywhere": (
        json.dumps({"slug": 7, "name": [], "draft": "x", "graph": 1, "flow": {}, "input": 3,
                    "decision": False, "ids": "1", "to": None, "reason": []}).encode(), 400, None),
    "a huge integer": (b'{"ids": [1' + b"0" * 5000 + b"]}", 400, "json.invalid"),
    "an infinite number": (b'{"input": {"n": 1e999}, "reason": 1e999}', 400, "json.invalid"),
    "NaN": (b'{"input": {"n": NaN}, "ids": [NaN]}', 400, "json.invalid"),
}  # fmt: skip
# Operations that take no body at all answer every body as they answer none.
BODILESS = {
    "DELETE /api/flows/{slug}/",
    "POST /api/flows/{slug}/publish/",
    "POST /api/flows/{slug}/validate/",
    "POST /api/runs/{id}/retry/",
    "DELETE /api/tokens/{id}/",
}
# Checking a document answers any parsed JSON with a 200 report of what is wrong with it.
REPORTS = {"POST /api/flows/import/check/"}


@pytest.mark.parametrize("name", list(PAYLOADS))
def test_every_write_endpoint_answers_a_malformed_body_with_a_json_error(
    name: str,
    targets: dict[str, str],  # noqa: F811
    client_for: ClientFor,
) -> None:
    body, status, code = PAYLOADS[name]
    got, expected = {}, {}
    for operation in OPERATIONS:
        if operation in BODILESS:
            continue
        role, method, path, _ = request_for(operation, targets)
        response = client_for(role).generic(method, path, body, "application/json")
        assert response["Content-Type"] == "application/json", (operation, response.content)
        answer = response.json()
        got[operation] = (response.status_code, answer.get("code") if code else None)
        expected[operation] = (status, code)
        if operation in REPORTS and code is None:
            expected[operation] = (200, None)
            assert answer["ok"] is False and answer["errors"], answer
    assert {op: answer for op, answer in got.items() if answer != expected[op]} == {}


def test_the_parse_error_names_the_problem(targets: dict[str, str], client_for: ClientFor) -> None:  # noqa: F811
    analyst = client_for("analyst")
    bodies = [
        PAYLOADS["deeply nested arrays"][0],
        b'{"slug": "ok", "name": "a\\ud83d\\ude00 and \\udc00"}',
        PAYLOADS["invalid UTF-8"][0],
        b'{"slug": "nan", "draft": {"n": NaN}}',
        b'{"slug": "inf", "draft": {"n": -1e400}}',
        b'{"slug": "big", "draft": {"n": 1' + b"0" * 5000 + b"}}",
        b'{"slug": "deep", "draft": {"n": ' + b"[" * 99 + b"]" * 99 + b"}}",
    ]
    answers = [analyst.post("/api/flows/", body, "application/json").json() for body in bodies]
    assert answers == [
        {"code": "json.invalid", "detail": "the JSON nests too deeply"},
        {"code": "json.invalid", "detail": "a lone surrogate (\\udc00) is not Unicode text"},
        {"code": "json.invalid", "detail": "not UTF-8 text: invalid start byte"},
        {"code": "json.invalid", "detail": "NaN is not a JSON number"},
        {"code": "json.invalid", "detail": "the number -1e400 is out of range"},
        {
            "code": "json.invalid",
            "detail": "a number has more than 4,300 digits",
        },
        {"code": "json.invalid", "detail": "the JSON nests deeper than 100 levels"},
    ]


def test_a_form_encoded_or_multipart_body_is_a_415(
    targets: dict[str, str],  # noqa: F811
    client_for: ClientFor,
) -> None:
    analyst = client_for("analyst")
    form = analyst.post("/api/flows/", {"slug": "x", "draft": "{}"})
    urlencoded = analyst.post("/api/flows/", "slug=x", "application/x-www-form-urlencoded")
    assert [form.status_code, urlencoded.status_code] == [415, 415]
    assert form.json()["code"] == "unsupported_media_type"


def test_a_malformed_body_stores_nothing(targets: dict[str, str], client_for: ClientFor) -> None:  # noqa: F811
    before = counts()
    analyst = client_for("analyst")
    for body, _, _ in PAYLOADS.values():
        analyst.post("/api/flows/", body, "application/json")
        analyst.post("/api/runs/", body, "application/json")
        analyst.post("/api/flows/import/", body, "application/json")
    assert counts() == before


FOREACH = {
    "format": "braid.graph/1",
    "name": "Each",
    "state": {"kept": {"reducer": "append"}},
    "nodes": [
        {"id": "start", "type": "start"},
        {"id": "each", "type": "foreach", "items": "input.items", "as": "item"},
        {"id": "keep", "type": "set", "values": {"kept": "[item]"}},
        {"id": "done", "type": "end"},
    ],
    "edges": [
        {"source": "start", "target": "each"},
        {"source": "each", "outcome": "item", "target": "keep"},
        {"source": "keep", "target": "each"},
        {"source": "each", "outcome": "done", "target": "done"},
    ],
}


def test_a_huge_foreach_list_as_run_input_fails_the_run_with_the_limit(
    demo: DemoUsers, client_for: ClientFor
) -> None:
    analyst = client_for("analyst")
    imported = analyst.post(
        "/api/flows/import/",
        {"graph": FOREACH, "slug": "each", "publish": True},
        content_type="application/json",
    )
    assert imported.status_code == 201, imported.content
    body = {"flow": "each", "input": {"items": list(range(200_000))}}
    started = analyst.post("/api/runs/", body, content_type="application/json")
    assert started.status_code == 201, started.content
    run = drain(Run.objects.get(pk=started.json()["id"]))
    assert (run.status, run.error) == (
        "failed",
        "items: 200,000 items; a foreach takes at most 10,000 (BRAID_FOREACH_MAX_ITEMS)",
    )
    tree = analyst.get(f"/api/runs/{run.pk}/tree/").json()
    assert (tree["nodes"]["each"]["status"], tree["colors"]["keep"]) == ("failed", "skipped")


def test_fields_a_caller_may_not_set_are_ignored(
    targets: dict[str, str],  # noqa: F811
    client_for: ClientFor,
    demo: DemoUsers,
) -> None:
    analyst = client_for("analyst")
    forged = {"owner": demo["admin"].pk, "revision": 999, "slug": "renamed"}
    patched = analyst.patch("/api/flows/csrf-draft/", forged, content_type="application/json")
    flow = Flow.objects.get(slug="csrf-draft")
    assert (patched.status_code, flow.owner.username, flow.revision) == (200, "analyst", 2)
    started = analyst.post(
        "/api/runs/",
        {"flow": "staged-gathers", "input": {}, "status": "completed", "label": "forged",
         "started_by": demo["admin"].pk, "state": {"owned": True}},
        content_type="application/json",
    )  # fmt: skip
    run = Run.objects.get(pk=started.json()["id"])
    assert run.started_by is not None
    assert (run.status, run.started_by.username, run.label, run.state) == (
        "running", "analyst", "staged-gathers v1", {}
    )  # fmt: skip
    request = ApprovalRequest.objects.get(pk=targets["approval"])
    decided = client_for("finance").post(
        f"/api/approvals/{request.pk}/decide/",
        {"decision": "approve", "user": "admin", "groups": ["legal"]},
        content_type="application/json",
    )
    assert decided.status_code == 202
    assert [(d["user"], d["decision"]) for d in decided.json()["decisions"]] == [
        ("finance", "approve")
    ]


def test_a_run_input_nested_to_the_limit_runs_and_one_level_more_is_refused(
    demo: DemoUsers, client_for: ClientFor
) -> None:
    nodes = [
        {"id": "start", "type": "start"},
        {"id": "copy", "type": "set", "values": {"kept": "[input.a]"}},
        {"id": "done", "type": "end"},
    ]
    edges = [{"source": "start", "target": "copy"}, {"source": "copy", "target": "done"}]
    graph = {**FOREACH, "nodes": nodes, "edges": edges}
    analyst = client_for("analyst")
    made = analyst.post("/api/flows/import/", {"graph": graph, "slug": "deep", "publish": True},
                        content_type="application/json")  # fmt: skip
    assert made.status_code == 201, made.content
    answers = []
    for depth in (98, 99):  # the body adds two levels: {"input": {"a": ...}}
        body = '{"flow": "deep", "input": {"a": ' + "[" * depth + "]" * depth + "}}"
        answers.append(analyst.post("/api/runs/", body, "application/json"))
    assert [a.status_code for a in answers] == [201, 400]
    run = drain(Run.objects.get(pk=answers[0].json()["id"]))
    assert run.status == "completed"
    assert json.dumps(run.state["kept"]) == "[" * 99 + "]" * 99


GROW = {
    "format": "braid.graph/1",
    "name": "Grow",
    "state": {"x": {"reducer": "overwrite", "default": []}},
    "nodes": [
        {"id": "start", "type": "start"},
        {"id": "again", "type": "loop", "while": "true", "max_iterations": 1000},
        {"id": "wrap", "type": "set", "values": {"x": "[state.x]"}},
        {"id": "done", "type": "end"},
    ],
    "edges": [
        {"source": "start", "target": "again"},
        {"source": "again", "outcome": "body", "target": "wrap"},
        {"source": "wrap", "target": "again"},
        {"source": "again", "outcome": "done", "target": "done"},
    ],
}


def test_a_state_value_grown_deeper_than_the_limit_fails_the_run_not_the_server(
    demo: DemoUsers, client_for: ClientFor
) -> None:
    analyst = client_for("analyst")
    made = analyst.post(
        "/api/flows/", {"slug": "grow", "draft": GROW}, content_type="application/json"
    )
    assert made.status_code == 201, made.content
    tried = analyst.post(
        "/api/flows/grow/test-run/", {"input": {}}, content_type="application/json"
    )
    message = (
        "cannot write state field 'x': the value nests deeper than 100 levels "
        "(BRAID_VALUE_MAX_DEPTH)"
    )
    assert (tried.status_code, tried.json()["status"], tried.json()["error"]) == (
        200, "failed", message
    )  # fmt: skip
    assert analyst.post("/api/flows/grow/publish/").status_code == 201
    started = analyst.post(
        "/api/runs/", {"flow": "grow", "input": {}}, content_type="application/json"
    )
    run = drain(Run.objects.get(pk=started.json()["id"]))
    assert (run.status, run.error) == ("failed", message)
