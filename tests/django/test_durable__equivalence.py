"""The durable runtime gives what the in-process runtime gives, delivered once or twice."""

import io
import json
from typing import Any

import pytest
from django.contrib.auth.models import User

from approvals.models import ApprovalRequest
from approvals.refusals import AlreadyDecided
from designer.demo import demo_documents
from engine.core.events import Decision
from engine.core.runtime import ManualClock
from engine.models import NodeState, Run, Runtime, TraceEvent
from engine.runtime import runs
from runs import services
from tests.django.durable_driver import drain

INPUTS = {
    "a-risk-score": {"amount": 700, "new_vendor": True},
    "approval-or-timeout": {"item": "chair", "hours": 2},
    "b-and-d-or-e": {"urgent": False},
    "batch-line-approval": {"lines": [{"id": "A", "amount": 12000}, {"id": "B", "amount": 5}]},
    "invoice-sign-off": {"invoice": {"id": "I-1", "amount": 300, "vendor": "Acme"}},
    "staged-gathers": {},
    "vendor-payment": {"vendor": "Acme", "amount": 90000, "new_vendor": True},
}
DECISIONS = {  # node, user, decision: applied in order whenever the run waits
    "approval-or-timeout": [("approve", "finance", "approve")],
    "batch-line-approval": [("review", "finance", "approve")],
    "invoice-sign-off": [("leg", "legal", "approve"), ("fin", "finance", "approve")],
    "vendor-payment": [("review", "finance", "reject")],
}


type Outcome = tuple[
    str,
    Any,  # the run's state, as its JSON field holds it
    dict[str, tuple[str, str, str, int]],
    dict[str, list[tuple[str, str, str]]],
    list[tuple[str, str, str, str, str, str, str, str]],
]


def outcome(run: Run) -> Outcome:
    """What both runtimes must agree on: status, state, rows, traces, approval requests."""
    rows = {r.node: (r.status, r.execution_id, json.dumps(r.result), r.attempt)
            for r in NodeState.objects.filter(run=run)}  # fmt: skip
    asked = sorted((a.node, a.execution_id, a.title, a.instructions, json.dumps(a.groups),
                    json.dumps(a.policy), a.status, a.outcome)
                   for a in ApprovalRequest.objects.filter(run=run))  # fmt: skip
    traces: dict[str, list[tuple[str, str, str]]] = {}
    for event in TraceEvent.objects.filter(run=run).order_by("seq"):
        timeless = {k: v for k, v in event.detail.items() if k != "due"}  # times differ
        detail = json.dumps(timeless, sort_keys=True)
        traces.setdefault(event.execution_id, []).append((event.event, event.node, detail))
    return run.status, run.state, rows, traces, asked


def durable_run(slug: str, deliveries: int) -> Run:
    """Run a demo flow on the durable path, deciding approvals as they come up.

    Deciding twice is a person clicking twice: the second records nothing.
    """
    version = services.latest_version(slug)
    run = runs.create_run(services.resolve_graphs(version.graph), slug, INPUTS[slug], version)
    run = drain(run, deliveries)
    for node, username, decision in DECISIONS.get(slug, []):
        user = User.objects.get(username=username)
        decided = services.decide(str(run.pk), node, user, Decision(decision))
        asked = ApprovalRequest.objects.get(run=run, node=node)
        assert decided == services.Decided(str(run.pk), Runtime.DURABLE, f"{asked.key}|{username}")
        for _ in range(deliveries - 1):
            with pytest.raises(AlreadyDecided):
                services.decide(str(run.pk), node, user, Decision(decision))
        run = drain(run, deliveries)
    return run


def in_process_run(slug: str) -> Run:
    """Run the same flow with the in-process runtime and the same decisions."""
    version = services.latest_version(slug)
    state = services.start_run(version.graph, slug, INPUTS[slug], version, clock=ManualClock())
    for node, username, decision in DECISIONS.get(slug, []):
        user = User.objects.get(username=username)
        services.decide(state.run_id, node, user, Decision(decision), clock=ManualClock())
    run = Run.objects.get(pk=state.run_id)
    run.state = services.runtime().load(state.run_id).current_view()
    return run


@pytest.mark.django_db
@pytest.mark.parametrize("deliveries", [1, 2], ids=["once", "twice"])
@pytest.mark.parametrize("slug", sorted(INPUTS))
def test_every_demo_flow_ends_the_same_on_both_runtimes(slug: str, deliveries: int) -> None:
    from django.core.management import call_command

    call_command("braid", "demo", stdout=io.StringIO())
    expected = outcome(in_process_run(slug))
    assert expected[0] in ("completed", "failed")
    outcomes = {"approve": "approved", "reject": "rejected"}
    decided = sorted((node, outcomes[decision]) for node, _, decision in DECISIONS.get(slug, []))
    assert [(a[0], a[6], a[7]) for a in expected[4]] == [(n, "closed", o) for n, o in decided]
    assert outcome(durable_run(slug, deliveries)) == expected


def test_the_equivalence_cases_cover_every_demo_flow() -> None:
    assert sorted(slug for slug, _ in demo_documents()) == sorted(INPUTS)
