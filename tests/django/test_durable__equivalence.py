"""The durable runtime gives what the in-process runtime gives, delivered once or twice."""

import io
import json

import pytest

from designer.demo import demo_documents
from engine import durable, services
from engine.core.events import ApprovalDecided, Decision
from engine.core.runtime import ManualClock
from engine.models import NodeState, Run, TraceEvent
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
DECISIONS = {  # node, user, groups, decision: applied in order whenever the run waits
    "approval-or-timeout": [("approve", "finance", ("finance",), "approve")],
    "batch-line-approval": [("review", "finance", ("finance",), "approve")],
    "invoice-sign-off": [
        ("leg", "legal", ("legal",), "approve"),
        ("fin", "finance", ("finance",), "approve"),
    ],
    "vendor-payment": [("review", "finance", ("finance",), "reject")],
}


def outcome(run: Run) -> tuple[object, ...]:
    """What both runtimes must agree on: status, state, rows, per-execution traces."""
    rows = {r.node: (r.status, r.execution_id, json.dumps(r.result), r.attempt)
            for r in NodeState.objects.filter(run=run)}  # fmt: skip
    traces: dict[str, list[tuple[str, str, str]]] = {}
    for event in TraceEvent.objects.filter(run=run).order_by("seq"):
        timeless = {k: v for k, v in event.detail.items() if k != "due"}  # times differ
        detail = json.dumps(timeless, sort_keys=True)
        traces.setdefault(event.execution_id, []).append((event.event, event.node, detail))
    return run.status, run.state, rows, traces


def durable_run(slug: str, deliveries: int) -> Run:
    """Run a demo flow on the durable path, deciding approvals as they come up."""
    version = services.latest_version(slug)
    run = durable.create_run(services.resolve_graphs(version.graph), slug, INPUTS[slug], version)
    run = drain(run, deliveries)
    for node, user, groups, decision in DECISIONS.get(slug, []):
        state = durable.load_state(run)
        key = next(k for k, f in state.approvals() if state.path(f) == node)
        event = ApprovalDecided(at=durable.now_text(), key=key, user=user, groups=groups,
                                decision=Decision(decision))  # fmt: skip
        for _ in range(deliveries):
            durable.submit(str(run.pk), f"{key}|{user}", event)
        run = drain(run, deliveries)
    return run


def in_process_run(slug: str) -> Run:
    """Run the same flow with the in-process runtime and the same decisions."""
    version = services.latest_version(slug)
    state = services.start_run(version.graph, slug, INPUTS[slug], version, clock=ManualClock())
    for node, user, _, decision in DECISIONS.get(slug, []):
        from django.contrib.auth.models import User

        services.decide(state.run_id, node, User.objects.get(username=user), Decision(decision),
                        clock=ManualClock())  # fmt: skip
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
    assert outcome(durable_run(slug, deliveries)) == expected


def test_the_equivalence_cases_cover_every_demo_flow() -> None:
    assert sorted(slug for slug, _ in demo_documents()) == sorted(INPUTS)
