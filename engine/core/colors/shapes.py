"""The graph as the walks read it: start, forward edges, order, reach, loops and bodies."""

from __future__ import annotations

from collections import deque
from functools import lru_cache

from engine.core import graph as g
from engine.core.colors.arrivals import OWNERS, PLAIN
from engine.core.execution_ids import Segment


def start_of(graph: g.Graph) -> str:
    """Return the id of a graph's start node."""
    return next(node.id for node in graph.nodes if node.type is g.NodeType.START)


def forward(graph: g.Graph) -> dict[str, list[g.Edge]]:
    """Return each node's outgoing edges without back edges (cached on the graph)."""
    cache: dict[str, list[g.Edge]] | None = graph.__dict__.get("_forward")
    if cache is None:
        cache = {
            node.id: [e for e in graph.outgoing(node.id) if not is_back_edge(graph, e)]
            for node in graph.nodes
        }
        graph.__dict__["_forward"] = cache
    return cache


def forward_targets(graph: g.Graph) -> dict[str, tuple[str, ...]]:
    """Return each node's forward edges' targets, in edge order (cached on the graph)."""
    cache: dict[str, tuple[str, ...]] | None = graph.__dict__.get("_targets")
    if cache is None:
        cache = {node: tuple(e.target for e in edges) for node, edges in forward(graph).items()}
        graph.__dict__["_targets"] = cache
    return cache


def plain_of(graph: g.Graph) -> frozenset[str]:
    """Return the ids of the nodes whose completion passes their arrival on unchanged
    (arrivals.PLAIN; cached on the graph)."""
    cache: frozenset[str] | None = graph.__dict__.get("_plain")
    if cache is None:
        cache = frozenset(n.id for n in graph.nodes if type(n) in PLAIN)
        graph.__dict__["_plain"] = cache
    return cache


def incoming(graph: g.Graph, node_id: str) -> list[g.Edge]:
    """Return the edges into a node (the map cached on the graph)."""
    cache: dict[str, list[g.Edge]] | None = graph.__dict__.get("_incoming")
    if cache is None:
        cache = {}
        for node in graph.nodes:
            for edge in graph.outgoing(node.id):
                cache.setdefault(edge.target, []).append(edge)
        graph.__dict__["_incoming"] = cache
    return cache.get(node_id, [])


def reachable(graph: g.Graph, start: str) -> frozenset[str]:
    """Return the nodes reachable from start along forward edges (cached on the graph)."""
    cache: dict[str, frozenset[str]] = graph.__dict__.setdefault("_reachable", {})
    if start not in cache:
        edges = forward(graph)
        seen = {start}
        stack = [start]
        while stack:
            for edge in edges[stack.pop()]:
                if edge.target not in seen:
                    seen.add(edge.target)
                    stack.append(edge.target)
        cache[start] = frozenset(seen)
    return cache[start]


def forward_order(graph: g.Graph, start: str) -> list[str]:
    """Return the nodes reachable from start in topological order of the forward edges
    (cached on the graph: it depends on the graph alone).

    Back edges (a body returning to its foreach, loop or race) are left out, so the rest
    is acyclic in a valid graph; nodes on any other cycle come last, in name order.
    """
    cache: dict[str, list[str]] = graph.__dict__.setdefault("_order", {})
    if start in cache:
        return cache[start]
    edges = forward(graph)
    reached = reachable(graph, start)
    waiting = dict.fromkeys(reached, 0)
    for node_id in reached:
        for edge in edges[node_id]:
            waiting[edge.target] += 1
    ready = deque([start] if waiting.get(start) == 0 else [])
    order: list[str] = []
    while ready:
        node_id = ready.popleft()
        order.append(node_id)
        for edge in edges[node_id]:
            waiting[edge.target] -= 1
            if waiting[edge.target] == 0:
                ready.append(edge.target)
    if len(order) < len(reached):
        placed = set(order)
        order.extend(n for n in sorted(reached) if n not in placed)
    cache[start] = order
    return order


@lru_cache(maxsize=65536)
def branch_segment(node: str, branch: str) -> Segment:
    """Return the segment of a fork's branch, made once (a fork of 10,000 asks each walk)."""
    return Segment(f"{node}.{branch}", 1)


def loops_of(graph: g.Graph) -> frozenset[str]:
    """Return the ids of a graph's loop nodes (cached on the graph)."""
    return ids_of(graph, g.LoopNode)


def approvals_of(graph: g.Graph) -> frozenset[str]:
    """Return the ids of a graph's approval nodes (cached on the graph)."""
    return ids_of(graph, g.ApprovalNode)


def ids_of(graph: g.Graph, kind: type[g.Node]) -> frozenset[str]:
    """Return the ids of a graph's nodes of one kind (cached on the graph)."""
    cache: dict[type[g.Node], frozenset[str]] = graph.__dict__.setdefault("_ids_of", {})
    found = cache.get(kind)
    if found is None:
        found = cache[kind] = frozenset(n.id for n in graph.nodes if isinstance(n, kind))
    return found


def is_back_edge(graph: g.Graph, edge: g.Edge) -> bool:
    """Return whether an edge returns to a foreach, loop or race (never walked again)."""
    target = graph.node(edge.target)
    return isinstance(target, OWNERS) and edge.source in body_of(graph, edge.target)


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
    if not isinstance(node, OWNERS):
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
