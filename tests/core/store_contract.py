"""The contract every ExecutionStore passes: in memory here, Django on SQLite and PostgreSQL.

A store test module imports `CONTRACT` and parametrizes it over a factory of fresh stores.
"""

from collections.abc import Callable

import pytest

from engine.core.events import (
    ApprovalDecided,
    CloseApproval,
    Decision,
    RequestApproval,
    RowStatus,
    RunStatus,
    Start,
    Trace,
    WriteRow,
)
from engine.core.parts import SnapshotDelta, restore, take_delta
from engine.core.scheduler import step
from engine.core.state import RunState
from engine.core.store import ExecutionStore, UnknownRun
from engine.core.values import JSON
from tests.core.harness import graph_of

StoreFactory = Callable[[], ExecutionStore]


def row(
    node: str, status: str, execution_id: str, attempt: int = 1, result: JSON = None
) -> WriteRow:
    """Build a row write."""
    return WriteRow(
        node=node,
        status=RowStatus(status),
        execution_id=execution_id,
        result=result,
        attempt=attempt,
    )


def stored(store: ExecutionStore, run_id: str = "r") -> dict[str, tuple[str, str, int]]:
    """Return the stored rows as (status, execution id, attempt)."""
    return {p: (r.status.value, r.execution_id, r.attempt) for p, r in store.rows(run_id).items()}


def check_a_run_round_trips_its_snapshot_status_and_graphs(make: StoreFactory) -> None:
    store = make()
    store.create("r", "flow v1", {"x": 1}, {"main": {"format": "braid.graph/1"}})
    store.commit("r", RunStatus.WAITING, {"frames": [1]}, [], [], None)
    loaded = store.load("r")
    assert (loaded.status, loaded.snapshot, loaded.input, loaded.flow) == (
        RunStatus.WAITING,
        {"frames": [1]},
        {"x": 1},
        "flow v1",
    )
    assert loaded.graphs == {"main": {"format": "braid.graph/1"}}
    with pytest.raises(ValueError):
        store.create("r", "again", None, {})


def check_an_unknown_run_raises(make: StoreFactory) -> None:
    with pytest.raises(UnknownRun):
        make().load("00000000-0000-0000-0000-000000000000")


def check_trace_events_append_in_commit_order(make: StoreFactory) -> None:
    store = make()
    store.create("r", "f", None, {})
    first = Trace(event="a", execution_id="root:1", node="n", at="t1", detail={"k": 1})
    second = Trace(event="b", execution_id="root:1:x:1", node=None, at="t2", detail={})
    store.commit("r", RunStatus.RUNNING, {}, [], [first], None)
    store.commit("r", RunStatus.RUNNING, {}, [], [second], None)
    assert store.trace("r") == [first, second]


def check_a_newer_iteration_wins_whatever_the_arrival_order(make: StoreFactory) -> None:
    store = make()
    store.create("r", "f", None, {})
    writes = [
        row("n", "completed", "root:1:loop:3"),
        row("n", "running", "root:1:loop:2"),
        row("n", "completed", "root:1:loop:10"),
        row("n", "failed", "root:1:loop:9"),
    ]
    store.commit("r", RunStatus.RUNNING, {}, writes, [], None)
    assert stored(store) == {"n": ("completed", "root:1:loop:10", 1)}


def check_equal_ids_never_regress_a_terminal_row_except_for_a_higher_attempt(
    make: StoreFactory,
) -> None:
    store = make()
    store.create("r", "f", None, {})

    def commit(*writes: WriteRow) -> None:
        store.commit("r", RunStatus.RUNNING, {}, list(writes), [], None)

    commit(row("t", "running", "root:1"), row("t", "completed", "root:1"))
    commit(row("t", "running", "root:1"))  # a duplicate, late "running"
    assert stored(store) == {"t": ("completed", "root:1", 1)}
    commit(row("t", "failed", "root:1", attempt=1), row("t", "running", "root:1", attempt=2))
    assert stored(store) == {"t": ("running", "root:1", 2)}
    commit(row("t", "failed", "root:1", attempt=1))  # a late write of the older attempt
    assert stored(store) == {"t": ("running", "root:1", 2)}
    commit(row("t", "waiting", "root:1", attempt=2))
    assert stored(store) == {"t": ("waiting", "root:1", 2)}


