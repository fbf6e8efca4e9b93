"""Leaf -> root: one node's verdict from its ancestors' verdicts, memoized."""

from __future__ import annotations

from engine.core import graph as g
from engine.core.colors.arrivals import Arrival, Verdict, best
from engine.core.colors.shapes import forward, incoming, reachable, start_of
from engine.core.colors.walk import Walk
from engine.core.execution_ids import ExecutionId
from engine.core.state import subflow_key


class Climb:
    """Leaf → root: one node's verdict from its ancestors' verdicts, memoized."""

    def __init__(self, walk: Walk) -> None:
        self.walk = walk
        self.arrivals: dict[str, Arrival | None] = {}
        self.verdicts: dict[str, Verdict] = {}
        self.entries: dict[str, Arrival] = {}

    def verdict(self, key: str, prefix: str, path: str) -> Verdict | None:
        """Return the verdict of `path` (relative to a scope: `sub/child` goes down)."""
        graph = self.walk.graphs.get(key)
        if graph is None:
            return None
        head, slash, rest = path.partition("/")
        if head not in graph.nodes_by_id:
            return None
        own = self.node_verdict(graph, prefix, head)
        if not slash:
            return own
        node = graph.node(head)
        arrival = self.arrival(graph, prefix, head)
        if own is None or arrival is None or not isinstance(node, g.SubflowNode):
            return None
        inner = prefix + head + "/"
        self.entries[inner] = self.walk.subflow_entry(prefix, node, arrival, own)
        return self.verdict(subflow_key(node), inner, rest)

    def node_verdict(self, graph: g.Graph, prefix: str, node_id: str) -> Verdict | None:
        """Return one node's verdict in a scope, climbing its ancestors first."""
        if prefix + node_id in self.verdicts:
            return self.verdicts[prefix + node_id]
        arrival = self.arrival(graph, prefix, node_id)
        if arrival is None:
            return None
        verdict = self.walk.verdict(prefix + node_id, graph.node(node_id), arrival)
        self.verdicts[prefix + node_id] = verdict
        return verdict

    def arrival(self, graph: g.Graph, prefix: str, node_id: str) -> Arrival | None:
        """Return the arrival that claims a node: the best of its incoming forward edges."""
        path = prefix + node_id
        if path in self.arrivals:
            return self.arrivals[path]
        self.arrivals[path] = None  # a cycle without a loop node reaches nothing
        start = start_of(graph)
        reached = reachable(graph, start)
        claims: list[Arrival] = []
        if node_id == start:
            entry = self.entries.get(prefix)
            claims.append(entry if entry is not None else Arrival(ExecutionId.root(), None))
        for edge in incoming(graph, node_id):
            if edge.source not in reached or edge not in forward(graph)[edge.source]:
                continue
            source = graph.node(edge.source)
            before = self.arrival(graph, prefix, edge.source)
            verdict = self.node_verdict(graph, prefix, edge.source)
            if before is None or verdict is None:
                continue
            for target, onward in self.walk.successors(graph, prefix, source, before, verdict):
                if target == node_id:
                    claims.append(onward)
        self.arrivals[path] = best(claims) if node_id in reached else None
        return self.arrivals[path]
