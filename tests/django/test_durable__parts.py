"""Incremental persistence on the database: parts per step, the state cache, old runs."""

import json
from typing import Any

import pytest
from django.contrib.auth.models import Group, User
from django.db import connection
from django.db.models import F
from django.test.utils import CaptureQueriesContext

from approvals.models import ApprovalRequest, ApprovalStatus
from engine.core.events import Decision, RunStatus
from engine.core.parts import GONE, SnapshotDelta
from engine.core.state import RunState
from engine.core.values import JSON
from engine.models import PartChange, Run, RunPart
from engine.runtime import records, runs, state_cache, step, store
from engine.runtime.store import DjangoStore, changed_parts, graphs_digest
from runs import services
from tests.django.durable_driver import Processes, drain
from tests.django.plans import examined, executed_plans, parameter_arrays

# Committed for real: a step's state enters the process's cache in its on_commit.
pytestmark = pytest.mark.django_db(transaction=True)

ITEMS = 6


def approvals_flow() -> dict[str, Any]:
    """A foreach of `input.items`, all at once, each item approved by finance, then counted."""
    return {
        "format": "braid.graph/1",
        "name": "Approve each",
        "state": {"seen": {"reducer": "append"}},
        "nodes": [
            {"id": "start", "type": "start"},
            {"id": "each", "type": "foreach", "items": "input.items", "as": "item",
             "concurrency": ITEMS},
            {"id": "ask", "type": "approval", "groups": ["finance"], "policy": "any"},
            {"id": "note", "type": "set", "values": {"seen": "[item]"}},
            {"id": "end", "type": "end"},
        ],
        "edges": [
            {"source": "start", "target": "each"},
            {"source": "each", "outcome": "item", "target": "ask"},
            {"source": "ask", "outcome": "approved", "target": "note"},
            {"source": "note", "target": "each"},
            {"source": "each", "outcome": "done", "target": "end"},
        ],
    }  # fmt: skip


def started() -> tuple[Run, User]:
    """Start the flow durably up to its open approvals; return the run and a finance user."""
    user = User.objects.create(username="fin")
    user.groups.add(Group.objects.create(name="finance"))
    items = list(range(10, 10 + ITEMS))
    run = runs.create_run(services.resolve_graphs(approvals_flow()), "each", {"items": items})
    return drain(run), user


def decide(run: Run, user: User, index: int) -> None:
    """Decide item `index` (0-based) through the service function, without applying it."""
    eid = f"root:1:each:{index + 1}"
    services.decide(str(run.pk), "ask", user, Decision.APPROVE, execution_id=eid)


def part_keys(run: Run) -> set[str]:
    """Return the keys of the run's stored parts."""
    return set(RunPart.objects.filter(run=run).values_list("key", flat=True))


def reads_parts(sql: str) -> bool:
    """Return whether a statement reads the parts table."""
    return sql.startswith("SELECT") and "engine_runpart" in sql


def test_a_decision_writes_only_the_parts_it_changed() -> None:
    run, user = started()
    before = part_keys(run)
    # Frame 1 is the foreach, frames 2-7 and lineages 2-7 its items.
    assert {k for k in before if k.startswith(("frame:", "wait:", "live:f"))} == {
        *(f"frame:{i}" for i in range(1, ITEMS + 2)),
        *(f"wait:{run.pk}|ask|root:1:each:{n}|approval" for n in range(1, ITEMS + 1)),
        *(f"live:f1:{n}" for n in range(1, ITEMS + 1)),
    }
    decide(run, user, 2)
    with CaptureQueriesContext(connection) as queries:
        assert step.advance(str(run.pk)) == 1
    item = f"{run.pk}|ask|root:1:each:3|approval"
    assert part_keys(run) == (before - {"frame:4", f"wait:{item}", "live:f1:3"}) | {
        "done:1/3", "write:4/0",
    }  # fmt: skip
    # This process committed the run's last step: the state comes from its cache.
    assert not [q for q in queries if reads_parts(q["sql"])]
    assert Run.objects.get(pk=run.pk).snapshot["format"] == "braid.parts/1"