def request(run_id: str, node: str, execution_id: str, title: str = "") -> RequestApproval:
    """Build an approval request of the finance group."""
    return RequestApproval(
        key=f"{run_id}|{node}|{execution_id}|approval", node=node, execution_id=execution_id,
        groups=("finance",), policy={"quorum": 2}, title=title or f"Sign {node}",
        instructions="Check the amount.",
    )  # fmt: skip


def close(asked: RequestApproval, reason: str) -> CloseApproval:
    """Build the close of a request."""
    return CloseApproval(key=asked.key, reason=reason)


def ask(store: ExecutionStore, run_id: str, *approvals: RequestApproval | CloseApproval) -> None:
    """Commit a step that only opens and closes approval requests."""
    store.commit(run_id, RunStatus.WAITING, {}, [], [], None, approvals=approvals)


def check_approval_requests_stay_open_until_closed_in_the_order_they_opened(
    make: StoreFactory,
) -> None:
    store = make()
    store.create("r", "f", None, {})
    store.create("s", "f", None, {})
    first, second = request("r", "fin", "root:1:lines:2"), request("r", "fin", "root:1:lines:1")
    ask(store, "r", first, second)
    ask(store, "s", request("s", "leg", "root:1"))
    assert store.approvals("r") == [first, second]
    ask(store, "r", close(first, "approved"))
    assert store.approvals("r") == [second]
    ask(store, "r", close(second, "run cancelled by admin"))
    assert store.approvals("r") == []
    assert store.approvals("s") == [request("s", "leg", "root:1")]
    with pytest.raises(UnknownRun):
        store.approvals("00000000-0000-0000-0000-000000000000")


def check_asking_again_or_closing_again_changes_nothing(make: StoreFactory) -> None:
    store = make()
    store.create("r", "f", None, {})
    asked = request("r", "fin", "root:1")
    ask(store, "r", asked)
    ask(store, "r", request("r", "fin", "root:1", title="Asked again"))  # a recomputed step
    assert store.approvals("r") == [asked]
    ask(store, "r", close(asked, "rejected"))
    ask(store, "r", asked, close(asked, "approved"))
    assert store.approvals("r") == []


def check_a_request_opened_and_closed_in_one_commit_is_closed(make: StoreFactory) -> None:
    store = make()
    store.create("r", "f", None, {})
    fin, leg = request("r", "fin", "root:1:split.finance:1"), request("r", "leg", "root:1")
    ask(store, "r", fin, leg, close(fin, "the run failed"))
    assert store.approvals("r") == [leg]
    ask(store, "r", close(request("r", "nowhere", "root:1"), "never asked"))
    assert store.approvals("r") == [leg]


APPROVALS = {
    "format": "braid.graph/1",
    "name": "Items, each approved, then two branches",
    "state": {"log": {"reducer": "append"}},
    "nodes": [
        {"id": "start", "type": "start"},
        {"id": "each", "type": "foreach", "items": "input.items", "as": "item", "concurrency": 3},
        {"id": "ask", "type": "approval", "groups": ["finance"], "policy": "any"},
        {"id": "note", "type": "set", "values": {"log": "[item]"}},
        {"id": "split", "type": "fork", "branches": ["a", "b"]},
        {"id": "wa", "type": "set", "values": {"log": "['a']"}},
        {"id": "both", "type": "gather", "slots": ["a", "b"], "conflicts": "error"},
        {"id": "done", "type": "end"},
    ],
    "edges": [
        {"source": "start", "target": "each"},
        {"source": "each", "outcome": "item", "target": "ask"},
        {"source": "ask", "outcome": "approved", "target": "note"},
        {"source": "ask", "outcome": "rejected", "target": "note"},
        {"source": "note", "target": "each"},
        {"source": "each", "outcome": "done", "target": "split"},
        {"source": "split", "branch": "a", "target": "wa"},
        {"source": "split", "branch": "b", "target": "both", "slot": "b"},
        {"source": "wa", "target": "both", "slot": "a"},
        {"source": "both", "target": "done"},
    ],
}


