"""Clean refusals: out-of-range ids and numbers, NUL characters and another's approval
requests are refused with a 400 or a 404 that says nothing more, on SQLite and PostgreSQL.

Every path parameter and every query parameter of the OpenAPI schema is swept with hostile
values (22 digits, past the 64-bit range, negative, a float, 5,000 characters, a NUL), so a
new operation is covered the day it lands. docs/security.md, "Clean refusals".
"""

import base64
import json
import re
from typing import Any

import pytest
from axes.models import AccessAttempt
from django.test import Client
from drf_spectacular.generators import SchemaGenerator

from approvals.models import ApprovalRequest
from engine.models import Run
from tests.django.approval_helpers import INVOICE, decide, post, request_id, start
from tests.django.durable_driver import drain
from tests.django.fixture_types import ClientFor, DemoUsers

pytestmark = pytest.mark.django_db

TWENTY_TWO = "9" * 22
PAST_BIGINT = str(2**63)
HOSTILE = {
    "22 digits": TWENTY_TWO,
    "2**63": PAST_BIGINT,
    "negative": "-1",
    "negative 22 digits": "-" + TWENTY_TWO,
    "a float": "1.5",
    "an exponent": "1e30",
    "5,000 characters": "x" * 5000,
    "a full-width digit": "\uff19",
}
NUL_IN_QUERY = "a NUL character (\\u0000) cannot be searched for"


def nul_refusal(*names: str) -> dict[str, Any]:
    """Return the 400 body for query parameters holding a NUL."""
    return {"code": "query.nul", "detail": f"{NUL_IN_QUERY}: {', '.join(names)}",
            "fields": dict.fromkeys(names, NUL_IN_QUERY)}  # fmt: skip


NOT_FOUND = {"code": "not_found", "detail": "No ApprovalRequest matches the given query."}


def ids_refusal(message: str) -> tuple[int, dict[str, Any]]:
    return 400, {"ids": {"0": [message]}}


@pytest.mark.parametrize(
    ("ids", "expected"),
    [
        ([int(TWENTY_TWO)], ids_refusal("Ensure this value is less than or equal to "
                                        "9223372036854775807.")),
        ([TWENTY_TWO], ids_refusal("Ensure this value is less than or equal to "
                                   "9223372036854775807.")),
        ([2**63], ids_refusal("Ensure this value is less than or equal to 9223372036854775807.")),
        ([-int(TWENTY_TWO)], ids_refusal("Ensure this value is greater than or equal to 1.")),
        ([0], ids_refusal("Ensure this value is greater than or equal to 1.")),
        ([1.5], ids_refusal("A valid integer is required.")),
        (["1e30"], ids_refusal("A valid integer is required.")),
        (["x" * 5000], ids_refusal("String value too large.")),
        (["1\x00"], ids_refusal("A valid integer is required.")),
        ([1, 1], (400, {"ids": ["ids repeat"]})),
    ],
)  # fmt: skip
def test_a_bulk_decision_naming_an_id_no_database_holds_is_a_400(
    demo: DemoUsers, client_for: ClientFor, ids: list[object], expected: tuple[int, dict[str, Any]]
) -> None:
    answer = post(client_for("finance"), "/api/approvals/decide/",
                  {"ids": ids, "decision": "approve"})  # fmt: skip
    assert (answer.status_code, answer.json()) == expected


def test_the_largest_id_a_database_holds_is_simply_not_found(
    demo: DemoUsers, client_for: ClientFor
) -> None:
    largest = 2**63 - 1
    answer = post(client_for("finance"), "/api/approvals/decide/",
                  {"ids": [largest], "decision": "approve"})  # fmt: skip
    assert (answer.status_code, answer.json()) == (
        200,
        {"total": 1, "done": 0, "refused": 1, "results": [
            {"id": largest, "result": "refused", "code": "not_found",
             "detail": f"no request {largest} of yours"}]},
    )  # fmt: skip


def schema_operations() -> list[tuple[str, str, dict[str, Any]]]:
    """Return (method, path, operation) for every operation of the API's schema."""
    schema = SchemaGenerator().get_schema(request=None, public=True)
    return [
        (method.upper(), path, operation)
        for path, methods in schema["paths"].items()
        if path != "/api/schema/"
        for method, operation in methods.items()
    ]


def filled(path: str, values: dict[str, str]) -> str:
    """Return a schema path with each {parameter} replaced by its value (or a valid one)."""
    return re.sub(r"\{(\w+)\}", lambda m: values.get(m[1], VALID_PATH[m[1]]), path)


VALID_PATH = {"slug": "invoice-sign-off", "number": "1", "id": "{id}"}


