"""A step computed before its lock (step.step_ahead): written with the lock in one
statement only at the version it was computed from, and otherwise applied the usual way,
once.

Each test starts a chain, steps it once in this process (which caches the state it
committed and hands back the first action), then records that action's result the way an
action task does (results.record_and_advance), after changing what the statement finds.
"""

import itertools
from collections.abc import Iterator, Sequence
from typing import Any

import pytest
from django.db import connection
from django.db.models import F

from engine.core.events import ActionCompleted, Cancel
from engine.models import Dispatch, NodeState, PendingEvent, Run, TraceEvent
from engine.runtime import clock, inbox, outbox, results, runs, state_cache, step
from engine.runtime.records import DispatchRow, Taken
from engine.runtime.transport import use_transport
from runs.services import resolve_graphs
from tests.django.test_durable__dispatch import chain_of
from tests.django.test_durable__wakeup import Advances

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def postgresql_only() -> None:
    if connection.vendor != "postgresql":
        pytest.skip("only PostgreSQL's backend sends a step with its lock")


class Kept(Advances):
    """A transport that notes the advances and the actions sent, and sends nothing."""

    def __init__(self) -> None:
        super().__init__()
        self.actions: list[int] = []

    def send_actions(self, dispatch_ids: Sequence[int]) -> None:
        self.actions += dispatch_ids


@pytest.fixture
def kept() -> Iterator[Kept]:
    """The messages sent are noted, not sent: each test runs the work itself."""
    transport = Kept()
    before = use_transport(transport)
    yield transport
    use_transport(before)


