"""The colors of a run: every node (`explain`), one node (`explain_node`), and the run's."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from engine.core import graph as g
from engine.core.colors.arrivals import Arrival, Verdict
from engine.core.colors.climb import Climb
from engine.core.colors.evidence import (
    Vote,
    cancel_time,
    older_round_candidates,
    rows_cut_short,
    rows_in_older_rounds,
    votes_from,
)
from engine.core.colors.shapes import loops_of
from engine.core.colors.walk import Walk
from engine.core.events import RunStatus, Trace
from engine.core.execution_ids import ExecutionId
from engine.core.rows import NodeRow


def colors(
    graphs: Mapping[str, g.Graph],
    rows: Mapping[str, NodeRow],
    status: RunStatus,
    ended: str = "",
) -> dict[str, str]:
    """Return the color of every node path of the run (subflow nodes as `sub/child`)."""
    return {path: v.color.value for path, v in explain(graphs, rows, status, ended).items()}


def explain(
    graphs: Mapping[str, g.Graph],
    rows: Mapping[str, NodeRow],
    status: RunStatus,
    ended: str = "",
    focus: ExecutionId | None = None,
    cut: str = "",
    votes: Mapping[str, Sequence[Vote]] | None = None,
    cut_rows: Mapping[str, str] | None = None,
    older_rows: Mapping[str, str] | None = None,
    cancelled_at: str = "",
) -> dict[str, Verdict]:
    """Walk root → leaves: return every node path's color and reason.

    `ended` is the run's error text when it failed or was cancelled ("cancelled by admin:
    …"); it explains the rows a finished run left running or waiting. With a `focus`
    (an item or iteration: engine/core/executions.py), the walk enters that execution of
    its foreach or loop exactly instead of the whole body; `cut` says why that execution
    ended early while the run went on. `votes` name who decided (`votes_from`), and
    `cut_rows` the running or waiting rows whose frame was cancelled while the run goes
    on (`rows_cut_short`): in a body, rows alone cannot tell an earlier item's; and
    `older_rows` the finished rows of a loop's earlier round where that loop still runs in
    the row's own item (`rows_in_older_rounds`); `cancelled_at` the clock time an admin
    cancelled the run (`clock_time`), which the reasons of the rows it cut short name.
    """
    walk = Walk(graphs, rows, status, ended, focus, cut)
    walk.votes = votes or {}
    walk.cut_rows = cut_rows or {}
    walk.older_rows = older_rows or {}
    walk.cancelled_at = cancelled_at
    walk.scope("main", "", Arrival(ExecutionId.root(), None))
    return walk.result


def explain_run(
    graphs: Mapping[str, g.Graph],
    rows: Mapping[str, NodeRow],
    status: RunStatus,
    ended: str,
    trace: Sequence[Trace],
) -> dict[str, Verdict]:
    """Return explain() over a run whose whole trace is at hand (the in-process runtime,
    the CLI): who decided, and which rows' frames were cut short, come from it."""
    loops = frozenset().union(*(loops_of(graph) for graph in graphs.values()))
    older = rows_in_older_rounds(trace, older_round_candidates(rows, loops))
    return explain(graphs, rows, status, ended, votes=votes_from(trace),
                   cut_rows=rows_cut_short(trace, rows), older_rows=older,
                   cancelled_at=cancel_time(trace))  # fmt: skip


def explain_node(
    graphs: Mapping[str, g.Graph],
    rows: Mapping[str, NodeRow],
    status: RunStatus,
    path: str,
    ended: str = "",
    votes: Mapping[str, Sequence[Vote]] | None = None,
    cut_rows: Mapping[str, str] | None = None,
    older_rows: Mapping[str, str] | None = None,
    cancelled_at: str = "",
) -> Verdict | None:
    """Walk leaf → root: return one node path's color and reason, or None if unreachable.

    Only the node's ancestors are visited (and, for a node inside a subflow, the subflow
    node's ancestors in the parent graph). The arguments are explain()'s.
    """
    walk = Walk(graphs, rows, status, ended)
    walk.votes = votes or {}
    walk.cut_rows = cut_rows or {}
    walk.older_rows = older_rows or {}
    walk.cancelled_at = cancelled_at
    return Climb(walk).verdict("main", "", path)
