"""The chaos workload: flows, inputs and an approver's decisions, all drawn from the seed.

Every choice comes from `random.Random(seed)` or a hash of the seed, so a seed replays the
same flows, the same runs in the same order and the same decisions. Actions fail by the
built-in `fail_sometimes`, whose draw is a hash of (`input.salt`, node, execution id,
attempt): `salt` is `<seed>.<run number>`, so an action's outcome is a function of
(seed, run, node, execution id, attempt) that the oracle computes again.
"""

import hashlib
import random
from dataclasses import dataclass, field
from typing import Any

Exit = list[tuple[str, dict[str, str]]]  # edges still to draw: (source, edge fields)

CHILD_SLUG = "chaos-child"
KINDS = ("fork", "foreach", "race", "loops", "subflow", "approval", "wait", "task")
APPROVER = "finance"
STARTER = "admin"


def draw(*parts: object) -> float:
    """Return a number in [0, 1) that is a hash of the parts."""
    digest = hashlib.sha256("|".join(map(str, parts)).encode()).hexdigest()
    return int(digest[:8], 16) / 0x100000000


def decision(seed: int, run_number: int, node: str, execution_id: str) -> str:
    """The scripted approver: approve four times in five, by a hash of where it is asked."""
    return "approve" if draw(seed, run_number, node, execution_id) < 0.8 else "reject"


@dataclass
class Builder:
    """Nodes and edges of one generated flow."""

    rng: random.Random
    nodes: list[dict[str, Any]] = field(default_factory=lambda: [{"id": "start", "type": "start"}])
    edges: list[dict[str, Any]] = field(default_factory=list)
    used: set[str] = field(default_factory=set)

    def add(self, prefix: str, **config: Any) -> str:
        """Add a node with a fresh id; return the id."""
        number = len(self.nodes)
        node_id = f"{prefix}{number}"
        self.nodes.append({"id": node_id, **config})
        return node_id

    def link(self, exits: Exit, target: str, **extra: str) -> None:
        """Draw every pending exit to the target."""
        for source, fields in exits:
            self.edges.append({"source": source, "target": target, **fields, **extra})

    def task(self, exits: Exit, rate: float | None = None) -> Exit:
        """A task that sleeps a little or fails by the seed, maybe with retries."""
        if self.rng.random() < 0.3:
            seconds = self.rng.choice([0.02, 0.05, 0.1, 0.2])
            node = self.add("nap", type="task", action="sleep", params={"seconds": seconds})
        else:
            rate = self.rng.choice([0.0, 0.1, 0.2, 0.3]) if rate is None else rate
            config: dict[str, Any] = {
                "type": "task", "action": "fail_sometimes", "output": "log",
                "params": {"seed": "${input.salt}", "rate": rate, "value": ["?"]},
            }  # fmt: skip
            if self.rng.random() < 0.5:
                config["retry"] = {"max_attempts": self.rng.choice([2, 3]), "backoff_s": 0.2}
            node = self.add("act", **config)
            self.nodes[-1]["params"]["value"] = [node]
        self.link(exits, node)
        return [(node, {})]

    def chain(self, exits: Exit, depth: int) -> Exit:
        """One to two steps: tasks, or (less often, not too deep) a nested block."""
        for _ in range(self.rng.choice([1, 2])):
            if depth < 2 and self.rng.random() < 0.25:
                kind = self.rng.choice(["foreach", "approval", "loops"])
                exits = self.block(kind, exits, depth + 1)
            else:
                exits = self.task(exits)
        return exits

    def block(self, kind: str, exits: Exit, depth: int = 0) -> Exit:
        """Add one block of the kind after the exits; return its exits."""
        added: Exit = getattr(self, f"block_{kind}")(exits, depth)
        return added

    def block_task(self, exits: Exit, depth: int) -> Exit:
        return self.task(exits)

    def block_fork(self, exits: Exit, depth: int) -> Exit:
        branches = [f"b{i}" for i in range(self.rng.choice([2, 3]))]
        split = self.add("split", type="fork", branches=branches)
        self.link(exits, split)
        join = self.add("join", type="gather", slots=branches)
        for branch in branches:
            self.link(self.chain([(split, {"branch": branch})], depth), join, slot=branch)
        return [(join, {})]

    def block_foreach(self, exits: Exit, depth: int) -> Exit:
        policy = self.rng.choice(["fail", "skip", "collect"])
        config: dict[str, Any] = {"type": "foreach", "items": "input.items", "as": f"item{depth}",
                                  "concurrency": self.rng.choice([1, 2, 3]),
                                  "on_item_failure": policy}  # fmt: skip
        if policy == "collect":
            config["errors"] = "errs"
        each = self.add("each", **config)
        self.link(exits, each)
        body = self.task([(each, {"outcome": "item"})], rate=self.rng.choice([0.2, 0.4]))
        if depth == 0 and self.rng.random() < 0.3:
            body = self.block_approval(body, depth + 1)
        tally = self.add("tally", type="set", values={"total": f"item{depth}"})
        self.link(body, tally)
        self.link([(tally, {})], each)
        return [(each, {"outcome": "done"})]

    def block_race(self, exits: Exit, depth: int) -> Exit:
        # The other branch waits an hour, so the bot branch wins on every runtime and in
        # every interleaving (or fails the run); the oracle needs no clock to agree.
        race = self.add("race", type="race", branches=["bot", "timer"])
        self.link(exits, race)
        self.link(self.task([(race, {"branch": "bot"})]), race)
        wait = self.add("hour", type="wait", seconds=3600)
        self.link([(race, {"branch": "timer"})], wait)
        self.link([(wait, {})], race)
        return [(race, {})]

    def block_loops(self, exits: Exit, depth: int) -> Exit:
        outer = self.add("outer", type="loop", **{"while": "true"}, max_iterations=2)
        inner = self.add("inner", type="loop", **{"while": "true"}, max_iterations=2)
        self.link(exits, outer)
        self.link([(outer, {"outcome": "body"})], inner)
        self.link(self.task([(inner, {"outcome": "body"})], rate=0.05), inner)
        self.link([(inner, {"outcome": "exhausted"})], outer)
        return [(outer, {"outcome": "exhausted"})]

    def block_subflow(self, exits: Exit, depth: int) -> Exit:
        call = self.add("call", type="subflow", flow=CHILD_SLUG,
                        input={"salt": "input.salt"}, output={"log": "log"})  # fmt: skip
        self.link(exits, call)
        return [(call, {})]

    def block_approval(self, exits: Exit, depth: int) -> Exit:
        ask = self.add("ask", type="approval", groups=["finance"], policy="any", title="Check")
        self.link(exits, ask)
        yes = self.add("yes", type="set", values={"log": "['approved']"})
        no = self.add("no", type="set", values={"log": "['rejected']"})
        self.link([(ask, {"outcome": "approved"})], yes)
        self.link([(ask, {"outcome": "rejected"})], no)
        return [(yes, {}), (no, {})]

    def block_wait(self, exits: Exit, depth: int) -> Exit:
        wait = self.add("pause", type="wait", seconds=1)
        self.link(exits, wait)
        return [(wait, {})]