@pytest.fixture
def locks(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The runs whose lock was taken apart from the step (inbox.lock_and_take, by
    record_and_advance or by `advance`)."""
    taken: list[str] = []
    real = inbox.lock_and_take

    def lock_and_take(run_id: str, *args: Any, **kwargs: Any) -> Any:
        taken.append(str(run_id))
        return real(run_id, *args, **kwargs)

    monkeypatch.setattr(results, "lock_and_take", lock_and_take)
    monkeypatch.setattr(step, "lock_and_take", lock_and_take)
    return taken


def started(doc: dict[str, object]) -> tuple[str, DispatchRow]:
    """Start a run and step it here; return it and its first action, claimed."""
    run_id = str(runs.create_run(resolve_graphs(doc), "ahead", {}).pk)
    take = Taken(limit=1)
    assert step.advance(run_id, take) == 1
    assert len(take.dispatches) == 1
    return run_id, take.dispatches[0]


def result(dispatch: DispatchRow) -> ActionCompleted:
    return ActionCompleted(at=clock.now_text(), key=dispatch.key, output=1)


def trace_of(run_id: str) -> list[tuple[int, str, str]]:
    return list(TraceEvent.objects.filter(run_id=run_id).order_by("seq")
                .values_list("seq", "event", "node"))  # fmt: skip


def test_a_hop_of_a_run_this_process_stepped_last_takes_no_lock_of_its_own(
    kept: Kept, locks: list[str]
) -> None:
    run_id, first = started(chain_of(2))
    locks.clear()  # the start's own step took the lock
    results.record_and_advance(first, result(first), None)
    assert locks == []
    run = Run.objects.get(pk=run_id)
    assert (run.snapshot_version, run.step_attempts, run.trace_length) == (2, 0, 6)
    assert trace_of(run_id) == [
        (0, "run.started", ""), (1, "node.completed", "start"), (2, "action.dispatched", "t0"),
        (3, "action.completed", "t0"), (4, "node.completed", "t0"), (5, "action.dispatched", "t1"),
    ]  # fmt: skip
    assert dict(NodeState.objects.filter(run_id=run_id).values_list("node", "status")) == {
        "start": "completed", "t0": "completed", "t1": "running",
    }  # fmt: skip
    assert PendingEvent.objects.filter(run_id=run_id, applied_at=None).count() == 0
    second = Dispatch.objects.get(run_id=run_id, completed_at=None)
    assert outbox.action_command(second.command).node == "t1"
    assert Dispatch.objects.get(pk=first.pk).completed_at is not None
    assert (kept.sent, kept.actions) == ([run_id], [second.pk])  # the start's, and t1 sent


def test_a_run_another_worker_moved_gets_the_result_recorded_and_stepped_the_usual_way(
    kept: Kept, locks: list[str]
) -> None:
    run_id, first = started(chain_of(2))
    locks.clear()  # the start's own step took the lock
    # Another worker's step committed meanwhile: this process's state is of an older version.
    Run.objects.filter(pk=run_id).update(snapshot_version=F("snapshot_version") + 1)
    results.record_and_advance(first, result(first), None)
    assert locks == [run_id]  # the usual step took the lock after the statement took nothing
    run = Run.objects.get(pk=run_id)
    assert (run.snapshot_version, run.trace_length) == (3, 6)
    assert [seq for seq, _, _ in trace_of(run_id)] == list(range(6))
    events = PendingEvent.objects.filter(run_id=run_id).order_by("id")
    assert [(e.key, e.applied_at is not None) for e in events] == [
        ("start", True), (first.key, True),
    ]  # fmt: skip


def test_an_event_that_waits_is_applied_with_the_result_in_arrival_order(
    kept: Kept, locks: list[str]
) -> None:
    run_id, first = started(chain_of(2))
    locks.clear()  # the start's own step took the lock
    inbox.submit(run_id, "cancel", Cancel(at=clock.now_text(), by="test", reason="stop"))
    results.record_and_advance(first, result(first), None)
    assert locks == [run_id]
    assert Run.objects.get(pk=run_id).status == "cancelled"
    assert PendingEvent.objects.filter(run_id=run_id, applied_at=None).count() == 0
    applied = PendingEvent.objects.filter(run_id=run_id).order_by("applied_at", "id")
    assert [e.key for e in applied] == ["start", "cancel", first.key]


def test_a_result_delivered_twice_is_applied_once(kept: Kept, locks: list[str]) -> None:
    run_id, first = started(chain_of(3))
    locks.clear()  # the start's own step took the lock
    results.record_and_advance(first, result(first), None)
    before = (Run.objects.values_list("snapshot_version", "trace_length").get(pk=run_id),
              trace_of(run_id), Dispatch.objects.filter(run_id=run_id).count())  # fmt: skip
    # The same result again, by a delivery whose process still holds the run's state.
    results.record_and_advance(first, result(first), None)
    after = (Run.objects.values_list("snapshot_version", "trace_length").get(pk=run_id),
             trace_of(run_id), Dispatch.objects.filter(run_id=run_id).count())  # fmt: skip
    assert after == before
    assert PendingEvent.objects.filter(run_id=run_id, key=first.key).count() == 1


def test_a_run_with_a_step_attempt_counted_is_stepped_the_counted_way(
    kept: Kept, locks: list[str]
) -> None:
    run_id, first = started(chain_of(2))
    locks.clear()  # the start's own step took the lock
    Run.objects.filter(pk=run_id).update(step_attempts=1)  # a step may have died on it
    results.record_and_advance(first, result(first), None)
    run = Run.objects.get(pk=run_id)
    assert (run.snapshot_version, run.step_attempts, run.trace_length) == (2, 0, 6)
    assert PendingEvent.objects.filter(run_id=run_id, applied_at=None).count() == 0


def task_then_approval() -> dict[str, object]:
    """start -> t0 (noop) -> ask (an approval by finance) -> done."""
    ids = ["start", "t0", "ask"]
    return {
        "format": "braid.graph/1",
        "name": "Task then approval",
        "nodes": [
            {"id": "start", "type": "start"},
            {"id": "t0", "type": "task", "action": "noop", "params": {"value": 1}},
            {
                "id": "ask",
                "type": "approval",
                "groups": ["finance"],
                "policy": "any",
                "title": "approve?",
            },
            {"id": "done", "type": "end"},
        ],
        "edges": [
            *({"source": a, "target": b} for a, b in itertools.pairwise(ids)),
            {"source": "ask", "outcome": "approved", "target": "done"},
        ],
    }


def test_a_step_that_opens_an_approval_is_computed_once_and_written_after_the_lock(
    kept: Kept, locks: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    run_id, first = started(task_then_approval())
    locks.clear()  # the start's own step took the lock
    loads: list[str] = []
    real = state_cache.load_state

    def load_state(run: Run, cached: bool = True) -> Any:
        loads.append(str(run.pk))
        return real(run, cached)

    monkeypatch.setattr(step, "load_state", load_state)
    results.record_and_advance(first, result(first), None)
    assert locks == [run_id]  # its approval is written by statements of its own
    assert loads == []  # the state computed before the lock was taken as it was
    assert Run.objects.get(pk=run_id).status == "waiting"
    assert dict(NodeState.objects.filter(run_id=run_id).values_list("node", "status")) == {
        "start": "completed", "t0": "completed", "ask": "waiting",
    }  # fmt: skip
    assert state_cache.take_state(run_id) is not None  # its commit kept the new state
