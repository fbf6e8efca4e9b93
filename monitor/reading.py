"""What the monitor reads of a run: its tree (rows, colors, reasons, decisions) from one
SELECT of its rows, the writes that reach a node, its executions and one execution's view.

The engine runs runs; this module only reads what they left, and the derivations are the
X.
"""

from __future__ import annotations

import collections
import contextlib
import gc
import threading
from collections.abc import Iterator, Mapping
from typing import Any

from django.db.models import Q

from engine.core.colors import (
    FRAME_EVENTS,
    LOOP_EVENTS,
    Vote,
    approvals_of,
    clock_time,
    explain,
    loops_of,
    older_round_candidates,
    rows_cut_short,
    rows_in_older_rounds,
    votes_from,
)
from engine.core.events import RowStatus, RunStatus, Trace
from engine.core.executions import ExecutionTree, executions, explain_execution
from engine.core.graph import Graph
from engine.core.history import Write, lineage_writes
from engine.core.rows import NodeRow
from engine.models import NodeState, Run, TraceEvent
from engine.runtime.state_cache import run_graphs
from engine.runtime.store import DjangoStore

ROOT = "root:1"


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """Hold off the cyclic garbage collector for a burst of short-lived, acyclic objects.

    A 10,000-row tree allocates tens of thousands of rows, arrivals and verdicts; the
    collections they trigger scan the whole heap and took half the endpoint's time
    (bench.monitor: 187 -> 94 ms). Nothing here makes cycles, and the collector runs again
    as soon as the block ends.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def run_tree(run: Run) -> dict[str, Any]:
    """Return a run's node rows, colors and reasons: one SELECT of its rows beside the run."""
    with gc_paused():
        return build_tree(run)


def build_tree(run: Run) -> dict[str, Any]:
    """run_tree's work, with the collector running as usual."""
    rows = DjangoStore().rows(str(run.pk))
    deferred = "graphs" in run.get_deferred_fields()
    graphs = run_graphs(str(run.pk), None if deferred else run.graphs)
    votes = decided_votes(str(run.pk), graphs, rows)
    status = RunStatus(run.status)
    cut_rows = {} if status.finished else cut_short(str(run.pk), rows)
    older_rows = {} if status.finished else in_older_rounds(str(run.pk), graphs, rows)
    at = cancelled_clock(str(run.pk)) if status is RunStatus.CANCELLED else ""
    verdicts = explain(graphs, rows, status, run.error, votes=votes, cut_rows=cut_rows,
                       older_rows=older_rows, cancelled_at=at)  # fmt: skip
    return {
        "run": str(run.pk),
        "status": run.status,
        # In the order the rows were read: sorting 10,000 paths cost 5 ms, and neither the
        # browser nor a JSON reader depends on an object's key order.
        "nodes": {path: row.to_json() for path, row in rows.items()},
        "colors": {path: verdict.color for path, verdict in verdicts.items()},  # StrEnum: a str
        "reasons": {path: verdict.reason for path, verdict in verdicts.items()},
        # Who decided each decided approval (its row's execution), for the inspector.
        "decisions": {
            path: [v.to_json() for v in found if v.execution_id == rows[path].execution_id]
            for path, found in sorted(votes.items())
        },
    }


def cancelled_clock(run_id: str) -> str:
    """Return when the run was cancelled ("14:02 UTC"), from its run.cancelled event: one
    more query, made only for a cancelled run."""
    events = TraceEvent.objects.filter(run_id=run_id, event="run.cancelled")
    at = events.order_by("seq").values_list("at", flat=True).first()
    return "" if at is None else clock_time(at)


DECISIONS = frozenset({"approved", "rejected"})


def decided_votes(
    run_id: str, graphs: Mapping[str, Graph], rows: Mapping[str, NodeRow]
) -> dict[str, list[Vote]]:
    """Return who decided the run's decided approvals, from their approval.vote events: a
    second query, made only when an approval row is completed and not a gather's or task's.
    A run whose graphs have no approval looks at no row (a fork of 10,000 paid 1.5 ms)."""
    approvals = frozenset().union(*(approvals_of(graph) for graph in graphs.values()))
    if not approvals:
        return {}
    decided = [path for path, row in rows.items()
               if row.status is RowStatus.COMPLETED and isinstance(row.result, str)
               and row.result in DECISIONS and path.rpartition("/")[2] in approvals]  # fmt: skip
    if not decided:
        return {}
    events = TraceEvent.objects.filter(run_id=run_id, event="approval.vote", node__in=decided)
    return votes_from(
        Trace(e.event, e.execution_id, e.node or None, e.at, e.detail)
        for e in events.order_by("seq")
    )


def cut_short(run_id: str, rows: Mapping[str, NodeRow]) -> dict[str, str]:
    """Return the running or waiting rows of a live run whose frame was cancelled (an item
    its foreach let fail, a race lost in an earlier item): one more query, of those rows'
    frame events and the run's retries, made only when such rows lie below the root."""
    below = [path for path, row in rows.items()
             if row.status in (RowStatus.RUNNING, RowStatus.WAITING)
             and row.execution_id != ROOT]  # fmt: skip
    if not below:
        return {}
    events = TraceEvent.objects.filter(run_id=run_id).filter(
        Q(node__in=below, event__in=FRAME_EVENTS)
        | Q(event__in=("action.failed", "action.redriven"))
    )
    return rows_cut_short(
        (Trace(e.event, e.execution_id, e.node or None, e.at, e.detail)
         for e in events.order_by("seq")),
        rows,
    )  # fmt: skip


