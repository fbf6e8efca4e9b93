"""The durable runtime against the oracle: demo flows run durably (Celery's tasks called in
this process), driven at random (decide, delegate, cancel, advance). After every step:

- the colors the monitor's tree serves (monitor/reading.py, over the stored rows) are the
  oracle's, computed from the stored trace and the graphs alone;
- the execution tree a socket sends has the oracle's status for every execution;
- the deltas a socket pushes, applied in order to its first snapshot, give a fresh tree.
"""

import os
import random
from typing import Any

import pytest
from django.contrib.auth.models import Group, User
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from approvals.models import ApprovalRequest, ApprovalStatus
from approvals.refusals import DecisionRefused
from approvals.services import decide_request, delegate
from engine.core.events import Decision
from engine.models import Run
from engine.runtime import runs, state_cache
from monitor import deltas, reading
from tests.django.durable_driver import drain
from tests.django.test_monitor__deltas import CASES, snapshot, start_demo
from tests.oracle.model import Model

pytestmark = pytest.mark.django_db
EXAMPLES = max(10, int(os.environ.get("BRAID_ORACLE_EXAMPLES", "80")) // 2)
# The flows that wait for people are drawn three times as often as those that run through.
PAUSING = ("approval-or-timeout", "batch-line-approval", "invoice-sign-off")
DRAWN = CASES + 2 * [case for case in CASES if case[0] in PAUSING]
DECIDERS = ("finance", "legal", "deputy")


def oracle_of(run: Run) -> Model:
    """Return the oracle over a stored run: its stored trace and graphs, nothing else."""
    run.refresh_from_db()
    return Model(state_cache.run_graphs(str(run.pk), run.graphs), reading.whole_trace(str(run.pk)))


def deputy() -> User:
    """Return a person in both approving groups, who holds no seat until handed one."""
    person, _ = User.objects.get_or_create(username="deputy")
    person.groups.add(*Group.objects.filter(name__in=("finance", "legal")))
    return person


def step(run: Run, rng: random.Random) -> str:
    """Take one random step the run allows; return what it was ('' once it has finished).

    A refused decision or delegation (a seat already taken, a person who may not) is a step
    that changed nothing, as it is for the person who tried.
    """
    run.refresh_from_db()
    if run.status in ("completed", "failed", "cancelled"):
        return ""
    requests = list(ApprovalRequest.objects.filter(run=run, status=ApprovalStatus.OPEN))
    move = rng.choice(["decide"] * 3 * bool(requests) + ["delegate"] * bool(requests)
                      + ["cancel", "advance"])  # fmt: skip
    request = rng.choice(requests) if requests else None
    try:
        if move == "decide" and request is not None:
            decision = rng.choice([Decision.APPROVE, Decision.APPROVE, Decision.REJECT])
            decide_by_anyone(request, rng.sample(DECIDERS, len(DECIDERS)), decision)
        elif move == "delegate" and request is not None:
            delegate(request, User.objects.get(username=rng.choice(DECIDERS[:2])), "deputy")
        elif move == "cancel":
            runs.cancel(run, "admin", "chaos")
    except DecisionRefused:
        move += " (refused)"
    drain(run)
    return move


def decide_by_anyone(request: ApprovalRequest, names: list[str], decision: Decision) -> None:
    """Record the decision of the first of these people who may take it (the last refusal
    is raised when none may)."""
    for name in names:
        try:
            decide_request(request, User.objects.get(username=name), decision, comment="ok")
            return
        except DecisionRefused:
            if name == names[-1]:
                raise


@settings(
    max_examples=EXAMPLES,
    derandomize=os.environ.get("BRAID_ORACLE_RANDOM") != "1",  # as tests/oracle: repeatable
    deadline=None,
    suppress_health_check=list(HealthCheck),
)
@given(st.sampled_from(DRAWN), st.integers(0, 2**32 - 1))
def test_served_colors_executions_and_deltas_of_durable_runs_are_the_oracles(
    demo: dict[str, Any], case: tuple[str, dict[str, Any]], seed: int
) -> None:
    deputy()
    run = start_demo(*case)
    drain(run)  # its first step (an unstarted run has no trace for the oracle to read)
    live = reading.LiveExecutions(str(run.pk))
    held = last = snapshot(run, live)
    rng = random.Random(seed)
    moves: list[str] = []
    for _ in range(10):
        fresh = snapshot(run)
        model = oracle_of(run)
        oracle = {path: color.value for path, color in model.colors().items()}
        assert {path: str(color) for path, color in fresh["colors"].items()} == oracle, moves
        statuses = {eid: color.value for eid, color in model.execution_statuses().items()}
        assert {e["id"]: e["status"] for e in fresh["executions"]} == statuses, moves
        now = snapshot(run, live)
        delta = deltas.tree_delta(last, now)
        if delta is not None:
            held, last = deltas.apply(held, delta), now
        assert held == fresh, moves
        move = step(run, rng)
        if not move:
            break
        moves.append(move)
