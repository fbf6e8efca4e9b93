"""The chaos oracle agrees with a clean durable run and finds each kind of corruption."""

import pytest
from django.contrib.auth.models import User

from approvals.models import ApprovalRequest
from chaos import workload
from chaos.oracle import compare
from designer.services import import_graph
from engine.core.events import Decision
from engine.models import NodeState, PendingEvent, Run, TraceEvent
from engine.runtime import runs
from runs import services
from tests.django.durable_driver import drain

pytestmark = pytest.mark.django_db

KINDS = ["fork", "foreach", "race", "loops", "subflow", "approval", "wait"]


def finished_run(demo_users: dict[str, User], deliveries: int = 1) -> Run:
    """A run of every kind of chaos block, driven to its end in this process."""
    import_graph(demo_users["analyst"], workload.child_flow(), workload.CHILD_SLUG, True)
    graphs = services.resolve_graphs(workload.flow(3, 99, KINDS))
    run = runs.create_run(graphs, "every block", {"salt": "3.1", "items": [1, 2, 3]})
    run = drain(run, deliveries)
    while run.status == "waiting":
        approval = ApprovalRequest.objects.filter(run=run, status="open").first()
        assert approval is not None, run.snapshot
        services.decide(str(run.pk), approval.node, demo_users["finance"], Decision.APPROVE,
                        execution_id=approval.execution_id)  # fmt: skip
        run = drain(run, deliveries)
    return run


@pytest.mark.parametrize("deliveries", [1, 2], ids=["once", "twice"])
def test_a_clean_durable_run_matches_the_oracle(
    demo_users: dict[str, User], deliveries: int
) -> None:
    run = finished_run(demo_users, deliveries)
    assert run.status in ("completed", "failed")
    assert TraceEvent.objects.filter(run=run, event="subflow.started").count() == 1
    assert compare(run) == []


def test_a_row_left_behind_is_a_mismatch(demo_users: dict[str, User]) -> None:
    run = finished_run(demo_users)
    row = NodeState.objects.filter(run=run, status="completed").order_by("node").first()
    assert row is not None
    NodeState.objects.filter(pk=row.pk).update(status="running")
    problems = compare(run)
    assert len(problems) == 1 and problems[0].startswith(f"rows differs: {row.node}: oracle")


def test_a_lost_trace_event_is_a_mismatch(demo_users: dict[str, User]) -> None:
    run = finished_run(demo_users)
    TraceEvent.objects.filter(run=run, seq=3).delete()
    problems = compare(run)
    assert len(problems) == 1 and problems[0].startswith("trace differs: at 3: oracle")


def test_a_result_the_action_did_not_give_is_a_mismatch(demo_users: dict[str, User]) -> None:
    run = finished_run(demo_users)
    row = PendingEvent.objects.filter(run=run, event__kind="action.completed").order_by("id")[0]
    PendingEvent.objects.filter(pk=row.pk).update(event={**row.event, "output": ["forged"]})
    problems = compare(run)
    assert problems[0].startswith(f"result {row.key}: durable ")
