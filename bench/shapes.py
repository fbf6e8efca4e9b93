"""The benchmark shapes as `braid.graph/1` documents, and how many work nodes each runs.

A *work node* is what a peer's trivial node stands for: a `task` calling the `noop`
action (one Python call per node), or a `set` node evaluating one CEL expression.
Start, end, fork, gather and foreach nodes are the shape's scaffolding and are not counted.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

type Doc = dict[str, Any]

FOREACH_CONCURRENCY = 64
NESTED_ITEMS = 100
NESTED_WIDTH = 4


class Shape(StrEnum):
    """The graph shapes every implementation runs."""

    CHAIN = "chain"
    FORK = "fork"
    FOREACH = "foreach"
    FOREACH_FORK = "foreach-fork"


class Work(StrEnum):
    """What a Braid work node does."""

    NOOP = "noop"  # a task calling the registered no-op action
    SET = "set"  # a set node appending one item to the `log` field through CEL


SHAPE_TITLES: dict[Shape, str] = {
    Shape.CHAIN: "Chain of N nodes",
    Shape.FORK: "Fork of N branches into one gather",
    Shape.FOREACH: f"Foreach over N items, concurrency {FOREACH_CONCURRENCY}",
    Shape.FOREACH_FORK: f"Foreach of {NESTED_ITEMS} items x fork({NESTED_WIDTH})/gather",
}


@dataclass(frozen=True, slots=True)
class Case:
    """One generated flow: its document, its input and its number of work nodes."""

    document: Doc
    input: dict[str, Any]
    work_nodes: int


def work_node(node_id: str, work: Work) -> Doc:
    """Return one work node."""
    if work is Work.NOOP:
        return {"id": node_id, "type": "task", "action": "noop"}
    return {"id": node_id, "type": "set", "values": {"log": "['x']"}}


def document(name: str, nodes: list[Doc], edges: list[Doc]) -> Doc:
    """Return a flow document with a start and an end around the given nodes."""
    return {
        "format": "braid.graph/1",
        "name": name,
        "state": {"log": {"reducer": "append"}},
        "nodes": [{"id": "start", "type": "start"}, *nodes, {"id": "end", "type": "end"}],
        "edges": edges,
    }


def edge(source: str, target: str, **fields: str) -> Doc:
    """Return one edge."""
    return {"source": source, "target": target, **fields}


def chain(n: int, work: Work) -> Case:
    """Return start -> w1 -> ... -> wN -> end."""
    ids = [f"w{i}" for i in range(1, n + 1)]
    path = ["start", *ids, "end"]
    edges = [edge(a, b) for a, b in itertools.pairwise(path)]
    return Case(document(f"chain-{n}", [work_node(i, work) for i in ids], edges), {}, n)


def fork_block(prefix: str, width: int, work: Work) -> tuple[list[Doc], list[Doc], str, str]:
    """Return the nodes and edges of a fork into a gather, with the fork and gather ids."""
    fork_id, gather_id = f"{prefix}fork", f"{prefix}gather"
    slots = [f"b{i}" for i in range(1, width + 1)]
    nodes = [{"id": fork_id, "type": "fork", "branches": slots}]
    nodes += [work_node(f"{prefix}{slot}", work) for slot in slots]
    nodes.append({"id": gather_id, "type": "gather", "slots": slots, "conflicts": "error"})
    edges = []
    for slot in slots:
        edges.append(edge(fork_id, f"{prefix}{slot}", branch=slot))
        edges.append(edge(f"{prefix}{slot}", gather_id, slot=slot))
    return nodes, edges, fork_id, gather_id


def fork(n: int, work: Work) -> Case:
    """Return start -> fork(b1..bN) -> one work node per branch -> gather -> end."""
    nodes, edges, fork_id, gather_id = fork_block("", n, work)
    edges = [edge("start", fork_id), *edges, edge(gather_id, "end")]
    return Case(document(f"fork-{n}", nodes, edges), {}, n)


def foreach_node(concurrency: int) -> Doc:
    """Return the foreach over `input.items`."""
    return {
        "id": "each",
        "type": "foreach",
        "items": "input.items",
        "as": "item",
        "concurrency": concurrency,
    }


def foreach(n: int, work: Work) -> Case:
    """Return a foreach over N items whose body is one work node."""
    nodes = [foreach_node(FOREACH_CONCURRENCY), work_node("body", work)]
    edges = [
        edge("start", "each"),
        edge("each", "body", outcome="item"),
        edge("body", "each"),
        edge("each", "end", outcome="done"),
    ]
    return Case(document(f"foreach-{n}", nodes, edges), {"items": list(range(n))}, n)


def foreach_fork(n: int, work: Work, width: int = NESTED_WIDTH) -> Case:
    """Return a foreach over N items whose body is a fork of `width` into a gather."""
    block, block_edges, fork_id, gather_id = fork_block("item_", width, work)
    nodes = [foreach_node(FOREACH_CONCURRENCY), *block]
    edges = [
        edge("start", "each"),
        edge("each", fork_id, outcome="item"),
        *block_edges,
        edge(gather_id, "each"),
        edge("each", "end", outcome="done"),
    ]
    case_input = {"items": list(range(n))}
    return Case(document(f"foreach-fork-{n}x{width}", nodes, edges), case_input, n * width)


BUILDERS = {
    Shape.CHAIN: chain,
    Shape.FORK: fork,
    Shape.FOREACH: foreach,
    Shape.FOREACH_FORK: foreach_fork,
}


def build(shape: Shape, n: int, work: Work) -> Case:
    """Return the flow of a shape at size N (for foreach-fork, N is the number of items)."""
    return BUILDERS[shape](n, work)
