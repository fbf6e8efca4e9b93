"""A run socket's deltas, applied in order to its first snapshot, give the tree a fresh
snapshot derives: rows, colors, reasons, decisions and the execution tree, on durable runs
of the demo flows driven at random (decide, cancel, advance), checked after every step."""

import random
from typing import Any

import pytest
from django.contrib.auth.models import User
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from approvals.models import ApprovalRequest, ApprovalStatus
from approvals.refusals import DecisionRefused
from approvals.services import decide_request
from designer.models import FlowVersion
from engine.core.events import Decision
from engine.models import Run
from engine.runtime import runs
from monitor import deltas, reading
from runs import services
from tests.core.test_colors__walks import DEMOS
from tests.django.durable_driver import drain

pytestmark = pytest.mark.django_db
LINES = [{"id": f"l{i}", "amount": a} for i, a in enumerate([50, 15000, 20, 90000])]
CASES = [
    (name, {"lines": LINES} if name == "batch-line-approval" else data) for name, data in DEMOS
]


def snapshot(run: Run, live: reading.LiveExecutions | None = None) -> dict[str, Any]:
    """Return the tree a socket holds: a fresh one, or the executions changed since."""
    run.refresh_from_db()
    if live is None:
        return {
            **reading.run_tree(run),
            "executions": reading.LiveExecutions(str(run.pk)).all(run),
        }
    return {**reading.run_tree(run), "executions": live.changed(run)}


def start_demo(name: str, data: dict[str, Any]) -> Run:
    """Start a durable run of a published demo flow, as the analyst."""
    version = FlowVersion.objects.filter(flow__slug=name).order_by("-number").first()
    assert version is not None
    return runs.create_run(services.resolve_graphs(version.graph), name, data, version,
                              User.objects.get(username="analyst"))  # fmt: skip


def step(run: Run, rng: random.Random) -> bool:
    """Take one random step the run allows; return False once it has finished."""
    run.refresh_from_db()
    if run.status in ("completed", "failed", "cancelled"):
        return False
    open_requests = list(ApprovalRequest.objects.filter(run=run, status=ApprovalStatus.OPEN))
    move = rng.choice(["decide"] * (3 if open_requests else 0) + ["cancel", "advance"])
    if move == "decide":
        request = rng.choice(open_requests)
        for name in ("finance", "legal"):
            user = User.objects.get(username=name)
            decision = rng.choice([Decision.APPROVE, Decision.APPROVE, Decision.REJECT])
            try:
                decide_request(request, user, decision, comment=rng.choice(["", "ok"]))
            except DecisionRefused:
                continue
    elif move == "cancel":
        runs.cancel(run, "admin", "chaos")
    drain(run)
    return True


@settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.sampled_from(CASES), st.integers(0, 2**32 - 1))
def test_deltas_applied_to_the_first_snapshot_give_a_fresh_tree(
    demo: dict[str, Any], case: tuple[str, dict[str, Any]], seed: int
) -> None:
    run = start_demo(*case)
    live = reading.LiveExecutions(str(run.pk))
    run.refresh_from_db()
    held = {**reading.run_tree(run), "executions": live.all(run)}
    last = held
    rng = random.Random(seed)
    for _ in range(8):
        now = snapshot(run, live)
        delta = deltas.tree_delta(last, now)
        if delta is not None:
            held = deltas.apply(held, delta)
            last = now
        assert held == snapshot(run)
        if not step(run, rng):
            break
    assert deltas.apply(
        held, deltas.tree_delta(last, snapshot(run, live)) or {"status": held["status"]}
    ) == snapshot(run)
