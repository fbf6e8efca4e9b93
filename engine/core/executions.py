"""A run's executions and its per-execution views, from its trace (CONTRACT §3, §4).

Node rows keep only the newest write of each node path, so an earlier item, iteration or
branch is seen again through the trace. Three things come from it here, and the browser
infers none of them itself:

- `trace_rows` replays the trace into rows as the fenced write would have kept them,
  optionally only the writes inside one execution and around it (its ancestors). Over the
  whole trace they equal the stored rows in status and execution id, and in the result of
  every node whose result the walk reads (a test holds them equal on generated runs).
- `executions` is the execution tree: the root, and every foreach item, loop iteration,
  fork or race branch and subflow call, each with a status read off the events that open,
  finish, fail or cancel it.
- `explain_execution` colors the graph for one execution: the same walk as the aggregate
  view (engine/core/colors/) over that execution's rows, entering the chosen item or
  iteration exactly, so its decisions paint the paths it did not take.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum

from engine.core import graph as g
from engine.core.colors import (
    Color,
    Verdict,
    cancel_time,
    cancelled_words,
    explain,
    loops_of,
    older_round_candidates,
    parent_text,
    rows_cut_short,
    rows_in_older_rounds,
    votes_from,
)
from engine.core.events import RowStatus, RunStatus, Trace, WriteRow
from engine.core.execution_ids import ExecutionId
from engine.core.rows import NodeRow, apply_write
from engine.core.values import JSON, summary


class ExecutionKind(StrEnum):
    """What opened an execution."""

    ROOT = "root"
    ITEM = "item"
    ITERATION = "iteration"
    BRANCH = "branch"
    SUBFLOW = "subflow"


ROOT = str(ExecutionId.root())
OPENING = {
    "item.started": ExecutionKind.ITEM,
    "iteration.started": ExecutionKind.ITERATION,
    "branch.started": ExecutionKind.BRANCH,
    "subflow.started": ExecutionKind.SUBFLOW,
}
LIVE = (Color.RUNNING, Color.WAITING)


@dataclass(frozen=True, slots=True)
class Execution:
    """One execution of the tree, as the monitor shows it."""

    id: str
    parent: str | None
    kind: ExecutionKind
    owner: str  # the node path that opened it (`lines`, `pay/split`), or "" for the root
    label: str  # the item's or iteration's number, the branch's name, the subflow node's id
    status: Color
    reason: str
    first_at: str
    last_at: str

    def to_json(self) -> dict[str, JSON]:
        """Return the execution as the API and the sockets send it."""
        return {
            "id": self.id, "parent": self.parent, "kind": self.kind.value, "owner": self.owner,
            "label": self.label, "status": self.status.value, "reason": self.reason,
            "first_at": self.first_at, "last_at": self.last_at,
        }  # fmt: skip


# ---------------------------------------------------------------------- rows from the trace


def within(execution_id: str, scope: str) -> bool:
    """Return whether an execution is `scope` or inside it."""
    return execution_id == scope or execution_id.startswith(scope + ":")


def relevant(execution_id: str, focus: str | None) -> bool:
    """Return whether a write in `execution_id` counts in the view of `focus` (None: all):
    the focus itself, what runs inside it, and the executions around it."""
    return focus is None or within(execution_id, focus) or within(focus, execution_id)


class Replay:
    """Replays trace events into the row writes they stand for."""

    def __init__(self, focus: str | None) -> None:
        self.focus = focus
        self.rows: dict[str, NodeRow] = {}
        self.attempts: dict[tuple[str, str], int] = {}
        self.iterations: dict[tuple[str, str], int] = {}
        self.winners: dict[tuple[str, str], str] = {}

    def write(self, path: str, status: RowStatus, execution_id: str, result: JSON = None) -> None:
        """Apply one fenced write, if the focus sees it."""
        if relevant(execution_id, self.focus):
            attempt = self.attempts.get((path, execution_id), 1)
            apply_write(self.rows, WriteRow(path, status, execution_id, result, attempt))

    def apply(self, event: Trace) -> None:
        """Apply the row writes one trace event stands for."""
        path, eid, kind, detail = event.node, event.execution_id, event.event, event.detail
        if path is None:
            return
        if kind in OPENING:
            self.opened(kind, path, eid, detail)
        elif kind == "node.completed":
            self.write(path, RowStatus.COMPLETED, eid, self.completed_result(path, eid, detail))
        elif kind in ("node.failed", "action.failed"):
            # An action's failure writes its own error first; the node's, with equal ids
            # and attempt, then leaves the failed row as it is (the fence).
            self.write(path, RowStatus.FAILED, eid, summary(detail.get("error")))
        elif kind == "paused":
            self.write(path, RowStatus.WAITING, eid)
        elif kind == "action.dispatched":
            attempt = detail.get("attempt")
            self.attempts[(path, eid)] = attempt if isinstance(attempt, int) else 1
            self.write(path, RowStatus.RUNNING, eid)
        elif kind == "frame.retried":  # an owner of a retried action runs again
            attempt = detail.get("attempt")
            self.attempts[(path, eid)] = attempt if isinstance(attempt, int) else 1
            self.write(path, RowStatus.RUNNING, eid, detail.get("result"))
        elif kind == "action.redriven":
            attempt = detail.get("attempt")
            self.attempts[(path, eid)] = attempt if isinstance(attempt, int) else 1
        elif kind == "resumed":
            self.write(path, RowStatus.RUNNING, eid)
        elif kind == "race.won":
            self.winners[(path, eid)] = str(detail.get("winner"))
        elif kind == "fork.activated":
            self.write(path, RowStatus.COMPLETED, eid, detail.get("branches"))

    def opened(self, kind: str, path: str, eid: str, detail: Mapping[str, JSON]) -> None:
        """An owner opened a child execution: the owner's row runs in the execution above."""
        owner = parent_text(eid)
        if kind == "iteration.started":
            number = detail.get("number")
            count = number if isinstance(number, int) else 1
            self.iterations[(path, owner)] = count
            self.write(path, RowStatus.RUNNING, owner, {"iteration": count})
        else:  # a fork's completed row stays: the fence keeps a terminal status
            self.write(path, RowStatus.RUNNING, owner)

    def completed_result(self, path: str, eid: str, detail: Mapping[str, JSON]) -> JSON:
        """Return the result a completed row carries where the walk reads it."""
        if (path, eid) in self.winners:
            return self.winners[(path, eid)]
        if "result" in detail:  # a foreach's items, a loop's rounds
            return detail["result"]
        if (path, eid) in self.iterations:
            return {"iterations": self.iterations[(path, eid)]}
        return detail.get("outcome")


