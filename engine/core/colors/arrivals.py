"""The monitor's colors, and what reaches a node along an edge: arrivals and verdicts."""

from __future__ import annotations

from enum import StrEnum
from typing import NamedTuple

from engine.core import graph as g
from engine.core.execution_ids import ExecutionId


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
PAINTS = frozenset(PAINT_RANK)
OWNERS = g.ForeachNode | g.LoopNode | g.RaceNode
# Nodes whose completion chooses among their edges or opens new executions.
DECIDING = OWNERS | g.ForkNode | g.IfNode | g.SwitchNode | g.ApprovalNode
# Nodes whose completion passes their arrival on unchanged along every forward edge.
PLAIN = frozenset({g.StartNode, g.EndNode, g.TaskNode, g.SetNode, g.WaitNode, g.FailNode})


class Verdict(NamedTuple):
    """A node's color and why (a tuple: the walk makes one per node)."""

    color: Color
    reason: str


class Arrival(NamedTuple):
    """How the walk reached a node: live with an execution id, or painted with a color.

    A tuple, not a frozen dataclass: a fork of 10,000 makes 15,000 of them per walk, and a
    frozen dataclass costs three times as much to make.
    """

    execution_id: ExecutionId | None
    paint: Color | None
    why: str = ""  # the reason of a paint, naming the node that decided it
    loose: str = ""  # inside a body, its foreach or loop: any row under execution_id counts
    cut: str = ""  # why the activation ended early (a race lost): rows keep their truth
    closed: bool = False  # inside the body of a foreach or loop that has completed
    again: str = ""  # inside a live loop's round that another round may follow: the loop

    @property
    def order(self) -> tuple[int, str, str, str]:
        """Return the total order among a node's arrivals: the greatest one claims it."""
        eid = self.execution_id.encode() if self.execution_id is not None else ""
        if self.paint is None:
            return LIVE_RANK, self.loose, eid, ""
        return PAINT_RANK[self.paint], self.loose, self.why, eid


def painted(color: Color, why: str, execution_id: ExecutionId | None = None) -> Arrival:
    """Return a painted arrival; a pending one keeps the execution that will reach it."""
    return Arrival(execution_id, color, why)


def same(written: ExecutionId, live: ExecutionId | None) -> bool:
    """Return whether two ids are equal, by identity first (parsed ids are cached)."""
    return written is live or written == live


def best(arrivals: list[Arrival]) -> Arrival | None:
    """Return the arrival that claims a node, or None when nothing reaches it."""
    if len(arrivals) <= 1:
        return arrivals[0] if arrivals else None
    # Rank first: only the arrivals of the highest rank need their ids encoded (a gather
    # of 10,000 branches half of which are still pending compares 5,000, not 10,000).
    # The first two keys of each order, inline: a gather of 10,000 ranks 10,000 arrivals.
    ranks = [(LIVE_RANK if a.paint is None else PAINT_RANK[a.paint], a.loose) for a in arrivals]
    top = max(ranks)
    tied = [arrival for arrival, rank in zip(arrivals, ranks, strict=True) if rank == top]
    if len(tied) == 1:
        return tied[0]
    if top[0] == LIVE_RANK:  # live arrivals tied on rank and loose: their ids decide
        return max(tied, key=live_order)
    return max(tied, key=lambda arrival: arrival.order)


def live_order(arrival: Arrival) -> str:
    """Return the last key of a live arrival's order that can differ among tied ones."""
    return arrival.execution_id.encode() if arrival.execution_id is not None else ""
