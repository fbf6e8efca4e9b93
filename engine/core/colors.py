"""The monitor's colors, root to leaves (CONTRACT §4), from the graph, rows and run status.

Descend from `start` carrying the live execution id. A node whose row belongs to that
execution shows its status; decisions paint whole subgraphs: the outcome an IF/switch or
approval did not take is skipped, a race loser's branch is cancelled, downstream of a
failure is skipped, an older iteration's row under a live loop is pending, and anything
not reached is pending (skipped once the run finished; a row still running or waiting
in a finished run was cancelled). Skipped, cancelled and pending are never stored.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum

from engine.core import graph as g
from engine.core.events import RowStatus, RunStatus
from engine.core.execution_ids import ExecutionId
from engine.core.rows import NodeRow
from engine.core.state import subflow_key


class Color(StrEnum):
    """What the monitor shows for a node."""

    PENDING = "pending"
    RUNNING = "running"
    WAITING = "waiting"
    COMPLETED = "completed"
    FAILED = "failed"
    SKIPPED = "skipped"
    CANCELLED = "cancelled"


# How strongly an arrival claims a node: a live path beats any paint.
PAINT_RANK = {Color.SKIPPED: 1, Color.CANCELLED: 2, Color.PENDING: 3}
LIVE_RANK = 4


@dataclass(frozen=True, slots=True)
class Arrival:
    """How the walk reached a node: live with an execution id, or painted with a color."""

    execution_id: ExecutionId | None
    paint: Color | None
    loose: bool = False  # inside a foreach body: any item's row counts as live

    @property
    def rank(self) -> int:
        return LIVE_RANK if self.paint is None else PAINT_RANK[self.paint]


def colors(
    graphs: Mapping[str, g.Graph], rows: Mapping[str, NodeRow], status: RunStatus
) -> dict[str, str]:
    """Return the color of every node path of the run (subflow nodes as `sub/child`)."""
    walk = Walk(graphs, rows, status)
    walk.scope("main", "", ExecutionId.root())
    return walk.result


class Walk:
    """One root-to-leaves walk over a run's graphs."""

    def __init__(
        self, graphs: Mapping[str, g.Graph], rows: Mapping[str, NodeRow], status: RunStatus
    ) -> None:
        self.graphs = graphs
        self.rows = rows
        self.finished = status.finished
        self.result: dict[str, str] = {}

    def scope(
        self, key: str, prefix: str, execution_id: ExecutionId | None, paint: Color | None = None
    ) -> None:
        """Color one graph: the run's, or a subflow's under a path prefix."""
        graph = self.graphs.get(key)
        if graph is None:
            return
        start = next(node.id for node in graph.nodes if node.type is g.NodeType.START)
        best: dict[str, Arrival] = {}
        queue: deque[tuple[str, Arrival]] = deque([(start, Arrival(execution_id, paint))])
        while queue:
            node_id, arrival = queue.popleft()
            known = best.get(node_id)
            if known is not None and known.rank >= arrival.rank:
                continue
            best[node_id] = arrival
            node = graph.node(node_id)
            color = self.color(prefix + node_id, arrival, isinstance(node, g.GatherNode))
            self.result[prefix + node_id] = color.value
            for target, next_arrival in self.successors(graph, prefix, node, arrival, color):
                queue.append((target, next_arrival))

    def color(self, path: str, arrival: Arrival, gather: bool = False) -> Color:
        """Return a node's color from its row and how the walk arrived."""
        if arrival.paint is not None:
            return arrival.paint
        row = self.rows.get(path)
        if row is None or not self.belongs(row, arrival, gather):
            return Color.SKIPPED if self.finished else Color.PENDING
        if self.finished and row.status in (RowStatus.RUNNING, RowStatus.WAITING):
            return Color.CANCELLED
        return Color(row.status.value)

    def belongs(self, row: NodeRow, arrival: Arrival, gather: bool = False) -> bool:
        """Return whether the row was written by the live execution of the arrival.

        A gather's row carries its continuation's id: the common prefix of its inputs'.
        """
        assert arrival.execution_id is not None
        written = ExecutionId.parse(row.execution_id)
        if arrival.loose:
            return arrival.execution_id.is_prefix_of(written)
        if gather:
            return written.is_prefix_of(arrival.execution_id)
        return written == arrival.execution_id

    def successors(
        self, graph: g.Graph, prefix: str, node: g.Node, arrival: Arrival, color: Color
    ) -> list[tuple[str, Arrival]]:
        """Return where the walk goes next, and how, from a colored node."""
        edges = graph.outgoing(node.id)
        paint = downstream_paint(arrival, color)
        if paint is not None:
            return [
                (e.target, Arrival(None, paint)) for e in edges if not self.is_back_edge(graph, e)
            ]
        row = self.rows.get(prefix + node.id)
        if arrival.loose:
            # Inside a foreach body every item writes the same nodes: no item's decision
            # paints the others' paths, so each node shows the row the latest item left.
            assert arrival.execution_id is not None
            return [(e.target, arrival) for e in edges if not self.is_back_edge(graph, e)]
        eid = ExecutionId.parse(row.execution_id) if row else arrival.execution_id
        assert eid is not None
        return self.live_successors(graph, prefix, node, arrival, color, eid, row)

    def live_successors(
        self, graph: g.Graph, prefix: str, node: g.Node, arrival: Arrival, color: Color,
        eid: ExecutionId, row: NodeRow | None,
    ) -> list[tuple[str, Arrival]]:  # fmt: skip
        """Successors of a node that ran (or runs) in the live execution."""
        live = color is Color.COMPLETED
        onward: list[tuple[str, Arrival]] = []
        decided = row.result if row is not None else None
        for edge in graph.outgoing(node.id):
            if self.is_back_edge(graph, edge):
                continue
            onward.append((edge.target, self.edge_arrival(node, edge, arrival, eid, live, decided)))
        if isinstance(node, g.SubflowNode):
            self.scope(subflow_key(node), prefix + node.id + "/", eid.subflow(node.id), None)
        return onward

    def edge_arrival(
        self, node: g.Node, edge: g.Edge, arrival: Arrival, eid: ExecutionId, live: bool,
        decided: object,
    ) -> Arrival:  # fmt: skip
        """Return how the walk enters an edge's target from a node that ran."""
        pending = Arrival(None, Color.SKIPPED if self.finished else Color.PENDING)
        if isinstance(node, g.ForkNode) and edge.branch is not None:
            return Arrival(eid.branch(node.id, edge.branch), None, arrival.loose)
        if isinstance(node, g.RaceNode) and edge.branch is not None:
            if decided is None:
                return Arrival(eid.branch(node.id, edge.branch), None, arrival.loose)
            won = edge.branch == decided
            return (
                Arrival(eid.branch(node.id, edge.branch), None, arrival.loose)
                if won
                else Arrival(None, Color.CANCELLED)
            )
        if isinstance(node, g.ForeachNode | g.LoopNode) and edge.follows in (
            g.Outcome.ITEM.value,
            g.Outcome.BODY.value,
        ):
            return self.body_arrival(node, eid, decided)
        if not live:
            return pending
        if isinstance(node, g.IfNode | g.SwitchNode | g.ApprovalNode):
            return (
                Arrival(eid, None, arrival.loose)
                if edge.follows == decided
                else Arrival(None, Color.SKIPPED)
            )
        if isinstance(node, g.RaceNode):
            taken = edge.follows == decided or (edge.follows == g.Outcome.NEXT.value)
            return Arrival(eid, None, arrival.loose) if taken else Arrival(None, Color.SKIPPED)
        return Arrival(eid, None, arrival.loose)

    def body_arrival(
        self, node: g.ForeachNode | g.LoopNode, eid: ExecutionId, decided: object
    ) -> Arrival:
        """Enter a foreach body (any item's rows) or the live loop iteration's body."""
        if isinstance(node, g.ForeachNode):
            return Arrival(eid, None, loose=True)
        iteration = decided.get("iteration") if isinstance(decided, dict) else None
        if isinstance(iteration, int) and iteration > 0:
            return Arrival(eid.iteration(node.id, iteration), None)
        iterations = decided.get("iterations") if isinstance(decided, dict) else None
        if isinstance(iterations, int) and iterations > 0:
            return Arrival(eid.iteration(node.id, iterations), None)
        return Arrival(None, Color.SKIPPED if self.finished else Color.PENDING)

    def is_back_edge(self, graph: g.Graph, edge: g.Edge) -> bool:
        """Return whether an edge returns to a foreach, loop or race (never walked again)."""
        target = graph.node(edge.target)
        owners = g.ForeachNode | g.LoopNode | g.RaceNode
        return isinstance(target, owners) and edge.source in body_of(graph, edge.target)