def test_every_path_parameter_refuses_hostile_values_with_a_json_404(
    demo: DemoUsers, client_for: ClientFor
) -> None:
    admin = client_for("admin")
    got, swept = {}, 0
    for method, path, operation in schema_operations():
        names = [p["name"] for p in operation.get("parameters", []) if p["in"] == "path"]
        for name in names:
            for label, value in {**HOSTILE, "a NUL": "1\x00"}.items():
                url = filled(path, {name: value})
                if "{id}" in url:  # another parameter beside a hostile one: none do yet
                    url = url.replace("{id}", "1")
                answer = admin.generic(method, url, "{}", "application/json")
                got[(method, path, name, label)] = (answer.status_code, answer.json()["code"])
                swept += 1
    assert swept == 24 * 9  # 24 path parameters of 20 paths, 9 values each
    assert {key: value for key, value in got.items() if value != (404, "not_found")} == {}


def test_a_nul_in_the_path_of_any_api_url_is_a_404_on_every_database(client_for: ClientFor) -> None:
    for url in ("/api/flows/a\x00b/", "/api/runs/\x00/", "/api/flows/x/versions/1\x00/"):
        answer = client_for("admin").get(url)
        assert (answer.status_code, answer.json()) == (
            404,
            {"code": "not_found", "detail": "no API resource has a NUL character in its URL"},
        ), url


INTEGER_QUERY = {
    "limit": "must be a whole number from 1 to 500",
    "offset": "must be a whole number from 0 to 1,000,000",
    "version": "must be a whole number from 1 to 2,147,483,647",
}


def test_every_integer_query_parameter_refuses_hostile_values_naming_it(
    demo: DemoUsers, client_for: ClientFor
) -> None:
    admin = client_for("admin")
    run = start(client_for("analyst"), "invoice-sign-off", INVOICE)
    got, expected = {}, {}
    for _, path, operation in schema_operations():
        for parameter in operation.get("parameters", []):
            if parameter["in"] != "query" or parameter["schema"].get("type") != "integer":
                continue
            name = parameter["name"]
            for label, value in HOSTILE.items():
                url = filled(path, {"id": str(run.pk)})
                answer = admin.get(url, {name: value})
                got[(path, name, label)] = (answer.status_code, answer.json())
                expected[(path, name, label)] = (400, {name: INTEGER_QUERY[name]})
    assert len(got) == 13 * 8  # limit and offset of 6 paged lists, an export's version
    assert got == expected


def test_a_nul_in_any_query_parameter_is_a_400_naming_it_on_every_database(
    demo: DemoUsers, client_for: ClientFor
) -> None:
    admin = client_for("admin")
    run = start(client_for("analyst"), "invoice-sign-off", INVOICE)
    got, expected = {}, {}
    for method, path, operation in schema_operations():
        if method != "GET":
            continue
        for parameter in operation.get("parameters", []):
            if parameter["in"] != "query":
                continue
            name = parameter["name"]
            url = filled(path, {"id": str(run.pk)})
            answer = admin.get(url, {name: "a\x00b", "other": "fine"})
            got[(path, name)] = (answer.status_code, answer.json())
            expected[(path, name)] = (400, nul_refusal(name))
    answer = admin.get("/api/runs/", {"fl\x00ow": "x", "flow": ["ok", "\x00"]})
    got["/api/runs/", "two"] = (answer.status_code, answer.json())
    expected["/api/runs/", "two"] = (400, nul_refusal("fl\x00ow", "flow"))
    assert len(got) == 29 + 1  # 29 query parameters of 9 operations, and the two above
    assert got == expected


@pytest.mark.parametrize(
    ("body", "field", "message"),
    [
        ({"flow": "invoice-sign-off", "version": int(TWENTY_TWO)}, "version",
         "Ensure this value is less than or equal to 2147483647."),
        ({"flow": "invoice-sign-off", "version": -1}, "version",
         "Ensure this value is greater than or equal to 1."),
        ({"flow": "invoice-sign-off", "version": 1.5}, "version", "A valid integer is required."),
    ],
)  # fmt: skip
def test_a_run_start_naming_a_version_no_flow_can_have_is_a_400(
    demo: DemoUsers, client_for: ClientFor, body: dict[str, object], field: str, message: str
) -> None:
    before = Run.objects.count()
    answer = post(client_for("finance"), "/api/runs/", body)
    assert (answer.status_code, answer.json()) == (400, {field: [message]})
    assert Run.objects.count() == before


def test_a_draft_saved_over_a_revision_no_flow_can_have_is_a_400(
    demo: DemoUsers, client_for: ClientFor
) -> None:
    answer = client_for("analyst").patch(
        "/api/flows/invoice-sign-off/",
        json.dumps({"name": "x", "base_revision": int(TWENTY_TWO)}),
        content_type="application/json",
    )
    assert (answer.status_code, answer.json()) == (
        400,
        {"base_revision": ["Ensure this value is less than or equal to 2147483647."]},
    )


# ---------------------------------------------------------------------------- no leaks


