"""The state writes that reach a node, rebuilt from the trace (the monitor's inspector).

A node sees its lineage: the writes on its own execution path, plus what was merged into
that path before it ran (docs/engine.md): a gather's inputs, a foreach's finished items
at `done`, a loop's iterations as each returns, a race's winner. The trace records each
of these, and each node's writes on its `node.completed` event, so the lineage can be
replayed without the run's snapshot, for any node, long after the run ended:

- `branch.started`, `item.started`, `iteration.started` start a child lineage of the
  execution one segment up; `subflow.started` starts a new scope (it sees no parent
  writes; its outputs come back as the subflow node's writes).
- `gather.merged` merges its inputs under their common ancestor, in slot order.
- a foreach's `node.completed` merges its `item.finished` items in item order (failed
  items are dropped); a loop folds an iteration when the next starts or the loop ends.
- `race.won` keeps the winner's lineage; the losers' writes never reach anything.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from engine.core.events import Trace
from engine.core.values import JSON


@dataclass(frozen=True, slots=True)
class Write:
    """One state field written by a node, as it reaches another node."""

    seq: int  # the position of the writing node's completion in the trace
    node: str
    execution_id: str
    field: str
    value: JSON  # a summary: long values are cut (engine/core/values.py `summary`)
    via: str | None  # how it was merged into the lineage, or None on the node's own path

    def to_json(self) -> dict[str, JSON]:
        """Return the write as the API shows it."""
        return {"seq": self.seq, "node": self.node, "execution_id": self.execution_id,
                "field": self.field, "value": self.value, "via": self.via}  # fmt: skip


@dataclass(eq=False)
class Lineage:
    """A worldview rebuilt from the trace: its parent, what was merged into it, its writes."""

    parent: Lineage | None
    merged: list[tuple[Lineage, str]] = field(default_factory=list)
    writes: list[Write] = field(default_factory=list)

    def chain(self) -> list[Lineage]:
        """Return this lineage and its ancestors, nearest first."""
        found: list[Lineage] = []
        current: Lineage | None = self
        while current is not None:
            found.append(current)
            current = current.parent
        return found

    def visible(self, base: Lineage | None = None, via: str | None = None) -> Iterator[Write]:
        """Yield the writes this lineage sees below `base`, oldest first, each under `via`
        when it came in through a merge (the merge nearest the write names it)."""
        for lineage in reversed(self.chain_below(base)):
            for source, how in lineage.merged:
                yield from source.visible(lineage.parent, how)
            for write in lineage.writes:
                yield write if via is None else Write(write.seq, write.node, write.execution_id,
                                                      write.field, write.value, via)  # fmt: skip

    def chain_below(self, base: Lineage | None) -> list[Lineage]:
        """Return the chain from this lineage up to, not including, `base`."""
        found = []
        for lineage in self.chain():
            if lineage is base:
                break
            found.append(lineage)
        return found


@dataclass
class Replay:
    """The lineage of every execution path, as the trace has built them so far."""

    current: dict[str, Lineage] = field(default_factory=dict)
    items: dict[tuple[str, str], dict[int, Lineage]] = field(default_factory=dict)
    iterations: dict[tuple[str, str], tuple[int, str]] = field(default_factory=dict)

    def lineage(self, execution_id: str) -> Lineage:
        """Return the current lineage of an execution path (a root one on first sight)."""
        if execution_id not in self.current:
            self.current[execution_id] = Lineage(None)
        return self.current[execution_id]

    def apply(self, seq: int, event: Trace) -> None:
        """Replay one trace event."""
        eid, node, detail = event.execution_id, event.node or "", event.detail
        if event.event in ("branch.started", "item.started", "iteration.started"):
            if event.event == "iteration.started":  # the last iteration returned first
                self.fold_iteration(node, parent_of(eid))
                self.iterations[(node, parent_of(eid))] = (int(str(detail["number"])), eid)
            self.current[eid] = Lineage(self.lineage(parent_of(eid)))
        elif event.event == "subflow.started":
            self.current[eid] = Lineage(None)
        elif event.event == "item.finished":
            index = int(str(detail["index"]))
            self.items.setdefault((node, parent_of(eid)), {})[index] = self.lineage(eid)
        elif event.event == "gather.merged":
            gather = node.rsplit("/", 1)[-1]
            pairs = detail["inputs"]
            assert isinstance(pairs, list)
            inputs = [(str(pair[0]), str(pair[1])) for pair in pairs if isinstance(pair, list)]
            sources = [self.lineage(source) for _, source in inputs]
            merged = [(lineage, f"gather `{gather}` (slot {slot})")
                      for lineage, (slot, _) in zip(sources, inputs, strict=True)]  # fmt: skip
            self.current[eid] = Lineage(common_ancestor(sources), merged)
        elif event.event == "race.won":
            race = node.rsplit("/", 1)[-1]
            winner = f"{eid}:{race}.{detail['winner']}:1"
            self.merge(eid, [(self.lineage(winner), f"race `{race}` won by `{detail['winner']}`")])
        elif event.event == "node.completed":
            self.completed(seq, eid, node, detail)

    def completed(self, seq: int, eid: str, node: str, detail: dict[str, JSON]) -> None:
        """A node completed: a foreach merges its items, a loop folds its last iteration,
        and the node's own writes join its lineage."""
        name = node.rsplit("/", 1)[-1]
        finished = self.items.pop((node, eid), None)
        if finished is not None:
            self.merge(eid, [(finished[index], f"foreach `{name}` item {index + 1}")
                             for index in sorted(finished)])  # fmt: skip
        self.fold_iteration(node, eid)
        writes = detail.get("writes")
        if isinstance(writes, dict):
            lineage = self.lineage(eid)
            lineage.writes.extend(Write(seq, node, eid, name_, value, None)
                                  for name_, value in writes.items())  # fmt: skip

    def fold_iteration(self, loop: str, eid: str) -> None:
        """Fold the loop's last started iteration into the loop's lineage, once."""
        started = self.iterations.pop((loop, eid), None)
        if started is None:
            return
        number, iteration = started
        name = loop.rsplit("/", 1)[-1]
        self.merge(eid, [(self.lineage(iteration), f"loop `{name}` iteration {number}")])

    def merge(self, eid: str, sources: list[tuple[Lineage, str]]) -> None:
        """Continue an execution path in a new lineage that merges `sources` into it."""
        self.current[eid] = Lineage(self.lineage(eid), sources)


