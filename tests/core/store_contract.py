"""The contract every ExecutionStore passes: in memory here, Django on SQLite and PostgreSQL.

A store test module imports `CONTRACT` and parametrizes it over a factory of fresh stores.
"""

from collections.abc import Callable

import pytest

from engine.core.events import CloseApproval, RequestApproval, RowStatus, RunStatus, Trace, WriteRow
from engine.core.store import ExecutionStore, UnknownRun

StoreFactory = Callable[[], ExecutionStore]


def row(
    node: str, status: str, execution_id: str, attempt: int = 1, result: object = None
) -> WriteRow:
    """Build a row write."""
    return WriteRow(
        node=node,
        status=RowStatus(status),
        execution_id=execution_id,
        result=result,
        attempt=attempt,
    )  # type: ignore[arg-type]


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
    commit = lambda *ws: store.commit("r", RunStatus.RUNNING, {}, list(ws), [], None)  # noqa: E731
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


CONTRACT = [
    check_a_run_round_trips_its_snapshot_status_and_graphs,
    check_an_unknown_run_raises,
    check_trace_events_append_in_commit_order,
    check_a_newer_iteration_wins_whatever_the_arrival_order,
    check_equal_ids_never_regress_a_terminal_row_except_for_a_higher_attempt,
    check_approval_requests_stay_open_until_closed_in_the_order_they_opened,
    check_asking_again_or_closing_again_changes_nothing,
    check_a_request_opened_and_closed_in_one_commit_is_closed,
]