def requests_in_every_state(client_for: ClientFor) -> dict[str, int]:
    """Return legal's requests in each state a decision can find them, by state, and an id
    that does not exist."""
    analyst, legal = client_for("analyst"), client_for("legal")
    opened = start(analyst, "invoice-sign-off", INVOICE)
    applying = start(analyst, "invoice-sign-off", INVOICE)
    closed = start(analyst, "invoice-sign-off", INVOICE)
    for run in (applying, closed):
        assert decide(legal, request_id(run, "leg"), "approve").status_code == 202
    drain(closed)
    ids = {
        "open": request_id(opened, "leg"),
        "decided, being applied": request_id(applying, "leg"),
        "closed as approved": request_id(closed, "leg"),
    }
    assert ApprovalRequest.objects.get(pk=ids["closed as approved"]).outcome == "approved"
    ids["never existed"] = max(ids.values()) + 1000
    return ids


PER_REQUEST = [
    ("GET", "/api/approvals/{id}/", None),
    ("POST", "/api/approvals/{id}/decide/", {"decision": "approve"}),
    ("POST", "/api/approvals/{id}/decide/", {"decision": "reject", "execution_id": "root:1"}),
    ("POST", "/api/approvals/{id}/delegate/", {"to": "finance"}),
]


@pytest.mark.parametrize("outsider", ["finance", "analyst"])
def test_anothers_request_answers_every_per_request_call_as_one_that_never_existed(
    demo: DemoUsers, client_for: ClientFor, outsider: str
) -> None:
    ids = requests_in_every_state(client_for)
    client = client_for(outsider)
    got = {}
    for state, pk in ids.items():
        for method, template, body in PER_REQUEST:
            data = json.dumps(body) if body is not None else ""
            answer = client.generic(method, template.format(id=pk), data, "application/json")
            got[(state, method, template, data)] = (answer.status_code, answer.json())
    assert list(got.values()) == [(404, NOT_FOUND)] * 16


def test_reassigning_is_refused_by_role_alike_for_every_request_and_none(
    demo: DemoUsers, client_for: ClientFor
) -> None:
    ids = requests_in_every_state(client_for)
    finance = client_for("finance")
    got = {state: post(finance, f"/api/approvals/{pk}/reassign/", {"to": "finance"})
           for state, pk in ids.items()}  # fmt: skip
    refusal = {
        "code": "permission_denied",
        "detail": "Your role (approver) may not reassign approval requests to anyone.",
    }
    assert {state: (a.status_code, a.json()) for state, a in got.items()} == dict.fromkeys(
        ids, (403, refusal)
    )


def test_a_bulk_decision_reports_anothers_requests_as_not_found_whatever_their_state(
    demo: DemoUsers, client_for: ClientFor
) -> None:
    ids = requests_in_every_state(client_for)
    answer = post(client_for("finance"), "/api/approvals/decide/",
                  {"ids": list(ids.values()), "decision": "reject"})  # fmt: skip
    assert answer.status_code == 200
    assert answer.json() == {
        "total": 4, "done": 0, "refused": 4,
        "results": [{"id": pk, "result": "refused", "code": "not_found",
                     "detail": f"no request {pk} of yours"} for pk in ids.values()],
    }  # fmt: skip


def test_those_who_see_a_request_but_may_not_decide_it_still_hear_why(
    demo: DemoUsers, client_for: ClientFor
) -> None:
    run = start(client_for("analyst"), "invoice-sign-off", INVOICE)
    leg = request_id(run, "leg")
    admin = decide(client_for("admin"), leg, "approve")
    assert (admin.status_code, admin.json()["code"]) == (403, "approval.not_an_approver")
    shown = client_for("legal").get(f"/api/approvals/{leg}/")
    assert (shown.status_code, shown.json()["id"]) == (200, leg)


# ---------------------------------------------------------------------------- the schema


NO_NUL = "^[^\\u0000]*$"


def test_the_schema_bounds_every_id_and_number_the_api_takes() -> None:
    schema = SchemaGenerator().get_schema(request=None, public=True)
    components = schema["components"]["schemas"]
    assert components["BulkDecide"]["properties"]["ids"] == {
        "type": "array", "minItems": 1, "maxItems": 500, "uniqueItems": True,
        "items": {"type": "integer", "minimum": 1, "maximum": 2**63 - 1},
    }  # fmt: skip
    assert components["Start"]["properties"]["version"] == {
        "type": "integer", "minimum": 1, "maximum": 2**31 - 1
    }  # fmt: skip
    assert components["FlowUpdate"]["properties"]["base_revision"]["maximum"] == 2**31 - 1
    integers = {
        (path, p["name"]): (p["schema"].get("minimum"), p["schema"].get("maximum"))
        for _, path, operation in schema_operations()
        for p in operation.get("parameters", [])
        if p["in"] == "query" and p["schema"].get("type") == "integer"
    }
    assert set(integers.values()) == {(1, 500), (0, 1_000_000), (1, 2**31 - 1)}