def in_older_rounds(
    run_id: str, graphs: Mapping[str, Graph], rows: Mapping[str, NodeRow]
) -> dict[str, str]:
    """Return the finished rows of a loop's earlier round where that loop still runs in the
    row's own item: a query of those loops' round events, made only when a loop's row has
    been overwritten by another item's (rows alone cannot tell then)."""
    loops = frozenset().union(*(loops_of(graph) for graph in graphs.values()))
    candidates = older_round_candidates(rows, loops) if loops else {}
    if not candidates:
        return {}
    events = TraceEvent.objects.filter(
        run_id=run_id, node__in={loop for loop, _, _ in candidates.values()},
        event__in=LOOP_EVENTS,
    ).order_by("seq")  # fmt: skip
    return rows_in_older_rounds(
        (Trace(e.event, e.execution_id, e.node or None, e.at, e.detail) for e in events),
        candidates,
    )


def node_writes(run: Run, path: str) -> tuple[str, list[Write]] | None:
    """Return a node's execution id (its row's) and the state writes of its lineage, read
    from the run's trace; None when the node has no row."""
    execution_id = (
        NodeState.objects.filter(run=run, node=path).values_list("execution_id", flat=True).first()
    )
    if execution_id is None:
        return None
    writes = lineage_writes(DjangoStore().trace(str(run.pk)), path, execution_id)
    return execution_id, writes or []


# Execution trees this process built, by run: a tree read again reads only the events
# traced since (a foreach of 10,000 has 80,000 events; bench/MONITOR.md).
TREES_KEPT = 32
_TREES: collections.OrderedDict[str, LiveExecutions] = collections.OrderedDict()
_TREES_LOCK = threading.Lock()


def execution_tree(run: Run) -> dict[str, Any]:
    """Return the run's executions, from its trace (the events since this process last
    read them, when it has read them before)."""
    run_id = str(run.pk)
    with _TREES_LOCK:
        live = _TREES.pop(run_id, None) or LiveExecutions(run_id)
    try:
        found = live.all(run)
    finally:
        with _TREES_LOCK:
            _TREES[run_id] = live
            while len(_TREES) > TREES_KEPT:
                _TREES.popitem(last=False)
    return {"run": run_id, "status": run.status, "executions": found}


def execution_view(run: Run, execution_id: str) -> dict[str, Any] | str:
    """Return each node's color and reason in one execution, or why there is none."""
    trace = whole_trace(str(run.pk))
    status, ended = RunStatus(run.status), run.error or ""
    known = {e.id for e in executions(trace, status, ended)}
    if execution_id not in known:
        shown = execution_id[:80]
        return f"this run has no execution {shown!r}" if shown else "name one: ?id=root:1"
    graphs = run_graphs(str(run.pk), None)
    verdicts = explain_execution(graphs, trace, status, execution_id, ended)
    return {
        "run": str(run.pk), "execution": execution_id, "status": run.status,
        "colors": {path: v.color.value for path, v in verdicts.items()},
        "reasons": {path: v.reason for path, v in verdicts.items()},
    }  # fmt: skip


# The seq before a run's first event: its trace starts at 0 with run.started.
NOTHING_READ = -1


def whole_trace(run_id: str) -> list[Trace]:
    """Return the run's whole trace, in order."""
    return trace_since(run_id, NOTHING_READ)[0]


def trace_since(run_id: str, seq: int) -> tuple[list[Trace], int]:
    """Return the run's trace events after `seq`, in order, and the last seq read."""
    rows = TraceEvent.objects.filter(run_id=run_id, seq__gt=seq).order_by("seq")
    events, last = [], seq
    for seq_, event, execution_id, node, at, detail in rows.values_list(
        "seq", "event", "execution_id", "node", "at", "detail"
    ):
        events.append(Trace(event, execution_id, node or None, at, detail))
        last = seq_
    return events, last


class LiveExecutions:
    """A socket's execution tree: it reads only the events traced since it last looked,
    and tells which executions changed."""

    def __init__(self, run_id: str) -> None:
        self.run_id = run_id
        self.tree = ExecutionTree()
        self.seq = NOTHING_READ
        self.sent: dict[str, dict[str, Any]] = {}

    def all(self, run: Run) -> list[dict[str, Any]]:
        """Return every execution now (and remember them as sent)."""
        self.read(run)
        return list(self.sent.values())

    def changed(self, run: Run) -> list[dict[str, Any]]:
        """Return the executions that changed or appeared since the last call."""
        before = self.sent
        self.read(run)
        return [e for key, e in self.sent.items() if before.get(key) != e]

    def read(self, run: Run) -> None:
        events, self.seq = trace_since(self.run_id, self.seq)
        self.tree.add(events)
        found = self.tree.executions(RunStatus(run.status), run.error or "")
        self.sent = {e.id: e.to_json() for e in found}