def downstream_paint(arrival: Arrival, color: Color) -> Color | None:
    """Return the color a node passes on to everything after it, or None when it ran live.

    A painted region stays painted (a race loser's branch is cancelled throughout); below
    a failure, or a frame cancelled by one, nothing started: skipped.
    """
    if arrival.paint is not None:
        return arrival.paint
    if color in (Color.FAILED, Color.CANCELLED):
        return Color.SKIPPED
    if color in (Color.PENDING, Color.SKIPPED):
        return color
    return None


def body_of(graph: g.Graph, owner: str) -> frozenset[str]:
    """Return the nodes of a foreach/loop/race body: reachable from its body edges, up to it."""
    cache: dict[str, frozenset[str]] = graph.__dict__.setdefault("_bodies", {})
    if owner in cache:
        return cache[owner]
    node = graph.node(owner)
    starts = [
        e.target for e in graph.outgoing(owner)
        if e.branch is not None or e.follows in (g.Outcome.ITEM.value, g.Outcome.BODY.value)
    ]  # fmt: skip
    if not isinstance(node, g.ForeachNode | g.LoopNode | g.RaceNode):
        starts = []
    seen: set[str] = set()
    stack = list(starts)
    while stack:
        current = stack.pop()
        if current == owner or current in seen:
            continue
        seen.add(current)
        stack.extend(e.target for e in graph.outgoing(current))
    cache[owner] = frozenset(seen)
    return cache[owner]
