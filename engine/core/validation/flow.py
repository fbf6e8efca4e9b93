"""The flow under validation: its decoded graph indexed for the checks, and body scopes."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass

from engine.core.graph import (
    BODY_OUTCOMES,
    STATIC_OUTCOMES,
    DecodedDocument,
    Edge,
    NodeType,
    TaskNode,
)
from engine.core.validation.problems import Link


class Flow:
    """The decoded document indexed for the checks; undecodable nodes keep their id and type."""

    def __init__(
        self, decoded: DecodedDocument, actions: Mapping[str, frozenset[str]], has_nodes: bool
    ) -> None:
        graph = decoded.graph
        self.graph = graph
        self.types = decoded.node_types
        self.nodes = graph.nodes_by_id
        self.actions = actions
        self.declared_state = decoded.declared_state
        self.variables = decoded.node_variables
        self.links = [Link(i, e) for i, e in zip(decoded.edge_indices, graph.edges, strict=True)]
        self.known = [
            link
            for link in self.links
            if link.edge.source in self.types and link.edge.target in self.types
        ]
        self.out: dict[str, list[Link]] = defaultdict(list)
        for link in self.known:
            self.out[link.edge.source].append(link)
        self.damaged = [
            (d.source, d.target)
            for d in decoded.damaged_edges
            if d.source in self.types and d.target in self.types
        ]
        self.starts = [n for n, t in self.types.items() if t is NodeType.START]
        self.has_nodes = has_nodes
        self.leaving: dict[str, list[Link]] = defaultdict(list)
        for link in self.links:
            self.leaving[link.edge.source].append(link)
        # A damaged edge may be the very edge a "missing" check looks for: do not cascade.
        self.damaged_sources = {source for source, _ in self.damaged}
        self.damaged_targets = {target for _, target in self.damaged}
        self.fed_slots: dict[str, set[str | None]] = defaultdict(set)
        for link in self.links:
            self.fed_slots[link.edge.target].add(link.edge.slot)

    def describe(self, node_id: str) -> str:
        """Return `id` (type) for messages."""
        node_type = self.types.get(node_id)
        return f"`{node_id}` ({node_type})" if node_type else f"`{node_id}`"

    def outcomes(self, node_id: str) -> frozenset[str] | None:
        """Return the outcomes a node can produce, or None when its config is unknown."""
        node = self.nodes.get(node_id)
        if isinstance(node, TaskNode) and node.action not in self.actions:
            return None
        if node is not None:
            return node.outcomes(self.actions)
        node_type = self.types.get(node_id)
        return None if node_type is None else STATIC_OUTCOMES.get(node_type)


@dataclass(frozen=True, slots=True)
class Boundary:
    """One body boundary: a foreach/loop body, or one branch of a race."""

    owner: str
    branch: str | None = None


type BodyScope = tuple[Boundary, ...]


def is_body_entry(source_type: NodeType | None, edge: Edge) -> bool:
    """Return whether an edge is a foreach `item` or loop `body` edge."""
    if source_type is None or source_type not in BODY_OUTCOMES:
        return False
    return edge.follows == BODY_OUTCOMES[source_type]
