"""Retrying a failed run re-runs only the failed action; what completed is not re-run."""

import hashlib
import json

import pytest
from django.test import Client

from designer import services as flows
from engine.models import NodeState, Run, TraceEvent
from tests.django.durable_driver import drain


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


FLOW = {
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
    client_for, demo_users
) -> None:  # type: ignore[no-untyped-def]
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