def trace_rows(trace: Iterable[Trace], focus: str | None = None) -> dict[str, NodeRow]:
    """Return the rows the trace's writes leave (inside and around `focus` only, if given)."""
    replay = Replay(focus)
    for event in trace:
        replay.apply(event)
    return replay.rows


# ---------------------------------------------------------------------- the execution tree


@dataclass
class Opened:
    """What the trace has said of one execution so far."""

    id: str
    kind: ExecutionKind
    owner: str
    label: str
    first_at: str
    last_at: str
    ended: Color | None = None
    reason: str = ""
    last: str = ""  # the last event traced in it
    up: Opened | None = None  # the execution it opened in
    failed_below: bool = False  # an execution inside it failed


def label_of(kind: ExecutionKind, execution_id: str) -> str:
    """Return how an execution is numbered or named in its parent."""
    name, _, number = execution_id.rpartition(":")
    last = name.rpartition(":")[2]
    if kind is ExecutionKind.BRANCH:
        return last.partition(".")[2]
    if kind is ExecutionKind.SUBFLOW:
        return last
    return number


def executions(trace: Sequence[Trace], status: RunStatus, ended: str = "") -> list[Execution]:
    """Return the run's execution tree, parents before children, each with its status."""
    tree = ExecutionTree()
    tree.add(trace)
    return tree.executions(status, ended)


