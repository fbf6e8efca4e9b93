"""Segregation of duties: the run's starter may not decide its approvals unless allowed."""

import io

import pytest
from django.core.management import call_command

from approvals.models import ApprovalRequest
from engine.models import TraceEvent
from runs import services
from tests.django.approval_helpers import (
    INVOICE,
    approval_graph,
    decide,
    footprint,
    publish,
    request_id,
    start,
)
from tests.django.durable_driver import drain
from tests.django.fixture_types import ClientFor, DemoUsers

pytestmark = pytest.mark.django_db


def test_the_starter_of_an_invoice_run_may_not_approve_its_finance_step(
    demo: DemoUsers, client_for: ClientFor
) -> None:
    finance = client_for("finance")
    run = start(finance, "invoice-sign-off", INVOICE)
    before = footprint(run)
    refused = decide(finance, request_id(run, "fin"), "approve", "my own invoice")
    assert (refused.status_code, refused.json()) == (
        403,
        {
            "code": "approval.starter",
            "detail": f"finance started run {run.pk} and so may not decide its approval at fin "
            "(segregation of duties; the node does not set allow_starter)",
        },
    )
    assert footprint(drain(run)) == before
    assert ApprovalRequest.objects.get(run=run, node="fin").status == "open"


def test_a_node_that_allows_the_starter_takes_their_decision_and_the_audit_says_so(
    demo: DemoUsers, client_for: ClientFor
) -> None:
    publish(client_for("analyst"), "self-ok", approval_graph(allow_starter=True))
    finance = client_for("finance")
    run = start(finance, "self-ok", {"amount": 5})
    assert decide(finance, request_id(run, "ask"), "approve").status_code == 202
    run = drain(run)
    assert (run.status, run.state["decision"]) == ("completed", "approved")
    votes = TraceEvent.objects.filter(run=run, event="approval.vote")
    assert [v.detail["user"] for v in votes] == ["finance"]


def test_braid_decide_refuses_the_starter_of_an_in_process_run(demo: DemoUsers) -> None:
    version = services.latest_version("invoice-sign-off")
    starter = demo["finance"]
    state = services.start_run(version.graph, "invoice", INVOICE, version, started_by=starter)
    out = io.StringIO()
    with pytest.raises(SystemExit) as exit_status:
        call_command("braid", "decide", state.run_id, "fin", "approve", user="finance", stdout=out)
    assert exit_status.value.code == 1
    assert "segregation of duties" in out.getvalue()
    assert ApprovalRequest.objects.get(run_id=state.run_id, node="fin").status == "open"
    assert not TraceEvent.objects.filter(run_id=state.run_id, event="approval.vote").exists()


def test_allow_starter_must_be_a_boolean(demo: DemoUsers, client_for: ClientFor) -> None:
    from tests.django.approval_helpers import post

    made = post(
        client_for("analyst"),
        "/api/flows/",
        {"slug": "bad-flag", "draft": approval_graph(allow_starter="yes")},
    )
    assert made.status_code == 201
    checked = post(client_for("analyst"), "/api/flows/bad-flag/validate/", {}).json()
    assert [(p["code"], p["node"]) for p in checked["errors"]] == [("field.type", "ask")]
