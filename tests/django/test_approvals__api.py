"""/api/approvals/: each approver's open requests, deciding them, and every refusal."""

import json
from typing import Any

import pytest
from django.test import Client
from pytest_django import DjangoAssertNumQueries

from approvals.models import ApprovalRequest
from engine.models import Run, TraceEvent
from runs import services
from tests.django.durable_driver import drain
from tests.django.fixture_types import ClientFor, DemoUsers

INVOICE = {"invoice": {"id": "I-3", "amount": 300, "vendor": "Acme"}}
LINES = {
    "lines": [{"id": "A", "amount": 20000}, {"id": "B", "amount": 5}, {"id": "C", "amount": 30000}]
}


def post(client: Client, url: str, body: object) -> Any:
    """POST JSON; return the response."""
    return client.post(url, json.dumps(body), content_type="application/json")


def start(client: Client, flow: str, input_value: object) -> Run:
    """Start a durable run through the API and advance it to its first pause."""
    response = post(client, "/api/runs/", {"flow": flow, "input": input_value})
    assert response.status_code == 201, response.content
    return drain(Run.objects.get(pk=response.json()["id"]))


def inbox(client: Client) -> list[tuple[str, str, str, str]]:
    """Return the caller's open requests as (flow, node, execution id, title), as listed."""
    response = client.get("/api/approvals/")
    assert response.status_code == 200, response.content
    return [
        (r["flow"], r["node"], r["execution_id"], r["title"]) for r in response.json()["results"]
    ]


def request_id(run: Run, node: str, execution_id: str | None = None) -> int:
    """Return the id of a run's request at a node (and execution)."""
    found = ApprovalRequest.objects.filter(run=run, node=node)
    if execution_id:
        found = found.filter(execution_id=execution_id)
    return found.get().pk


def decide(client: Client, pk: int, decision: str, comment: str = "") -> Any:
    """POST a decision; return the response."""
    return post(client, f"/api/approvals/{pk}/decide/", {"decision": decision, "comment": comment})


def closed(run: Run) -> dict[str, tuple[str, str]]:
    """Return the run's requests as execution id -> (status, outcome)."""
    return {a.execution_id: (a.status, a.outcome) for a in ApprovalRequest.objects.filter(run=run)}


@pytest.mark.django_db
def test_each_approver_lists_the_open_requests_of_their_groups_newest_first(
    demo: DemoUsers, client_for: ClientFor
) -> None:
    analyst = client_for("analyst")
    invoice = start(analyst, "invoice-sign-off", INVOICE)
    start(analyst, "batch-line-approval", LINES)
    assert inbox(client_for("finance")) == [
        ("batch-line-approval", "review", "root:1:lines:3", "Line C: 30000"),
        ("batch-line-approval", "review", "root:1:lines:1", "Line A: 20000"),
        ("invoice-sign-off", "fin", "root:1:split.finance:1", "Finance sign-off for I-3"),
    ]
    assert inbox(client_for("legal")) == [
        ("invoice-sign-off", "leg", "root:1:split.legal:1", "Legal sign-off for I-3"),
    ]
    assert len(inbox(client_for("admin"))) == 4
    assert inbox(analyst) == []
    listed = client_for("legal").get("/api/approvals/").json()
    assert listed["count"] == 1
    first = listed["results"][0]
    assert first == {
        "id": request_id(invoice, "leg"),
        "run": str(invoice.pk),
        "flow": "invoice-sign-off",
        "runtime": "durable",
        "node": "leg",
        "execution_id": "root:1:split.legal:1",
        "groups": ["legal"],
        "policy": "all",
        "title": "Legal sign-off for I-3",
        "instructions": "Check the contract terms of Acme.",
        "shown": [{"field": "input.invoice.vendor", "value": "Acme"}],
        "status": "open",
        "outcome": "",
        "created_at": first["created_at"],
        "due_at": None,
        "overdue": False,
        "closed_at": None,
        "assignee": None,
        "delegations": [],
        "may_decide": True,
        "why_not": None,
        "context": {
            "started_by": "analyst",
            "started_at": invoice.created_at.isoformat().replace("+00:00", "Z"),
            "flow": "invoice-sign-off",
            "flow_name": "Invoice sign-off",
            "version": 1,
            "input": None,
            "input_more": 0,
        },
        "decisions": [],
    }
    assert client_for("legal").get(f"/api/approvals/{first['id']}/").json() == first


