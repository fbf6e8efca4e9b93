"""Bulk decisions (each recorded on its own), the archive and the count."""

import pytest

from approvals.models import ApprovalEvent, ApprovalRequest
from tests.django.approval_helpers import INVOICE, decide, post, request_id, start
from tests.django.durable_driver import drain
from tests.django.fixture_types import ClientFor, DemoUsers

pytestmark = pytest.mark.django_db
LINES = {
    "lines": [{"id": "A", "amount": 20000}, {"id": "B", "amount": 5}, {"id": "C", "amount": 30000}]
}


def test_a_bulk_decision_records_each_request_on_its_own_and_reports_each_result(
    demo: DemoUsers, client_for: ClientFor
) -> None:
    finance = client_for("finance")
    batch = start(client_for("analyst"), "batch-line-approval", LINES)
    invoice = start(client_for("analyst"), "invoice-sign-off", INVOICE)
    line_a = request_id(batch, "review", "root:1:lines:1")
    line_c = request_id(batch, "review", "root:1:lines:3")
    leg = request_id(invoice, "leg")
    assert decide(finance, line_c, "approve").status_code == 202
    answer = post(
        finance,
        "/api/approvals/decide/",
        {"ids": [line_a, line_c, leg, 999999], "decision": "approve", "comment": "batch"},
    )
    assert answer.status_code == 200, answer.content
    assert answer.json() == {
        "total": 4,
        "done": 1,
        "refused": 3,
        "results": [
            {"id": line_a, "result": "done", "code": "", "detail": ""},
            {
                "id": line_c,
                "result": "refused",
                "code": "approval.already_decided",
                "detail": "finance has already decided the approval at review",
            },
            {
                "id": leg,
                "result": "refused",
                "code": "not_found",
                "detail": f"no request {leg} of yours",
            },
            {
                "id": 999999,
                "result": "refused",
                "code": "not_found",
                "detail": "no request 999999 of yours",
            },
        ],
    }
    batch = drain(batch)
    assert (batch.status, batch.state["approved"]) == ("completed", ["A", "C"])
    decided = ApprovalEvent.objects.filter(kind="decided", run_id=batch.pk)
    assert sorted((e.request_id, e.detail["comment"]) for e in decided) == sorted(
        [(line_a, "batch"), (line_c, "")]
    )
    assert ApprovalRequest.objects.get(pk=leg).status == "open"


def test_a_bulk_decision_reads_the_persons_groups_once(
    demo: DemoUsers, client_for: ClientFor
) -> None:
    """What the person sees and what each decision counts for come from one read."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    batch = start(client_for("analyst"), "batch-line-approval", LINES)
    ids = [request_id(batch, "review", f"root:1:lines:{n}") for n in (1, 3)]
    with CaptureQueriesContext(connection) as captured:
        answer = post(client_for("finance"), "/api/approvals/decide/",
                      {"ids": ids, "decision": "approve"})  # fmt: skip
    assert answer.json()["done"] == 2
    groups = [q for q in captured.captured_queries if '"auth_group"' in q["sql"]]
    assert len(groups) == 1


@pytest.mark.parametrize(
    "body",
    [
        {"ids": [], "decision": "approve"},
        {"ids": [1, 1], "decision": "approve"},
        {"ids": ["x"], "decision": "approve"},
        {"ids": [1], "decision": "perhaps"},
        {"ids": list(range(1, 502)), "decision": "approve"},
    ],
)
def test_a_malformed_bulk_body_is_a_400_naming_the_field(
    demo: DemoUsers, client_for: ClientFor, body: dict[str, object]
) -> None:
    answer = post(client_for("finance"), "/api/approvals/decide/", body)
    assert answer.status_code == 400
    assert set(answer.json()) & {"ids", "decision"}


def test_the_archive_lists_closed_requests_with_who_decided_what_and_when(
    demo: DemoUsers, client_for: ClientFor
) -> None:
    finance, legal = client_for("finance"), client_for("legal")
    run = start(client_for("analyst"), "invoice-sign-off", INVOICE)
    assert decide(finance, request_id(run, "fin"), "approve", "in budget").status_code == 202
    assert decide(legal, request_id(run, "leg"), "reject", "bad terms").status_code == 202
    drain(run)
    archive = finance.get("/api/approvals/?status=closed").json()["results"]
    assert [(r["node"], r["outcome"]) for r in archive] == [("fin", "approved")]
    [entry] = archive[0]["decisions"]
    assert (entry["user"], entry["decision"], entry["comment"]) == (
        "finance",
        "approve",
        "in budget",
    )
    assert entry["at"]
    everything = client_for("admin").get("/api/approvals/?status=closed").json()["results"]
    assert sorted((r["node"], r["outcome"]) for r in everything) == [
        ("fin", "approved"),
        ("leg", "rejected"),
    ]
    assert finance.get("/api/approvals/").json()["results"] == []
    assert finance.get("/api/approvals/?status=done").status_code == 400


def test_the_count_is_what_the_caller_may_decide(demo: DemoUsers, client_for: ClientFor) -> None:
    start(client_for("analyst"), "batch-line-approval", LINES)
    start(client_for("finance"), "invoice-sign-off", INVOICE)  # finance's own run: SoD
    counts = {
        name: client_for(name).get("/api/approvals/count/").json()["open"]
        for name in ("finance", "legal", "analyst", "admin")
    }
    assert counts == {"finance": 2, "legal": 1, "analyst": 0, "admin": 0}


def test_search_and_filters_narrow_the_inbox(demo: DemoUsers, client_for: ClientFor) -> None:
    finance = client_for("finance")
    start(client_for("analyst"), "batch-line-approval", LINES)
    start(client_for("analyst"), "invoice-sign-off", INVOICE)

    def titles(query: str) -> list[str]:
        return [r["title"] for r in finance.get(f"/api/approvals/?{query}").json()["results"]]

    assert titles("q=line+30000") == ["Line C: 30000"]
    assert titles("flow=invoice-sign-off") == ["Finance sign-off for I-3"]
    assert titles("group=legal") == []
    assert len(titles("group=finance")) == 3


def test_a_request_leaves_the_inbox_of_whoever_decided_it_while_others_still_owe_theirs(
    demo: DemoUsers, client_for: ClientFor
) -> None:
    from tests.django.approval_helpers import approval_graph, publish

    graph = approval_graph(policy="all")
    graph["nodes"][2]["groups"] = ["finance", "legal"]
    publish(client_for("analyst"), "both-groups", graph)
    run = start(client_for("analyst"), "both-groups", {"amount": 3})
    finance, legal = client_for("finance"), client_for("legal")
    pk = request_id(run, "ask")
    assert decide(finance, pk, "approve").status_code == 202
    run = drain(run)
    assert ApprovalRequest.objects.get(pk=pk).status == "open"
    assert finance.get("/api/approvals/count/").json()["open"] == 0
    assert finance.get("/api/approvals/").json()["results"] == []
    assert finance.get(f"/api/approvals/{pk}/").json()["may_decide"] is False
    assert [r["id"] for r in legal.get("/api/approvals/").json()["results"]] == [pk]
    assert decide(legal, pk, "approve").status_code == 202
    assert drain(run).state["decision"] == "approved"
