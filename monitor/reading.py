"""What the monitor reads of a run, beside its tree: executions and per-execution views."""

from __future__ import annotations

from typing import Any

from engine import durable
from engine.core.events import RunStatus, Trace
from engine.core.executions import ExecutionTree, executions, explain_execution
from engine.models import Run, TraceEvent
from engine.store import DjangoStore


def execution_tree(run: Run) -> dict[str, Any]:
    """Return the run's executions, from its trace."""
    trace = DjangoStore().trace(str(run.pk))
    found = executions(trace, RunStatus(run.status), run.error or "")
    return {"run": str(run.pk), "status": run.status,
            "executions": [e.to_json() for e in found]}  # fmt: skip


def execution_view(run: Run, execution_id: str) -> dict[str, Any] | str:
    """Return each node's color and reason in one execution, or why there is none."""
    trace = DjangoStore().trace(str(run.pk))
    status, ended = RunStatus(run.status), run.error or ""
    known = {e.id for e in executions(trace, status, ended)}
    if execution_id not in known:
        shown = execution_id[:80]
        return f"this run has no execution {shown!r}" if shown else "name one: ?id=root:1"
    graphs = durable.run_graphs(str(run.pk), None)
    verdicts = explain_execution(graphs, trace, status, execution_id, ended)
    return {
        "run": str(run.pk), "execution": execution_id, "status": run.status,
        "colors": {path: v.color.value for path, v in verdicts.items()},
        "reasons": {path: v.reason for path, v in verdicts.items()},
    }  # fmt: skip


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
        self.seq = 0
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