class Loads:
    """Counts the full loads (every part read) and the catch-ups of the steps it watches."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.full = 0
        self.caught: list[set[str]] = []
        full, changed = store.stored_snapshot, store.changed_parts  # what state_cache calls

        def counted_full(*args: Any) -> Any:
            self.full += 1
            return full(*args)

        def counted_changed(*args: Any) -> Any:
            found = changed(*args)
            if found is not None:
                self.caught.append(set(found))
            return found

        monkeypatch.setattr(state_cache, "stored_snapshot", counted_full)
        monkeypatch.setattr(state_cache, "changed_parts", counted_changed)


def decided_elsewhere(run: Run, user: User, index: int) -> tuple[int, RunState]:
    """Decide an item and apply it as another worker would; return the state this process
    held before, with its version (put back in its cache, as a worker would keep it)."""
    version, stale = state_cache._STATES[str(run.pk)]
    decide(run, user, index)
    state_cache._STATES.clear()  # another worker applies the decision
    assert step.advance(str(run.pk)) == 1
    state_cache._STATES[str(run.pk)] = (version, stale)  # this process still holds the old state
    return version, stale


def as_stored(run: Run) -> dict[str, Any]:
    """Return the run's whole state as its parts hold it, in JSON."""
    whole: dict[str, Any] = json.loads(json.dumps(DjangoStore().load(str(run.pk)).snapshot))
    return whole


def test_a_state_another_worker_moved_on_from_is_caught_up_from_the_parts_it_changed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    run, user = started()
    version, _ = decided_elsewhere(run, user, 0)
    elsewhere = PartChange.objects.get(run=run, version=version + 1)
    decide(run, user, 1)
    loads = Loads(monkeypatch)
    assert step.advance(str(run.pk)) == 1
    # Only the parts the other worker's step changed were read: the foreach, item 1's frame,
    # wait and live count (gone), its done entry and its write, and item 2's frame.
    item = f"{run.pk}|ask|root:1:each:1|approval"
    assert (loads.full, loads.caught) == (0, [set(json.loads(elsewhere.keys))])
    assert loads.caught[0] == {"frame:1", "frame:2", f"wait:{item}", "live:f1:1", "done:1/1",
                               "write:2/0"}  # fmt: skip
    version, state = state_cache._STATES[str(run.pk)]
    assert version == Run.objects.get(pk=run.pk).snapshot_version
    assert json.loads(json.dumps({**state.to_json(), "stored": None})) == {
        **as_stored(run), "stored": None,
    }  # fmt: skip
    for index in range(2, ITEMS):
        decide(run, user, index)
    run = drain(run)
    assert (run.status, run.state) == ("completed", {"seen": list(range(10, 10 + ITEMS))})


def test_decisions_landing_on_three_workers_in_turn_read_only_what_changed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    run, user = started()
    processes = Processes(3)
    processes.caches[0][str(run.pk)] = state_cache._STATES[str(run.pk)]  # the one that started it
    monkeypatch.setattr(state_cache, "_STATES", processes)
    loads = Loads(monkeypatch)
    for index in range(ITEMS):
        decide(run, user, index)
        assert step.advance(str(run.pk)) == 1
    assert Run.objects.get(pk=run.pk).state == {"seen": list(range(10, 10 + ITEMS))}
    # Workers 2 and 3 read the run once each; every step after caught up with what the two
    # decisions before it changed: the foreach's frame, and each item's frame, wait, live
    # count, done entry and write.
    assert loads.full == 2
    assert [len(keys) for keys in loads.caught] == [11, 11, 11]


def test_a_state_further_behind_than_the_changes_kept_is_read_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    run, user = started()
    version, _ = decided_elsewhere(run, user, 0)
    PartChange.objects.filter(run=run, version=version + 1).delete()  # as if pruned
    decide(run, user, 1)
    loads = Loads(monkeypatch)
    assert step.advance(str(run.pk)) == 1
    assert (loads.full, loads.caught) == (1, [])
    for index in range(2, ITEMS):
        decide(run, user, index)
    run = drain(run)
    assert (run.status, run.state) == ("completed", {"seen": list(range(10, 10 + ITEMS))})


def test_a_retry_records_no_changes_so_a_state_from_before_it_is_read_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    run, user = started()
    version, _ = state_cache._STATES[str(run.pk)]
    # As `retry` does: a whole snapshot written, one version more, and no change row.
    DjangoStore().commit(str(run.pk), RunStatus.WAITING, DjangoStore().load(str(run.pk)).snapshot,
                         [], [])  # fmt: skip
    assert Run.objects.get(pk=run.pk).snapshot_version == version + 1
    assert not PartChange.objects.filter(run=run, version=version + 1).exists()
    decide(run, user, 0)
    loads = Loads(monkeypatch)
    assert step.advance(str(run.pk)) == 1
    assert (loads.full, loads.caught) == (1, [])


