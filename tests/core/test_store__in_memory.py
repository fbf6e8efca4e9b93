"""The in-memory store passes the store contract."""

from collections.abc import Callable

import pytest

from engine.core.events import RunStatus
from engine.core.parts import FORMAT, SnapshotDelta
from engine.core.store import InMemoryStore
from tests.core.store_contract import CONTRACT, StoreFactory


@pytest.mark.parametrize("check", CONTRACT, ids=lambda check: check.__name__)
def test_the_in_memory_store_keeps_the_store_contract(
    check: Callable[[StoreFactory], None],
) -> None:
    check(InMemoryStore)


def test_the_snapshot_log_takes_one_text_per_commit_and_compacts_when_loaded() -> None:
    store = InMemoryStore()
    store.create("r", "flow", {}, {})
    head = {"format": FORMAT, "run_id": "r", "status": "running"}
    deltas = [
        SnapshotDelta(head, {"wait:a": 1, "wait:b": 2}, [], replace=True),
        SnapshotDelta({**head, "status": "waiting"}, {"wait:c": 3}, ["wait:a"]),
        SnapshotDelta({**head, "status": "completed"}, {"wait:b": 4}, []),
    ]
    for delta in deltas:
        store.commit("r", RunStatus.RUNNING, delta, [], [])
    assert len(store.snapshots["r"].texts) == 3
    first = store.load("r").snapshot
    assert first["status"] == "completed"
    assert first["waits"] == {"b": 4, "c": 3}
    assert len(store.snapshots["r"].texts) == 1
    first["waits"]["b"] = 99  # a loaded snapshot is the caller's copy
    assert store.load("r").snapshot == {**first, "waits": {"b": 4, "c": 3}}
    store.commit("r", RunStatus.RUNNING, {"whole": True}, [], [])
    assert store.load("r").snapshot == {"whole": True}
    assert len(store.snapshots["r"].texts) == 1