STATE = {
    "log": {"reducer": "append"},
    "total": {"reducer": "sum"},
    "errs": {"reducer": "append"},
}


def flow(seed: int, number: int, kinds: list[str]) -> dict[str, Any]:
    """A flow of the blocks, in order, from start to end."""
    builder = Builder(random.Random(f"{seed}/{number}"))
    exits: Exit = [("start", {})]
    for kind in kinds:
        exits = builder.block(kind, exits)
    end = builder.add("done", type="end")
    builder.link(exits, end)
    return {"format": "braid.graph/1", "name": f"Chaos {seed} #{number}", "state": STATE,
            "nodes": builder.nodes, "edges": builder.edges}  # fmt: skip


def child_flow() -> dict[str, Any]:
    """The subflow every `subflow` block calls: one task that may fail, then a note."""
    return {
        "format": "braid.graph/1", "name": "Chaos child", "state": {"log": {"reducer": "append"}},
        "nodes": [
            {"id": "start", "type": "start"},
            {"id": "work", "type": "task", "action": "fail_sometimes", "output": "log",
             "params": {"seed": "${input.salt}", "rate": 0.1, "value": ["child"]},
             "retry": {"max_attempts": 2, "backoff_s": 0.2}},
            {"id": "note", "type": "set", "values": {"log": "['child done']"}},
            {"id": "done", "type": "end"},
        ],
        "edges": [{"source": "start", "target": "work"}, {"source": "work", "target": "note"},
                  {"source": "note", "target": "done"}],
    }  # fmt: skip


def flows(seed: int, count: int = 12) -> dict[str, dict[str, Any]]:
    """The seed's flows by slug: every kind of block alone once, then random mixes."""
    rng = random.Random(seed)
    documents = {}
    for number in range(count):
        if number < len(KINDS) - 1:
            kinds = [KINDS[number], "task"]
        else:
            kinds = rng.sample(KINDS, rng.choice([2, 3, 4]))
        documents[f"chaos-{seed}-{number}"] = flow(seed, number, kinds)
    return documents


@dataclass(frozen=True)
class PlannedRun:
    """One run of the workload: its number, flow and input."""

    number: int
    slug: str
    input: dict[str, Any]


def runs(seed: int, count: int, slugs: list[str]) -> list[PlannedRun]:
    """The seed's runs, in the order they are started."""
    rng = random.Random(f"{seed}/runs")
    return [
        PlannedRun(number, rng.choice(slugs), {
            "salt": f"{seed}.{number}",
            "items": [rng.randint(1, 9) for _ in range(rng.randint(1, 4))],
        })
        for number in range(count)
    ]  # fmt: skip