def test_the_schema_says_no_text_the_api_takes_holds_a_nul() -> None:
    schema = SchemaGenerator().get_schema(request=None, public=True)
    marked = sorted(
        (path, p["name"])
        for _, path, operation in schema_operations()
        for p in operation.get("parameters", [])
        if p["in"] == "query" and p["schema"].get("pattern") == NO_NUL
    )
    assert marked == [
        ("/api/approvals/", "flow"), ("/api/approvals/", "group"), ("/api/approvals/", "q"),
        ("/api/runs/", "created_after"), ("/api/runs/", "created_before"),
        ("/api/runs/", "flow"), ("/api/runs/", "started_by"), ("/api/runs/{id}/execution/", "id"),
        ("/api/runs/{id}/writes/", "node"), ("/api/tokens/", "user"),
    ]  # fmt: skip
    components = schema["components"]["schemas"]
    bodies = {
        name: sorted(field for field, value in components[name]["properties"].items()
                     if value.get("pattern") == NO_NUL)
        for name in ("BulkDecide", "Decide", "HandOver", "Cancel", "FlowUpdate", "TestDecision",
                     "NewToken")
    }  # fmt: skip
    assert bodies == {
        "BulkDecide": ["comment"], "Decide": ["comment", "execution_id"],
        "HandOver": ["comment", "to"], "Cancel": ["reason"], "FlowUpdate": ["name"],
        "TestDecision": ["node"], "NewToken": ["name"],
    }  # fmt: skip


@pytest.mark.parametrize(
    ("url", "body", "field"),
    [
        ("/api/approvals/decide/", {"ids": [1], "decision": "approve", "comment": "a\x00"},
         "comment"),
        ("/api/approvals/{fin}/decide/", {"decision": "approve", "comment": "a\x00"}, "comment"),
        ("/api/approvals/{fin}/decide/", {"decision": "approve", "execution_id": "\x00"},
         "execution_id"),
        ("/api/approvals/{fin}/delegate/", {"to": "fin\x00"}, "to"),
        ("/api/approvals/{fin}/delegate/", {"to": "finance", "comment": "\x00"}, "comment"),
    ],
)  # fmt: skip
def test_a_nul_in_a_text_field_the_schema_marks_is_a_400(
    demo: DemoUsers, client_for: ClientFor, url: str, body: dict[str, object], field: str
) -> None:
    run = start(client_for("analyst"), "invoice-sign-off", INVOICE)
    answer = post(client_for("finance"), url.format(fin=request_id(run, "fin")), body)
    assert (answer.status_code, answer.json()) == (
        400, {field: ["Null characters are not allowed."]}
    )  # fmt: skip


# ---------------------------------------------------------------------------- credentials


LONG_NAME = "n" * 5000


def basic_client(username: str, password: str) -> Client:
    token = base64.b64encode(f"{username}:{password}".encode()).decode()
    return Client(HTTP_AUTHORIZATION=f"Basic {token}", raise_request_exception=False)


@pytest.mark.parametrize(
    ("username", "password"),
    [("admin\x00", "braid-admin"), ("a\x00", "x"), (LONG_NAME, "x"), ("admin", "x" * 5000)],
)
def test_basic_auth_with_a_name_no_user_can_have_is_refused_as_wrong_credentials(
    demo: DemoUsers, username: str, password: str
) -> None:
    answer = basic_client(username, password).get("/api/runs/")
    assert (answer.status_code, answer.json()) == (
        403, {"code": "authentication_failed", "detail": "Invalid username/password."}
    )  # fmt: skip


@pytest.mark.parametrize("login", ["/login/", "/admin/login/"])
def test_a_login_form_with_a_five_thousand_character_name_is_a_failed_login(
    demo: DemoUsers, login: str
) -> None:
    client = Client(raise_request_exception=False)
    answer = client.post(login, {"username": LONG_NAME, "password": "x"})
    assert answer.status_code == 200
    assert "_auth_user_id" not in client.session
    recorded = AccessAttempt.objects.values_list("username", "failures_since_start")
    assert list(recorded) == [("n" * 255, 1)]


@pytest.mark.parametrize("cookie", ["abcdefgh\x00ij", "a" * 5000, "abcdefgh-ij"])
def test_a_session_cookie_no_session_key_can_be_counts_as_no_session(cookie: str) -> None:
    client = Client(raise_request_exception=False)
    client.cookies["sessionid"] = cookie
    api, page = client.get("/api/runs/"), client.get("/runs/")
    assert (api.status_code, api.json()["code"]) == (403, "not_authenticated")
    assert (page.status_code, page["Location"]) == (302, "/login/?next=/runs/")