class ExecutionTree:
    """The execution tree, built up event by event: a live socket adds the events traced
    since it last looked and sends the executions whose status changed."""

    def __init__(self) -> None:
        self.root = Opened(ROOT, ExecutionKind.ROOT, "", "run", "", "")
        self.opened: dict[str, Opened] = {ROOT: self.root}
        # (owner node path, the execution it runs in) → the executions it opened
        self.children: dict[tuple[str, str], list[Opened]] = {}
        # (node path, execution) → WORKING or SUSPENDED, for the frames that are either
        self.frames: dict[tuple[str, str], FrameWork] = {}
        # How to undo each change since each failed action, so that a retry of the run can
        # undo what its failure ended (the runtime restores the state from before it).
        self.journal: list[Callable[[], None]] = []
        self.marks: dict[tuple[str, str], int] = {}

    def end(self, record: Opened, color: Color, reason: str) -> None:
        """End an execution (journaled); a failure marks every execution around it."""
        self.remember(record)
        record.ended, record.reason = color, reason
        seen = record.up if color is Color.FAILED else None
        while seen is not None and not seen.failed_below:
            self.remember(seen)
            seen.failed_below = True
            seen = seen.up

    def remember(self, record: Opened) -> None:
        """Journal how to put an execution's end back as it is now."""
        ended, reason, failed_below = record.ended, record.reason, record.failed_below

        def undo() -> None:
            record.ended, record.reason, record.failed_below = ended, reason, failed_below

        self.journal.append(undo)

    def frame(self, key: tuple[str, str], work: FrameWork | None) -> None:
        """Set or clear what a frame is doing (journaled)."""
        frames, before = self.frames, self.frames.get(key)

        def undo() -> None:
            if before is None:
                frames.pop(key, None)
            else:
                frames[key] = before

        self.journal.append(undo)
        if work is None:
            frames.pop(key, None)
        else:
            frames[key] = work

    def undo_since(self, mark: int) -> None:
        """Undo every change journaled since `mark`, newest first."""
        while len(self.journal) > mark:
            self.journal.pop()()

    def add(self, trace: Iterable[Trace]) -> None:
        """Apply trace events, in their order."""
        opened, root = self.opened, self.root
        for event in trace:
            if not root.first_at:
                root.first_at = root.last_at = event.at
            eid = event.execution_id
            record = opened.get(eid)
            if record is None and event.event in OPENING and event.node is not None:
                kind = OPENING[event.event]
                above = parent_text(eid)
                record = Opened(eid, kind, event.node, label_of(kind, eid), event.at, event.at,
                                up=nearest(opened, above))  # fmt: skip
                opened[eid] = record
                self.children.setdefault((event.node, above), []).append(record)
            # The last-seen time of the event's execution and of every one around it.
            seen = record if record is not None else nearest(opened, eid)
            while seen is not None:
                seen.last_at = event.at
                seen = seen.up
            settle_execution(self, event)

    def executions(self, status: RunStatus, ended: str = "") -> list[Execution]:
        """Return every execution, parents before children, with its status now: a live
        one is waiting when nothing under it works and something under it is suspended."""
        working: set[str] = set()
        suspended: set[str] = set()
        for (_, eid), work in self.frames.items():
            marked = working if work is FrameWork.WORKING else suspended
            seen = nearest(self.opened, eid)
            while seen is not None and seen.id not in marked:
                marked.add(seen.id)
                seen = seen.up
        waiting = suspended - working
        return [finish(r, waiting, status, ended, cut_above(r)) for r in ordered(self.opened)]


def nearest(opened: Mapping[str, Opened], execution_id: str) -> Opened | None:
    """Return the opened execution that is `execution_id` or the closest one around it."""
    while True:
        found = opened.get(execution_id)
        if found is not None:
            return found
        above = parent_text(execution_id)
        if above == execution_id:
            return None
        execution_id = above


class FrameWork(StrEnum):
    """What a frame the execution tree follows is doing."""

    WORKING = "working"  # an action is in flight
    SUSPENDED = "suspended"  # waits for a person, a timer or its retry


# What each event says a frame (node path, execution) now does; None: nothing (it moved on).
FRAME_WORK: dict[str, FrameWork | None] = {
    "action.dispatched": FrameWork.WORKING,
    "paused": FrameWork.SUSPENDED,
    "action.retry_scheduled": FrameWork.SUSPENDED,
    "action.completed": None,
    "action.failed": None,
    "resumed": None,
    "frame.cancelled": None,
}


def settle_execution(tree: ExecutionTree, event: Trace) -> None:
    """Apply what one event says of the execution it names (or the children it closes)."""
    kind, eid, detail, node = event.event, event.execution_id, event.detail, event.node
    if node is not None and kind in FRAME_WORK:
        tree.frame((node, eid), FRAME_WORK[kind])
    if kind == "action.failed" and node is not None:
        tree.marks[(node, eid)] = len(tree.journal)
    elif kind == "action.redriven" and node is not None:
        tree.undo_since(tree.marks.pop((node, eid), len(tree.journal)))
    if kind in ("node.completed", "node.failed", "race.won") and node is not None:
        close_children(tree, tree.children.get((node, eid), []), event)
    record = tree.opened.get(eid)
    if record is None or record.ended is not None:
        return
    record.last = kind
    if kind == "item.finished":  # traced under the item's own execution
        tree.end(record, Color.COMPLETED, "Completed")
    elif kind in ("item.failed", "node.failed"):
        tree.end(record, Color.FAILED, f"Failed: {detail.get('error')}")
    elif kind == "frame.cancelled":
        tree.end(record, Color.CANCELLED, cancelled_words(str(detail.get("reason"))))
    elif kind in ("path.ended", "gather.waiting") and record.kind is not ExecutionKind.ROOT:
        tree.end(record, Color.COMPLETED, "Completed")
    elif kind == "iteration.started" and node is not None:
        # A new round of a loop starts: its earlier rounds have completed.
        for earlier in tree.children.get((node, parent_text(eid)), []):
            if earlier.id != eid and earlier.ended is None:
                tree.end(earlier, Color.COMPLETED, "Completed")