@pytest.mark.django_db
def test_the_inbox_takes_the_same_six_queries_whatever_its_length(
    demo: DemoUsers, client_for: ClientFor, django_assert_num_queries: DjangoAssertNumQueries
) -> None:
    analyst, finance = client_for("analyst"), client_for("finance")
    start(analyst, "batch-line-approval", LINES)
    finance.get("/api/approvals/")  # warm the session
    # session, user, groups (the admin role among them), count, the page with run, version
    # and flow, and the page's audit entries (who decided what)
    with django_assert_num_queries(6):
        assert len(inbox(finance)) == 2
    start(analyst, "batch-line-approval", LINES)
    with django_assert_num_queries(6):
        assert len(inbox(finance)) == 4


@pytest.mark.django_db
def test_decisions_through_the_api_complete_the_invoice_and_close_both_requests(
    demo: DemoUsers, client_for: ClientFor
) -> None:
    finance, legal = client_for("finance"), client_for("legal")
    run = start(client_for("analyst"), "invoice-sign-off", INVOICE)
    response = decide(finance, request_id(run, "fin"), "approve", "within budget")
    assert response.status_code == 202, response.content
    assert (response.json()["node"], response.json()["status"]) == ("fin", "open")
    assert decide(legal, request_id(run, "leg"), "approve").status_code == 202
    run = drain(run)
    assert (run.status, run.state) == (
        "completed",
        {
            "invoice": INVOICE["invoice"],
            "total": 300,
            "log": ["finance approved", "legal approved"],
        },
    )
    assert closed(run) == {
        "root:1:split.finance:1": ("closed", "approved"),
        "root:1:split.legal:1": ("closed", "approved"),
    }
    votes = TraceEvent.objects.filter(run=run, event="approval.vote").order_by("seq")
    assert [(v.node, v.detail["user"], v.detail["comment"]) for v in votes] == [
        ("fin", "finance", "within budget"),
        ("leg", "legal", ""),
    ]
    assert inbox(finance) == inbox(legal) == []
    detail = finance.get(f"/api/approvals/{request_id(run, 'fin')}/").json()
    assert (detail["status"], detail["outcome"], detail["closed_at"] is not None) == (
        "closed",
        "approved",
        True,
    )


@pytest.mark.django_db
def test_one_decision_per_line_item_approves_one_line_and_rejects_the_other(
    demo: DemoUsers, client_for: ClientFor
) -> None:
    finance = client_for("finance")
    run = start(client_for("analyst"), "batch-line-approval", LINES)
    assert (
        decide(finance, request_id(run, "review", "root:1:lines:3"), "approve").status_code == 202
    )
    assert decide(finance, request_id(run, "review", "root:1:lines:1"), "reject").status_code == 202
    run = drain(run)
    assert (run.status, run.state) == (
        "completed",
        {"approved": ["C"], "auto": ["B"], "errors": []},
    )
    assert closed(run) == {
        "root:1:lines:1": ("closed", "rejected"),
        "root:1:lines:3": ("closed", "approved"),
    }
    tree = client_for("admin").get(f"/api/runs/{run.pk}/tree/").json()
    assert tree["nodes"]["review"]["result"] == "approved"  # the latest item's row


@pytest.mark.django_db
def test_outsiders_second_decisions_closed_requests_and_bad_bodies_are_refused(
    demo: DemoUsers, client_for: ClientFor
) -> None:
    finance = client_for("finance")
    run = start(client_for("analyst"), "invoice-sign-off", INVOICE)
    fin = request_id(run, "fin")
    # legal may not see finance's request: 404, as if it did not exist (docs/security.md)
    hidden = decide(client_for("legal"), fin, "approve")
    assert (hidden.status_code, hidden.json()) == (
        404,
        {"code": "not_found", "detail": "No ApprovalRequest matches the given query."},
    )
    refused = decide(client_for("admin"), fin, "approve")
    assert (refused.status_code, refused.json()) == (
        403,
        {
            "code": "approval.not_an_approver",
            "detail": "admin is in none of the groups ['finance']",
        },
    )
    assert client_for("legal").get(f"/api/approvals/{fin}/").status_code == 404
    assert client_for("admin").get(f"/api/approvals/{fin}/").status_code == 200
    for body in ({"decision": "maybe"}, {}, {"decision": "approve", "comment": "x" * 2001}):
        assert post(finance, f"/api/approvals/{fin}/decide/", body).status_code == 400
    bad_json = finance.post(f"/api/approvals/{fin}/decide/", "{", content_type="application/json")
    assert bad_json.status_code == 400
    assert decide(finance, fin, "approve").status_code == 202
    twice = decide(finance, fin, "reject")
    assert (twice.status_code, twice.json()) == (
        409,
        {
            "code": "approval.already_decided",
            "detail": "finance has already decided the approval at fin",
        },
    )
    drain(run)
    late = decide(finance, fin, "approve")
    assert (late.status_code, late.json()) == (
        409,
        {"code": "approval.closed", "detail": "the approval at fin is closed: approved"},
    )
    assert decide(finance, 999999, "approve").status_code == 404
    anonymous = Client()
    assert anonymous.get("/api/approvals/").status_code == 403
    assert decide(anonymous, fin, "approve").status_code == 403


