"""Retrying a failed run re-runs only the failed action; what completed is not re-run."""

import hashlib
import json
from typing import Any

import pytest
from django.test import Client

from approvals.models import ApprovalRequest
from designer import services as flows
from engine.actions import ACTIONS
from engine.core.events import Decision
from engine.core.runtime import perform
from engine.models import Dispatch, NodeState, Run, TraceEvent
from engine.runtime import clock, outbox, results, step
from runs import services
from tests.django.durable_driver import drain, row_of
from tests.django.fixture_types import ClientFor, DemoUsers


def failing_then_passing_seed() -> int:
    """Return a seed for which fail_sometimes (rate 0.5) fails attempt 1 and passes attempt 2."""
    for seed in range(1000):
        draws = [
            int(hashlib.sha256(f"{seed}|flaky|root:1:split.b:1|{n}".encode()).hexdigest()[:8], 16)
            / 0xFFFFFFFF
            for n in (1, 2)
        ]
        if draws[0] < 0.5 <= draws[1]:
            return seed
    raise AssertionError("no such seed")


FLOW: dict[str, Any] = {
    "format": "braid.graph/1",
    "name": "Retry me",
    "state": {"log": {"reducer": "append"}, "out": {"reducer": "merge"}},
    "nodes": [
        {"id": "start", "type": "start"},
        {"id": "split", "type": "fork", "branches": ["a", "b"]},
        {"id": "steady", "type": "task", "action": "noop", "params": {"value": ["steady"]},
         "output": "log"},
        {"id": "flaky", "type": "task", "action": "fail_sometimes",
         "params": {"seed": failing_then_passing_seed(), "rate": 0.5}, "output": "out"},
        {"id": "join", "type": "gather", "slots": ["a", "b"]},
        {"id": "done", "type": "end"},
    ],
    "edges": [
        {"source": "start", "target": "split"},
        {"source": "split", "branch": "a", "target": "steady"},
        {"source": "split", "branch": "b", "target": "flaky"},
        {"source": "steady", "target": "join", "slot": "a"},
        {"source": "flaky", "target": "join", "slot": "b"},
        {"source": "join", "target": "done"},
    ],
}  # fmt: skip


@pytest.mark.django_db
def test_a_retried_run_reruns_only_the_failed_action_with_the_next_attempt(
    client_for: ClientFor, demo_users: DemoUsers
) -> None:
    flows.import_graph(demo_users["analyst"], FLOW, "retry-me", True)
    admin: Client = client_for("admin")
    body = admin.post(
        "/api/runs/", json.dumps({"flow": "retry-me"}), content_type="application/json"
    ).json()
    run = drain(Run.objects.get(pk=body["id"]))
    assert run.status == "failed"
    assert run.error.startswith("fail_sometimes failed after 1 attempt(s): failed on purpose")
    failed = NodeState.objects.get(run=run, node="flaky")
    assert (failed.status, failed.attempt) == ("failed", 1)
    assert client_for("analyst").post(f"/api/runs/{run.pk}/retry/").status_code == 403
    assert admin.post(f"/api/runs/{run.pk}/retry/").status_code == 202
    run = drain(run)
    assert (run.status, run.state["log"]) == ("completed", ["steady"])
    rows = {r.node: (r.status, r.attempt) for r in NodeState.objects.filter(run=run)}
    assert rows["flaky"] == ("completed", 2)
    assert rows["steady"] == ("completed", 1)
    dispatched = TraceEvent.objects.filter(run=run, event="action.dispatched")
    assert sorted(e.node for e in dispatched) == ["flaky", "flaky", "steady"]
    again = admin.post(f"/api/runs/{run.pk}/retry/")
    assert (again.status_code, again.json()["code"]) == (409, "run.not_retryable")


SIGNED = {
    **FLOW,
    "name": "Retry beside an approval",
    "nodes": [
        {"id": "start", "type": "start"},
        {"id": "split", "type": "fork", "branches": ["a", "b"]},
        {"id": "sign", "type": "approval", "groups": ["finance"], "policy": "any",
         "title": "Sign"},
        {"id": "signed", "type": "set", "values": {"log": "['signed']"}},
        *[n for n in FLOW["nodes"] if n["id"] in ("flaky", "join", "done")],
    ],
    "edges": [
        {"source": "start", "target": "split"},
        {"source": "split", "branch": "a", "target": "sign"},
        {"source": "split", "branch": "b", "target": "flaky"},
        {"source": "sign", "outcome": "approved", "target": "signed"},
        {"source": "signed", "target": "join", "slot": "a"},
        {"source": "flaky", "target": "join", "slot": "b"},
        {"source": "join", "target": "done"},
    ],
}  # fmt: skip


@pytest.mark.django_db
def test_a_retry_reopens_the_requests_the_failure_closed_and_keeps_a_decision_it_refused(
    client_for: ClientFor, demo_users: DemoUsers
) -> None:
    flows.import_graph(demo_users["analyst"], SIGNED, "retry-signed", True)
    admin: Client = client_for("admin")
    body = admin.post(
        "/api/runs/", json.dumps({"flow": "retry-signed"}), content_type="application/json"
    ).json()
    run_id = body["id"]
    step.advance(run_id)  # asks finance and dispatches the flaky action
    dispatch = Dispatch.objects.get(run_id=run_id)
    failure = perform(ACTIONS, outbox.action_command(dispatch.command), run_id, clock.now_text)
    results.record_results([(row_of(dispatch), failure)])  # recorded, not yet applied
    sign = ApprovalRequest.objects.get(run_id=run_id)
    # finance decides before the failure is applied; the failed run then refuses it
    services.decide(run_id, "sign", demo_users["finance"], Decision.APPROVE)
    step.advance(run_id)
    sign.refresh_from_db()
    assert (Run.objects.get(pk=run_id).status, sign.status, sign.outcome) == (
        "failed", "closed",
        "fail_sometimes failed after 1 attempt(s): failed on purpose (draw 0.383 < rate 0.5)",
    )  # fmt: skip
    assert admin.post(f"/api/runs/{run_id}/retry/").status_code == 202
    sign.refresh_from_db()
    assert (sign.status, sign.outcome, sign.closed_at) == ("open", "", None)
    run = drain(Run.objects.get(pk=run_id))
    sign.refresh_from_db()
    assert (run.status, run.state["log"], sign.status, sign.outcome) == (
        "completed", ["signed"], "closed", "approved",
    )  # fmt: skip
    votes = TraceEvent.objects.filter(run=run, event="approval.vote")
    assert [(v.detail["user"], v.detail["decision"]) for v in votes] == [("finance", "approve")]
