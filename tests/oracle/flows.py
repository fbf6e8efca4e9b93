"""Random valid flows with every node type, nested: a hypothesis strategy for the oracle.

A flow is a chain of blocks from `start` to `end`. A block has one entry and a list of
exits (a source node and the outcome it leaves by); the next block's entry takes them
all. Blocks nest: a fork's branches, a foreach's or loop's body, a race's branches are
chains of blocks, so a foreach can sit in a fork branch, a loop in a foreach body, a
subflow call in any body. Every generated flow is validated (strictly) before use.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st

from tests.core.harness import graph_of

Exit = tuple[str, dict[str, str]]
LEAVES = ["noop", "flaky", "route", "set", "if", "switch", "approval", "wait", "subflow", "fail"]
SCOPES = ["fork", "foreach", "loop", "race"]
STATE = {"log": "append", "n": "sum", "errors": "append"}

LEAF_FLOW = {
    "format": "braid.graph/1",
    "state": {"log": {"reducer": "append"}},
    "nodes": [
        {"id": "start", "type": "start"},
        {"id": "work", "type": "task", "action": "noop", "params": {"value": ["w"]},
         "output": "log"},
        {"id": "ask", "type": "approval", "groups": ["g"], "policy": "any"},
        {"id": "done", "type": "end"},
    ],
    "edges": [
        {"source": "start", "target": "work"},
        {"source": "work", "target": "ask"},
        {"source": "ask", "target": "done", "outcome": "approved"},
        {"source": "ask", "target": "done", "outcome": "rejected"},
    ],
}  # fmt: skip
MID_FLOW = {
    "format": "braid.graph/1",
    "state": {"log": {"reducer": "append"}},
    "nodes": [
        {"id": "start", "type": "start"},
        {"id": "inner", "type": "subflow", "flow": "leaf", "output": {"log": "log"}},
        {"id": "after", "type": "task", "action": "noop"},
        {"id": "done", "type": "end"},
    ],
    "edges": [
        {"source": "start", "target": "inner"},
        {"source": "inner", "target": "after"},
        {"source": "after", "target": "done"},
    ],
}
SUBFLOWS = {"leaf@latest": LEAF_FLOW, "mid@latest": MID_FLOW}
INPUTS = st.fixed_dictionaries(
    {
        "flag": st.booleans(),
        "items": st.lists(st.integers(1, 9), min_size=0, max_size=3),
        "pick": st.sampled_from(["a", "b"]),
    }
)


@dataclass
class Builder:
    """The nodes and edges of one flow being drawn."""

    draw: st.DrawFn
    nodes: list[dict[str, Any]] = field(default_factory=list)
    edges: list[dict[str, str]] = field(default_factory=list)
    count: int = 0
    fields: dict[str, str] = field(default_factory=lambda: dict(STATE))

    def add(self, kind: str, **config: Any) -> str:
        """Add a node with a fresh id; return the id."""
        self.count += 1
        node_id = f"{kind[:2]}{self.count}"
        self.nodes.append({"id": node_id, "type": kind, **config})
        return node_id

    def connect(self, exits: list[Exit], target: str, slot: str | None = None) -> None:
        """Wire every exit to a target (into a gather slot when given)."""
        for source, fields in exits:
            self.edges.append(
                {"source": source, "target": target, **fields, **({"slot": slot} if slot else {})}
            )

    def chain(self, depth: int, entry_exits: list[Exit]) -> list[Exit]:
        """Draw 1-3 blocks after the exits; return the last block's exits."""
        exits = entry_exits
        for _ in range(self.draw(st.integers(1, 3 if depth > 0 else 2))):
            exits = self.block(depth, exits)
        return exits

    def block(self, depth: int, into: list[Exit]) -> list[Exit]:
        """Draw one block wired from `into`; return its exits."""
        kinds = LEAVES + (SCOPES if depth > 0 else [])
        kind = self.draw(st.sampled_from(kinds))
        exits: list[Exit] = getattr(self, f"block_{kind}")(depth, into)
        return exits

    def leaf(self, into: list[Exit], kind: str, **config: Any) -> str:
        """Add a node and wire `into` to it."""
        node_id = self.add(kind, **config)
        self.connect(into, node_id)
        return node_id

    def block_noop(self, depth: int, into: list[Exit]) -> list[Exit]:
        node = self.leaf(into, "task", action="noop", params={"value": ["x"]}, output="log")
        return [(node, {})]

    def block_flaky(self, depth: int, into: list[Exit]) -> list[Exit]:
        retry = {"max_attempts": self.draw(st.integers(1, 2)), "backoff_s": 1}
        node = self.leaf(into, "task", action="flaky", params={"succeed_on": 2}, retry=retry)
        return [(node, {})]

    def block_route(self, depth: int, into: list[Exit]) -> list[Exit]:
        to = self.draw(st.sampled_from(["left", "right"]))
        node = self.leaf(into, "task", action="route", params={"to": to})
        return [(node, {"outcome": "left"}), (node, {"outcome": "right"})]

    def block_set(self, depth: int, into: list[Exit]) -> list[Exit]:
        return [(self.leaf(into, "set", values={"n": "1", "log": "['s']"}), {})]

    def block_if(self, depth: int, into: list[Exit]) -> list[Exit]:
        node = self.leaf(into, "if", condition="input.flag")
        taken = self.chain(max(depth - 1, 0), [(node, {"outcome": "true"})])
        return [*taken, (node, {"outcome": "false"})]

    def block_switch(self, depth: int, into: list[Exit]) -> list[Exit]:
        node = self.leaf(into, "switch", cases=[{"when": "input.pick == 'a'", "outcome": "a"}],
                         default="z")  # fmt: skip
        taken = self.chain(max(depth - 1, 0), [(node, {"outcome": "a"})])
        return [*taken, (node, {"outcome": "z"})]

    def block_approval(self, depth: int, into: list[Exit]) -> list[Exit]:
        policy = self.draw(st.sampled_from(["any", "all", {"quorum": 2}]))
        groups = ["g", "h"] if policy == "all" else ["g"]
        node = self.leaf(into, "approval", groups=groups, policy=policy, allow_starter=True)
        return [(node, {"outcome": "approved"}), (node, {"outcome": "rejected"})]

    def block_wait(self, depth: int, into: list[Exit]) -> list[Exit]:
        return [(self.leaf(into, "wait", seconds=self.draw(st.sampled_from([1, 5]))), {})]

    def block_subflow(self, depth: int, into: list[Exit]) -> list[Exit]:
        flow = self.draw(st.sampled_from(["leaf", "mid"]))
        return [(self.leaf(into, "subflow", flow=flow, output={"log": "log"}), {})]

    def block_fail(self, depth: int, into: list[Exit]) -> list[Exit]:
        check = self.leaf(into, "if", condition="input.flag")
        self.leaf([(check, {"outcome": "true"})], "fail", error="planned failure")
        return [(check, {"outcome": "false"})]

    def block_fork(self, depth: int, into: list[Exit]) -> list[Exit]:
        names = [f"b{i}" for i in range(self.draw(st.integers(2, 3)))]
        fork = self.leaf(into, "fork", branches=names)
        gather = self.add("gather", slots=names)
        for name in names:
            exits = self.chain(depth - 1, [(fork, {"branch": name})])
            self.connect(exits, gather, slot=name)
        return [(gather, {})]

    def block_foreach(self, depth: int, into: list[Exit]) -> list[Exit]:
        policy = self.draw(st.sampled_from(["fail", "skip", "collect"]))
        extra = {"errors": "errors"} if policy == "collect" else {}
        config = {"as": f"it{self.count + 1}", "concurrency": self.draw(st.integers(1, 3)), **extra}
        node = self.leaf(into, "foreach", items="input.items", on_item_failure=policy, **config)
        self.connect(self.chain(depth - 1, [(node, {"outcome": "item"})]), node)
        return [(node, {"outcome": "done"})]

    def block_loop(self, depth: int, into: list[Exit]) -> list[Exit]:
        limit = self.draw(st.integers(1, 3))
        # The loop counts its rounds in its own field: validation does not let `while` read
        # the loop's `as` (the scheduler binds it there; see the report).
        counter = f"c{self.count + 1}"
        self.fields[counter] = "sum"
        rounds = self.draw(st.integers(0, 4))
        node = self.leaf(
            into, "loop", max_iterations=limit, **{"while": f"state.{counter} < {rounds}"}
        )
        tick = self.leaf([(node, {"outcome": "body"})], "set", values={counter: "1"})
        self.connect(self.chain(depth - 1, [(tick, {})]), node)
        exits = [(node, {"outcome": "done"})]
        if self.draw(st.booleans()):
            exits.append((node, {"outcome": "exhausted"}))
        return exits

    def block_race(self, depth: int, into: list[Exit]) -> list[Exit]:
        names = [f"r{i}" for i in range(self.draw(st.integers(2, 3)))]
        race = self.leaf(into, "race", branches=names)
        for name in names:
            self.connect(self.chain(depth - 1, [(race, {"branch": name})]), race)
        return [(race, {})]


@st.composite
def flows(draw: st.DrawFn, max_depth: int = 3) -> dict[str, Any]:
    """Draw a valid flow document (using the subflows `leaf` and `mid` of SUBFLOWS)."""
    builder = Builder(draw)
    builder.nodes.append({"id": "start", "type": "start"})
    exits = builder.chain(draw(st.integers(1, max_depth)), [("start", {})])
    builder.nodes.append({"id": "end", "type": "end"})
    builder.connect(exits, "end")
    document = {
        "format": "braid.graph/1",
        "state": {name: {"reducer": reducer} for name, reducer in builder.fields.items()},
        "nodes": builder.nodes,
        "edges": builder.edges,
    }
    graph_of(document)  # raises with the problems if the flow is not valid
    return document
