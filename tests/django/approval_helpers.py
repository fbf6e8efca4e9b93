"""Helpers shared by the approval tests: publish a flow, start runs, decide through the API."""

import json
from typing import Any

from django.test import Client

from approvals.models import ApprovalRequest
from engine.models import PendingEvent, Run, TraceEvent
from tests.django.durable_driver import drain

INVOICE = {"invoice": {"id": "I-3", "amount": 300, "vendor": "Acme"}}


def post(client: Client, url: str, body: object) -> Any:
    """POST JSON; return the response."""
    return client.post(url, json.dumps(body), content_type="application/json")


def publish(analyst: Client, slug: str, graph: dict[str, Any]) -> None:
    """Create and publish a flow as an analyst."""
    created = post(analyst, "/api/flows/", {"slug": slug, "draft": graph})
    assert created.status_code == 201, created.content
    published = post(analyst, f"/api/flows/{slug}/publish/", None)
    assert published.status_code == 201, published.content


def start(client: Client, flow: str, input_value: object) -> Run:
    """Start a durable run through the API and advance it to its first pause."""
    response = post(client, "/api/runs/", {"flow": flow, "input": input_value})
    assert response.status_code == 201, response.content
    return drain(Run.objects.get(pk=response.json()["id"]))


def request_id(run: Run, node: str, execution_id: str | None = None) -> int:
    """Return the id of a run's request at a node (and execution)."""
    found = ApprovalRequest.objects.filter(run=run, node=node)
    if execution_id:
        found = found.filter(execution_id=execution_id)
    return found.get().pk


def decide(client: Client, pk: int, decision: str, comment: str = "") -> Any:
    """POST a decision; return the response."""
    return post(client, f"/api/approvals/{pk}/decide/", {"decision": decision, "comment": comment})


def footprint(run: Run) -> tuple[Any, ...]:
    """Return everything a refused decision must leave as it was: requests, inbox, trace, run."""
    run.refresh_from_db()
    requests = list(
        ApprovalRequest.objects.filter(run=run)
        .order_by("id")
        .values_list("id", "status", "outcome", "assignee_id")
    )
    inbox = list(
        PendingEvent.objects.filter(run=run).order_by("id").values_list("key", "applied_at")
    )
    return (
        run.status,
        run.trace_length,
        requests,
        inbox,
        TraceEvent.objects.filter(run=run).count(),
    )


def approval_graph(**config: Any) -> dict[str, Any]:
    """Return a flow with one approval by finance (any) configured with `config`."""
    return {
        "format": "braid.graph/1",
        "name": "One approval",
        "state": {"total": {"reducer": "sum", "default": 0}, "decision": {"reducer": "overwrite"}},
        "nodes": [
            {"id": "start", "type": "start"},
            {"id": "record", "type": "set", "values": {"total": "input.amount"}},
            {"id": "ask", "type": "approval", "groups": ["finance"], "policy": "any", **config},
            {"id": "yes", "type": "set", "values": {"decision": "'approved'"}},
            {"id": "no", "type": "set", "values": {"decision": "'rejected'"}},
            {"id": "done", "type": "end"},
        ],
        "edges": [
            {"source": "start", "target": "record"},
            {"source": "record", "target": "ask"},
            {"source": "ask", "outcome": "approved", "target": "yes"},
            {"source": "ask", "outcome": "rejected", "target": "no"},
            {"source": "yes", "target": "done"},
            {"source": "no", "target": "done"},
        ],
    }
