"""The reasons a color carries: a live row's, a completed row's, an older iteration's."""

from __future__ import annotations

from engine.core import graph as g
from engine.core.colors.arrivals import Arrival, Color, Verdict, painted
from engine.core.events import RowStatus
from engine.core.execution_ids import ExecutionId
from engine.core.rows import NodeRow


def iteration_reason(live: ExecutionId, row: NodeRow, loops: frozenset[str]) -> str:
    """Return "loop `x` is in iteration n; …" when the row is from an older iteration, or ''."""
    written = ExecutionId.parse(row.execution_id)
    for now, then in zip(live.segments, written.segments, strict=False):
        if now.name != then.name:
            return ""
        if now.number != then.number:
            if now.number < then.number or now.name not in loops:
                return ""
            return (f"Pending: loop `{now.name}` is in round {now.number}; this last ran in "
                    f"round {then.number}")  # fmt: skip
    return ""


def live_reason(node: g.Node, row: NodeRow) -> str:
    """Return the reason of a color the node's own row decides, in people's words (the
    execution id and the row's details are the inspector's)."""
    if row.status is RowStatus.COMPLETED:
        return completed_reason(node, row)
    if row.status is RowStatus.FAILED:
        return f"Failed: {row.result}" if row.result not in (None, "") else "Failed"
    if row.status is RowStatus.WAITING:
        if isinstance(node, g.ApprovalNode):
            return f"Waiting for a decision by {' and '.join(node.groups)}"
        if isinstance(node, g.WaitNode):
            return "Waiting for its timer"
        return "Waiting for an event"
    doing = {
        g.ForkNode: "its branches are running",
        g.RaceNode: "its branches are racing",
        g.ForeachNode: "its items are running",
        g.LoopNode: "its rounds are running",
        g.SubflowNode: "its subflow is running",
        g.GatherNode: "it waits for its slots",
    }
    for kind, text in doing.items():
        if isinstance(node, kind):
            return f"Running: {text}"
    attempt = f" (attempt {row.attempt})" if row.attempt > 1 else ""
    return f"Running: its action is in flight{attempt}"


def completed_reason(node: g.Node, row: NodeRow) -> str:
    """Return what a completed node did: its choice, its winner, its rounds or items."""
    result = row.result
    if isinstance(node, g.ApprovalNode):
        return "Approved" if result == g.Outcome.APPROVED.value else "Rejected"
    if isinstance(node, g.IfNode | g.SwitchNode):
        return f"Completed: chose `{result}`"
    if isinstance(node, g.RaceNode):
        return f"Completed: `{result}` won"
    if isinstance(node, g.LoopNode) and isinstance(result, dict):
        rounds = result.get("iterations")
        if rounds == 0:
            return "Completed: ran no round"
        limit = ", at its limit" if result.get("outcome") == g.Outcome.EXHAUSTED.value else ""
        return f"Completed after {rounds} round{'' if rounds == 1 else 's'}{limit}"
    if isinstance(node, g.ForeachNode) and isinstance(result, dict):
        items, failed = result.get("items"), result.get("failed") or 0
        dropped = f", {failed} failed" if failed else ""
        return f"Completed: {items} item{'' if items == 1 else 's'}{dropped}"
    return f"Completed on attempt {row.attempt}" if row.attempt > 1 else "Completed"


def within(onward: Arrival, arrival: Arrival) -> Arrival:
    """Return an onward live arrival inside the cut activation, or the live loop round,
    its node was reached in."""
    if onward.paint is None and arrival.cut and not onward.cut:
        onward = onward._replace(cut=arrival.cut)
    if onward.paint is None and arrival.again and not onward.again:
        onward = onward._replace(again=arrival.again)
    return onward


def downstream_paint(node: g.Node, arrival: Arrival, verdict: Verdict) -> Arrival | None:
    """Return the paint a node passes on to everything after it, or None when it ran live.

    A painted region stays painted with its reason (a race loser's branch is cancelled
    throughout); below a failure, or a frame cancelled by one, nothing started: skipped.
    """
    if arrival.paint is not None:
        return arrival
    if arrival.cut and verdict.color in (Color.CANCELLED, Color.SKIPPED, Color.PENDING):
        if arrival.again:  # a later round may take this path again
            later = f"a later round of loop `{arrival.again}` may reach this"
            pending = f"Pending: {arrival.cut} in this round; {later}"
            return painted(Color.PENDING, pending, arrival.execution_id)
        skipped = f"Skipped: {arrival.cut} before this started"
        return painted(Color.SKIPPED, skipped, arrival.execution_id)
    if verdict.color is Color.FAILED:
        return painted(Color.SKIPPED, f"Skipped: `{node.id}` failed before reaching this")
    if verdict.color is Color.CANCELLED:
        return painted(Color.SKIPPED, f"Skipped: `{node.id}` was cancelled before reaching this")
    if verdict.color in (Color.PENDING, Color.SKIPPED):
        return painted(verdict.color, verdict.reason, arrival.execution_id)
    return None