def check_a_run_committed_as_deltas_loads_as_its_whole_snapshot(make: StoreFactory) -> None:
    """Each step writes only its delta; what loads is the whole state, at every step."""
    store = make()
    graphs = {"main": graph_of(APPROVALS)}
    store.create("r", "items", {"items": [1, 2, 3, 4, 5]}, {})
    state = RunState(run_id="r", graphs=graphs)
    state, _ = step(state, Start(at="2026-01-01T00:00:00Z", input={"items": [1, 2, 3, 4, 5]}))
    deltas = []
    for n in range(6):
        deltas.append(take_delta(state))
        store.commit("r", state.status, deltas[-1], [], [], state.error)
        assert store.load("r").snapshot == {**state.to_json(), "stored": "braid.parts/1"}
        state = restore(store.load("r").snapshot, graphs) if n % 2 else state
        key = next((key for key, _ in state.approvals()), None)
        if key is None:
            break
        decision = Decision.REJECT if n == 2 else Decision.APPROVE
        event = ApprovalDecided(at="2026-01-01T00:01:00Z", key=key, user=f"u{n}",
                                groups=("finance",), decision=decision)  # fmt: skip
        state, _ = step(state, event)
    assert state.result == {"log": [1, 2, 3, 4, 5, "a"]}
    assert deltas[0].replace and not any(delta.replace for delta in deltas[1:])
    # The third decision writes its item's entry, the foreach frame and the item's write;
    # it drops the item's frame, wait and activation count. Nothing else of the run.
    assert sorted(deltas[3].put) == ["done:1/3", "frame:1", "write:4/0"]
    assert deltas[3].drop == ["frame:4", "wait:r|ask|root:1:each:3|approval", "live:f1:3"]


def check_a_whole_snapshot_replaces_the_parts(make: StoreFactory) -> None:
    store = make()
    store.create("r", "f", None, {})
    head = {"format": "braid.parts/1", "run_id": "r", "status": "waiting", "ready": [],
            "working": 0, "next_frame": 1, "next_scope": 1, "now": "t", "result": None,
            "error": None, "started": True}  # fmt: skip
    waits: dict[str, JSON] = {"wait:k1": 1, "wait:k2": 2}
    store.commit("r", RunStatus.WAITING, SnapshotDelta(head, waits, [], True), [], [], None)
    dropped = SnapshotDelta({**head, "now": "t2"}, {"wait:k3": 3}, ["wait:k1"])
    store.commit("r", RunStatus.WAITING, dropped, [], [], None)
    assert store.load("r").snapshot["waits"] == {"k2": 2, "k3": 3}
    assert store.load("r").snapshot["now"] == "t2"
    store.commit("r", RunStatus.WAITING, {"frames": [1]}, [], [], None)
    assert store.load("r").snapshot == {"frames": [1]}
    store.commit("r", RunStatus.WAITING, SnapshotDelta(head, {"wait:k4": 4}, [], True), [], [])
    assert store.load("r").snapshot["waits"] == {"k4": 4}


CONTRACT = [
    check_a_run_round_trips_its_snapshot_status_and_graphs,
    check_an_unknown_run_raises,
    check_trace_events_append_in_commit_order,
    check_a_newer_iteration_wins_whatever_the_arrival_order,
    check_equal_ids_never_regress_a_terminal_row_except_for_a_higher_attempt,
    check_approval_requests_stay_open_until_closed_in_the_order_they_opened,
    check_asking_again_or_closing_again_changes_nothing,
    check_a_request_opened_and_closed_in_one_commit_is_closed,
    check_a_run_committed_as_deltas_loads_as_its_whole_snapshot,
    check_a_whole_snapshot_replaces_the_parts,
]
