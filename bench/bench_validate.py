"""Benchmark `validate()` on a generated, valid 5,000-node flow; prints a markdown table.

Usage: python bench/bench_validate.py [--quick] [--nodes N]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine.core.expressions import clear_caches
from engine.core.graph import Graph
from engine.core.validation import validate

type Doc = dict[str, Any]


class FlowBuilder:
    """Appends blocks (chains, forks with gathers, foreach bodies, ifs) to one flow."""

    def __init__(self) -> None:
        self.nodes: list[Doc] = [{"id": "start", "type": "start"}]
        self.edges: list[Doc] = []
        # Where the next block attaches: a node and the fields of the edge leaving it.
        self.exit: tuple[str, Doc] = ("start", {})

    def add(self, node_type: str, **config: Any) -> str:
        """Add a node with a fresh id and return the id."""
        node_id = f"{node_type}-{len(self.nodes)}"
        self.nodes.append({"id": node_id, "type": node_type, **config})
        return node_id

    def link(self, source: str, target: str, **fields: Any) -> None:
        """Add an edge."""
        self.edges.append({"source": source, "target": target, **fields})

    def attach(self, target: str) -> None:
        """Connect the pending exit to a node."""
        source, fields = self.exit
        self.link(source, target, **fields)

    def chain(self, length: int) -> None:
        """Add tasks one after another."""
        for _ in range(length):
            task = self.add("task", action="noop", output="last")
            self.attach(task)
            self.exit = (task, {})

    def diamond(self) -> None:
        """Add an if with CEL whose outcomes meet again."""
        n = len(self.nodes)
        decision = self.add("if", condition=f"state.count > {n} && size(input.lines) > 0")
        self.attach(decision)
        join = self.add("set", values={"count": f"state.count + {n}"})
        for outcome in ("true", "false"):
            side = self.add("set", values={"log": f"['{outcome}-{n}']"})
            self.link(decision, side, outcome=outcome)
            self.link(side, join)
        self.exit = (join, {})

    def fork(self, width: int) -> None:
        """Add a fork whose branches each fill one gather slot."""
        branches = [f"b{i}" for i in range(width)]
        fork = self.add("fork", branches=branches)
        self.attach(fork)
        gather = self.add("gather", slots=branches, conflicts="error")
        for branch in branches:
            work = self.add("task", action="http.request", params={"url": "https://x.test"})
            self.link(fork, work, branch=branch)
            self.link(work, gather, slot=branch)
        self.exit = (gather, {})

    def foreach(self) -> None:
        """Add a foreach whose body branches on the item, may ask for approval, and returns."""
        n = len(self.nodes)
        owner = self.add("foreach", items="input.lines", concurrency=4, **{"as": "line"})
        self.attach(owner)
        check = self.add("if", condition=f"line.amount > {n}")
        review = self.add("approval", groups=["finance"], title=f"Line ${{line.id}} #{n}")
        small = self.add("set", values={"log": "[line.id]"})
        self.link(owner, check, outcome="item")
        self.link(check, review, outcome="true")
        self.link(check, small, outcome="false")
        self.link(review, owner, outcome="approved")
        self.link(review, owner, outcome="rejected")
        self.link(small, owner)
        self.exit = (owner, {"outcome": "done"})

    def finish(self) -> Doc:
        """Close the flow with an end node and return the document."""
        self.attach(self.add("end"))
        return {
            "format": "braid.graph/1",
            "name": "Benchmark",
            "state": {
                "count": {"reducer": "sum"},
                "log": {"reducer": "append"},
                "last": {"reducer": "overwrite"},
            },
            "nodes": self.nodes,
            "edges": self.edges,
        }


def build_flow(size: int) -> Doc:
    """Return a valid flow with exactly `size` nodes, mixing every block kind."""
    builder = FlowBuilder()
    blocks: list[tuple[int, Callable[[], None]]] = [
        (5, lambda: builder.chain(5)),
        (4, builder.diamond),
        (5, lambda: builder.fork(3)),
        (4, builder.foreach),
    ]
    turn = 0
    while len(builder.nodes) + blocks[turn % len(blocks)][0] + 1 <= size:
        blocks[turn % len(blocks)][1]()
        turn += 1
    builder.chain(size - len(builder.nodes) - 1)
    return builder.finish()


def measure(run: Callable[[], object], repeats: int, before: Callable[[], None]) -> list[float]:
    """Return the wall time of each run in milliseconds, after one warm-up run."""
    before()
    run()
    times = []
    for _ in range(repeats):
        before()
        started = time.perf_counter()
        run()
        times.append((time.perf_counter() - started) * 1000)
    return times


def main() -> None:
    """Run the benchmark and print the table."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="5 runs instead of 21")
    parser.add_argument("--nodes", type=int, default=5000)
    args = parser.parse_args()
    repeats = 5 if args.quick else 21
    document = build_flow(args.nodes)
    report = validate(document)
    if not report.ok or report.warnings:
        raise SystemExit(f"the generated flow is not clean: {report.to_json()}")
    # One gather as wide as the limit allows: its slot pairs were once all tried (31.7 s).
    wide = FlowBuilder()
    wide.fork(args.nodes - 4)
    wide_document = wide.finish()
    cases: list[tuple[str, Callable[[], object], Callable[[], None]]] = [
        ("validate, cold CEL cache", lambda: validate(document), clear_caches),
        ("validate, warm CEL cache", lambda: validate(document), lambda: None),
        ("Graph.from_json only", lambda: Graph.from_json(document), lambda: None),
        (f"validate, one fork of {args.nodes - 4:,} branches into one gather",
         lambda: validate(wide_document), clear_caches),
    ]  # fmt: skip
    print(f"{len(document['nodes'])} nodes, {len(document['edges'])} edges, {repeats} runs each\n")
    print("| case | median ms | min ms | max ms |")
    print("| --- | ---: | ---: | ---: |")
    for name, run, before in cases:
        times = measure(run, repeats, before)
        print(f"| {name} | {statistics.median(times):.1f} | {min(times):.1f} | {max(times):.1f} |")


if __name__ == "__main__":
    main()
