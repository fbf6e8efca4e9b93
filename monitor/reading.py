"""What the monitor reads of a run, beside its tree: executions and per-execution views."""

from __future__ import annotations

from typing import Any

from engine import durable
from engine.core.events import RunStatus
from engine.core.executions import executions, explain_execution
from engine.models import Run
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