@pytest.mark.django_db
def test_a_cancelled_run_closes_its_requests_and_they_leave_every_inbox(
    demo: DemoUsers, client_for: ClientFor
) -> None:
    run = start(client_for("analyst"), "invoice-sign-off", INVOICE)
    cancel = post(client_for("admin"), f"/api/runs/{run.pk}/cancel/", {"reason": "duplicate"})
    assert cancel.status_code == 202
    run = drain(run)
    assert run.status == "cancelled"
    assert closed(run) == {
        "root:1:split.finance:1": ("closed", "run cancelled by admin"),
        "root:1:split.legal:1": ("closed", "run cancelled by admin"),
    }
    assert inbox(client_for("finance")) == inbox(client_for("admin")) == []
    late = decide(client_for("legal"), request_id(run, "leg"), "approve")
    assert (late.status_code, late.json()["code"]) == (409, "approval.closed")


@pytest.mark.django_db
def test_a_request_of_an_in_process_run_is_listed_but_decided_only_with_braid_decide(
    demo: DemoUsers, client_for: ClientFor
) -> None:
    version = services.latest_version("invoice-sign-off")
    state = services.start_run(version.graph, "invoice-sign-off v1", INVOICE, version)
    finance = client_for("finance")
    listed = finance.get("/api/approvals/").json()["results"]
    assert [(r["run"], r["node"], r["runtime"]) for r in listed] == [
        (state.run_id, "fin", "in_process")
    ]
    refused = decide(finance, listed[0]["id"], "approve")
    detail = f"run {state.run_id} runs in-process (braid run): decide it with braid decide"
    assert (refused.status_code, refused.json()) == (
        409,
        {"code": "approval.in_process", "detail": detail},
    )
    assert ApprovalRequest.objects.get(pk=listed[0]["id"]).status == "open"


@pytest.mark.django_db
def test_the_openapi_schema_describes_the_approvals_endpoints(
    demo: DemoUsers, client_for: ClientFor
) -> None:
    response = client_for("finance").get("/api/schema/", HTTP_ACCEPT="application/json")
    paths = json.loads(response.content)["paths"]
    decide_op = paths["/api/approvals/{id}/decide/"]["post"]
    assert sorted(decide_op["responses"]) == [
        "202",
        "400",
        "401",
        "403",
        "404",
        "405",
        "409",
        "413",
        "500",
        "503",
    ]
    assert "/api/approvals/" in paths and "/api/approvals/{id}/" in paths


@pytest.mark.django_db
def test_a_filter_holding_a_nul_is_refused_with_400_naming_it(
    demo: DemoUsers, client_for: ClientFor
) -> None:
    answer = client_for("finance").get("/api/approvals/", {"q": "\x00", "group": "fin\x00"})
    nul = "a NUL character (\\u0000) cannot be searched for"
    assert (answer.status_code, answer.json()) == (
        400,
        {"code": "query.nul", "detail": f"{nul}: group, q", "fields": {"group": nul, "q": nul}},
    )


def joined_relations(plan: dict[str, Any], in_subplan: bool = False) -> list[str]:
    """Return the tables a plan reads outside its subplans (a subplan runs once)."""
    inside = in_subplan or plan.get("Parent Relationship") in ("SubPlan", "InitPlan")
    found = [] if inside or "Relation Name" not in plan else [plan["Relation Name"]]
    for child in plan.get("Plans", []):
        found += joined_relations(child, inside)
    return found


@pytest.mark.django_db
def test_the_inbox_count_reads_only_the_requests_whatever_their_number(
    demo: DemoUsers, client_for: ClientFor
) -> None:
    """The page's count reads every open request the caller may decide, so its cost per
    request is the inbox's growth with N (issue 33): no join to each request's run, whose
    starter is tested against the caller's started runs, read once."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    if connection.vendor != "postgresql":
        pytest.skip("the plan is PostgreSQL's")
    finance = client_for("finance")
    start(client_for("analyst"), "batch-line-approval", LINES)
    with CaptureQueriesContext(connection) as captured:
        assert len(inbox(finance)) == 2
    [count] = [q["sql"] for q in captured.captured_queries if "COUNT(*)" in q["sql"]]
    with connection.cursor() as cursor:
        cursor.execute(f"EXPLAIN (FORMAT JSON) {count}")
        plan = cursor.fetchone()[0][0]["Plan"]
    assert joined_relations(plan) == ["approvals_approvalrequest"]