def parent_of(execution_id: str) -> str:
    """Return the execution id one segment up (`root:1:a:2` → `root:1`)."""
    return execution_id.rsplit(":", 2)[0]


def common_ancestor(lineages: Sequence[Lineage]) -> Lineage | None:
    """Return the nearest lineage every one of them descends from (or is), if any."""
    if not lineages:
        return None
    shared = set(map(id, lineages[0].chain()))
    for lineage in lineages[1:]:
        shared &= set(map(id, lineage.chain()))
    return next((ancestor for ancestor in lineages[0].chain() if id(ancestor) in shared), None)


def lineage_writes(
    trace: Sequence[Trace], path: str, execution_id: str | None = None
) -> list[Write] | None:
    """Return the writes that reached a node's execution (its own included), oldest first;
    None when no trace event names the node in that execution.

    The execution is `execution_id` (the node row's), or the node's latest. The writes are
    those its lineage held when it completed, or now if it has not completed.
    """
    named = [seq for seq, event in enumerate(trace)
             if event.node == path and execution_id in (None, event.execution_id)]  # fmt: skip
    if not named:
        return None
    completed = [seq for seq in named if trace[seq].event == "node.completed"]
    last = completed[-1] if completed else named[-1]
    replay = Replay()
    for seq, event in enumerate(trace[: last + 1]):
        replay.apply(seq, event)
    return list(replay.lineage(trace[last].execution_id).visible())