def close_children(tree: ExecutionTree, children: list[Opened], event: Trace) -> None:
    """An owner node finished in an execution: its children still open finished with it.

    A loop's last iteration and a subflow call completed when their node did; a race's
    winner completed and its losers were cancelled. When the owner failed, a subflow call
    failed with it, an iteration whose body had returned completed, and the rest were
    cut short.
    """
    winner = event.detail.get("winner") if event.event == "race.won" else None
    for record in children:
        if record.ended is not None:
            continue
        if event.event == "race.won" and record.label != winner:
            tree.end(record, Color.CANCELLED,
                     f"Cancelled: race `{event.node}` was won by `{winner}`")  # fmt: skip
        elif event.event != "node.failed" or (
            record.kind is ExecutionKind.ITERATION and record.last == "node.completed"
        ):
            tree.end(record, Color.COMPLETED, "Completed")
        elif record.kind is ExecutionKind.SUBFLOW or record.failed_below:
            # The failure came from inside it.
            tree.end(record, Color.FAILED, f"Failed: {event.detail.get('error')}")
        else:
            tree.end(record, Color.CANCELLED, f"Cancelled: `{event.node}` failed")


def cut_above(record: Opened) -> str:
    """Return why an open execution was cut short with one around it (a subflow call in a
    race branch that lost), or '' when none around it ended early."""
    if record.ended is not None:
        return ""
    seen = record.up
    while seen is not None:
        if seen.ended in (Color.CANCELLED, Color.FAILED):
            return seen.reason if seen.ended is Color.CANCELLED else "Cancelled: " + seen.reason
        seen = seen.up
    return ""


def finish(
    record: Opened, waiting: set[str], status: RunStatus, ended: str, cut: str = ""
) -> Execution:
    """Return one execution's status: its end if it ended, else the run's or its own."""
    color, reason = record.ended, record.reason
    if color is None and record.failed_below and (cut or status.finished):
        color, reason = Color.FAILED, "Failed: an execution inside it failed"
    elif color is None and cut and record.kind is not ExecutionKind.ROOT:
        color, reason = Color.CANCELLED, cut
    if record.kind is ExecutionKind.ROOT:
        color = Color(status.value)
        reason = status.value.capitalize() + (f": {ended}" if ended else "")
    elif color is None and status.finished:
        color = Color.CANCELLED
        reason = f"Cancelled: the run {status.value} before this finished"
        if ended and status is RunStatus.CANCELLED:
            reason = cancelled_words(ended)
    elif color is None:
        waits = record.id in waiting
        color = Color.WAITING if waits else Color.RUNNING
        reason = "Waiting for a decision or a timer" if waits else "Running"
    parent = None if record.kind is ExecutionKind.ROOT else parent_text(record.id)
    return Execution(record.id, parent, record.kind, record.owner, record.label, color,
                     reason, record.first_at, record.last_at)  # fmt: skip


def ordered(opened: Mapping[str, Opened]) -> list[Opened]:
    """Return executions parents first, siblings by owner and number (item 10 after 9)."""

    def place(record: Opened) -> tuple[tuple[str, int], ...]:
        return tuple((s.name, s.number) for s in ExecutionId.parse(record.id).segments)

    return sorted(opened.values(), key=place)


# ---------------------------------------------------------------------- one execution's view


def explain_execution(
    graphs: Mapping[str, g.Graph],
    trace: Sequence[Trace],
    status: RunStatus,
    focus: str,
    ended: str = "",
) -> dict[str, Verdict]:
    """Color every node path as it stood in one execution (CONTRACT §4)."""
    tree = {e.id: e for e in executions(trace, status, ended)}
    chosen = tree.get(focus)
    # The chosen execution's writes (and those around it) over everyone's: sibling items
    # write the same paths, while sibling branches write their own.
    rows = trace_rows(trace) | trace_rows(trace, focus)
    cut = ""
    if chosen is not None and not status.finished:
        if chosen.status is Color.CANCELLED:
            cut = chosen.reason.removeprefix("Cancelled: ")
        elif chosen.status is Color.FAILED:
            cut = f"this {chosen.kind.value} failed"
    focused = ExecutionId.parse(focus)
    loops = frozenset().union(*(loops_of(graph) for graph in graphs.values()))
    return explain(
        graphs, rows, status, ended, focus=focused, cut=cut, votes=votes_from(trace),
        cut_rows=rows_cut_short(trace, rows),
        older_rows=rows_in_older_rounds(trace, older_round_candidates(rows, loops)),
        cancelled_at=cancel_time(trace),
    )  # fmt: skip