def test_a_run_keeps_the_changes_of_its_last_versions_and_none_once_finished() -> None:
    run_id = "5b7a43d1-7c55-4c8e-9d0e-2f9e0c1d4a61"
    DjangoStore().create(run_id, "parts", None, {})
    for version in range(1, 101):
        delta = SnapshotDelta({}, {f"p{version}": version}, [f"p{version - 1}"])
        DjangoStore().commit(run_id, RunStatus.RUNNING, delta, [], [], version=version)
    kept = list(PartChange.objects.filter(run_id=run_id).values_list("version", flat=True))
    # Pruned at versions 80 and 96 down to the last CHANGES_KEPT: 33 to 100.
    assert sorted(kept) == list(range(33, 101))
    assert json.loads(PartChange.objects.get(run_id=run_id, version=100).keys) == ["p100", "p99"]
    assert changed_parts(run_id, 97, 100) == {"p98": GONE, "p99": GONE, "p100": 100, "p97": GONE}
    assert changed_parts(run_id, 20, 100) is None  # versions 21 to 32 left no record
    done = SnapshotDelta({}, {}, ["p100"])
    DjangoStore().commit(run_id, RunStatus.COMPLETED, done, [], [], version=101)
    assert not PartChange.objects.filter(run_id=run_id).exists()


def test_a_run_stored_as_one_snapshot_loads_and_its_next_step_writes_parts() -> None:
    run, user = started()
    whole = DjangoStore().load(str(run.pk)).snapshot
    del whole["stored"]  # as a run stored before the parts were
    RunPart.objects.filter(run=run).delete()
    Run.objects.filter(pk=run.pk).update(snapshot=whole, snapshot_version=F("snapshot_version") + 1)
    state_cache._STATES.clear()
    for index in range(ITEMS):
        decide(run, user, index)
    run = drain(run)
    assert (run.status, run.state) == ("completed", {"seen": list(range(10, 10 + ITEMS))})
    assert run.snapshot["format"] == "braid.parts/1"
    assert DjangoStore().load(str(run.pk)).snapshot["frames"] == []
    assert ApprovalRequest.objects.filter(run=run, status=ApprovalStatus.OPEN).count() == 0


def test_a_run_whose_graphs_this_process_decoded_for_another_reads_no_graph_documents() -> None:
    first, _ = started()
    items = {"items": [1]}
    second = drain(runs.create_run(services.resolve_graphs(approvals_flow()), "each", items))
    assert first.graphs_digest == second.graphs_digest == graphs_digest(first.graphs)
    state_cache._GRAPHS.pop(str(second.pk), None)  # only the first run's entries are left
    state_cache._STATES.clear()  # a cold step: the state is read from its parts
    held = Run.objects.only(*records.RUN_COLUMNS).get(pk=second.pk)  # as a step locks it
    with CaptureQueriesContext(connection) as queries:
        state_cache.load_state(held, cached=False)
    assert not [q for q in queries if "graphs" in q["sql"]]
    assert [q for q in queries if reads_parts(q["sql"])]
    state_cache._GRAPHS.clear()  # a process that never decoded them reads them once
    with CaptureQueriesContext(connection) as queries:
        state_cache.load_state(held, cached=False)
    assert len([q for q in queries if "graphs" in q["sql"]]) == 1


def test_a_worker_keeps_no_state_of_a_finished_run() -> None:
    run, user = started()
    assert str(run.pk) in state_cache._STATES  # waiting on its approvals: kept for the next step
    for index in range(ITEMS):
        decide(run, user, index)
    run = drain(run)
    assert run.status == "completed"
    assert str(run.pk) not in state_cache._STATES


def test_a_step_dropping_many_parts_touches_each_part_once() -> None:
    """A gather drops hundreds of parts at once. Under a plan cached while the parts table
    was young, matching the keys to drop ran once per part of the run: 0.9 s for 871 of
    3,005 parts. The plan executed must read each part at most twice."""
    if connection.vendor != "postgresql":
        pytest.skip("the one-statement step write is PostgreSQL's")
    run_id = "9f0e6a52-3c1d-4a57-9a55-5a1f0c3d2b10"
    DjangoStore().create(run_id, "parts", None, {})

    def commit(put: dict[str, JSON], drop: list[str]) -> None:
        DjangoStore().commit(run_id, RunStatus.RUNNING, SnapshotDelta({}, put, drop), [], [],
                             trace_length=0)  # fmt: skip

    def steps() -> None:
        for _ in range(6):
            commit({}, ["f0"])  # planned while the run has no part
        commit({f"f{i}": i for i in range(3000)}, [])
        commit({}, [f"f{i}" for i in range(0, 3000, 3)])

    plans = executed_plans(steps)
    assert examined(plans[-1][1], "Delete") <= 2 * 3000
    assert parameter_arrays(plans[-1][1]) == []
    assert len(part_keys(Run.objects.get(pk=run_id))) == 2000
