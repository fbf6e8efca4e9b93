"""The monitor's colors and their reasons (CONTRACT §4), from the graph, rows and run status.

Two walks answer one question. Root → leaves (`explain`) colors every node of a run;
leaf → root (`explain_node`) colors one node by climbing only its ancestors. Both apply
the same rule, `Walk.settle`, and combine the arrivals of a node's incoming edges with the
same total order, so they agree on every node (a property test holds them to it).

Descend from `start` carrying the live execution id. A node whose row belongs to that
execution shows its status; decisions paint whole subgraphs: the outcome an IF/switch or
approval did not take is skipped, downstream of a failure is skipped, an older
iteration's row under a live loop is pending, and anything not reached is pending
(skipped once the run finished). Skipped, cancelled and pending are never stored.

A color never contradicts what happened: where an activation ended early (a cancel, a
failure, a race lost, a loop at its limit), the nodes inside it keep the truth of their
rows. Completed and failed rows show that, a row left running or waiting is cancelled,
and a node with no row is skipped; foreach and loop bodies included (Arrival.loose,
Arrival.cut).

Every color carries a reason a person can read, naming the node that decided it. The
derivation table is docs/monitor-states.md.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from functools import lru_cache
from typing import NamedTuple

from engine.core import graph as g
from engine.core.events import Decision, RowStatus, RunStatus, Trace
from engine.core.execution_ids import SEPARATOR, ExecutionId, Segment
from engine.core.rows import NodeRow
from engine.core.state import subflow_key


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


@dataclass(frozen=True, slots=True)
class Vote:
    """One person's decision at an approval, as the trace records it (approval.vote)."""

    node: str
    execution_id: str
    user: str
    groups: tuple[str, ...]
    decision: str
    comment: str = ""
    at: str = ""

    def to_json(self) -> dict[str, str | list[str]]:
        """Return the vote as the monitor's inspector shows it."""
        return {"user": self.user, "groups": list(self.groups), "decision": self.decision,
                "comment": self.comment, "at": self.at}  # fmt: skip

    def words(self) -> str:
        """Return "finance (dana): "fine"", as a reason names a voter."""
        said = f': "{self.comment}"' if self.comment else ""
        return f"{' and '.join(self.groups) or 'an approver'} ({self.user}){said}"


# The events that say a row's frame moved on or ended (frame.cancelled ends it).
FRAME_EVENTS = frozenset(
    {"frame.cancelled", "paused", "resumed", "action.dispatched", "action.redriven",
     "frame.retried"}
)  # fmt: skip


def rows_cut_short(trace: Iterable[Trace], rows: Mapping[str, NodeRow]) -> dict[str, str]:
    """Return "Cancelled: …" by node path for the running or waiting rows whose frame the
    trace last says was cancelled (an item its foreach let fail, a race lost in an earlier
    item). A retry of the run undoes the cancels its failure made (`action.redriven`)."""
    live = {path: row.execution_id for path, row in rows.items()
            if row.status in (RowStatus.RUNNING, RowStatus.WAITING)}  # fmt: skip
    last: dict[str, tuple[int, Trace]] = {}
    failed_at: dict[tuple[str | None, str], int] = {}
    for index, event in enumerate(trace):
        node, kind = event.node, event.event
        if kind == "action.failed":
            failed_at[(node, event.execution_id)] = index
        elif kind == "action.redriven":
            since = failed_at.get((node, event.execution_id), index)
            last = {path: seen for path, seen in last.items() if seen[0] < since}
        if kind in FRAME_EVENTS and node in live and event.execution_id == live[node]:
            last[node] = (index, event)
    return {
        path: cancelled_words(str(event.detail.get("reason", "")))
        for path, (_, event) in last.items()
        if event.event == "frame.cancelled"
    }


LOOP_EVENTS = frozenset({"iteration.started", "node.completed", "node.failed"})


def older_round_candidates(
    rows: Mapping[str, NodeRow], loops: frozenset[str]
) -> dict[str, tuple[str, str, int]]:
    """Return, by node path, the (loop path, execution, round) of each finished row written
    in a round of a loop whose own row another item or round has since overwritten: only
    the trace can say whether that loop is still running a later round there."""
    found: dict[str, tuple[str, str, int]] = {}
    for path, row in rows.items():
        if row.status not in (RowStatus.COMPLETED, RowStatus.FAILED):
            continue
        scope = path.rpartition("/")[0]
        prefix = scope + "/" if scope else ""
        segments = ExecutionId.parse(row.execution_id).segments
        for depth, segment in enumerate(segments):
            looped = rows.get(prefix + segment.name)
            if segment.name not in loops or looped is None:
                continue
            around = str(ExecutionId(segments[:depth]))
            if looped.execution_id != around:
                found[path] = (prefix + segment.name, around, segment.number)
    return found


def rows_in_older_rounds(
    trace: Iterable[Trace], candidates: Mapping[str, tuple[str, str, int]]
) -> dict[str, str]:
    """Return "Pending: loop `l` is in round n; …" by node path for the candidates whose
    loop the trace says is still running a later round in the row's own execution."""
    rounds: dict[tuple[str, str], int] = {}
    over: set[tuple[str, str]] = set()
    for event in trace:
        if event.event not in LOOP_EVENTS or event.node is None:
            continue
        if event.event == "iteration.started":
            number = event.detail.get("number")
            key = (event.node, parent_text(event.execution_id))
            if isinstance(number, int):
                rounds[key] = max(rounds.get(key, 0), number)
        else:
            over.add((event.node, event.execution_id))
    found = {}
    for path, (loop, around, number) in candidates.items():
        now = rounds.get((loop, around), 0)
        if (loop, around) not in over and now > number:
            name = loop.rpartition("/")[2]
            found[path] = (f"Pending: loop `{name}` is in round {now}; this last ran in "
                           f"round {number}")  # fmt: skip
    return found


def parent_text(execution_id: str) -> str:
    """Return the execution one segment up (the root's own id for the root)."""
    head = execution_id.rpartition(":")[0]
    return head.rpartition(":")[0] or execution_id


def cancelled_words(engine_text: str) -> str:
    """Return why a frame was cancelled in people's words, from the engine's reason ("run
    cancelled by admin", "race r won by b", a failure's message)."""
    text = engine_text.removeprefix("run ")
    race, won, winner = text.removeprefix("race ").partition(" won by ")
    if text.startswith("race ") and won:
        return f"Cancelled: race `{race}` was won by `{winner}`"
    who, colon, why = text.partition(": ")
    if who.startswith("cancelled by "):
        because = f" ({why})" if colon and why else ""
        return f"Cancelled by {who.removeprefix('cancelled by ')}{because}"
    return f"Cancelled: {text}" if text else "Cancelled"


def clock_time(at: str) -> str:
    """Return an RFC 3339 time as a wall-clock "14:02 UTC", or "" when it does not parse."""
    try:
        moment = datetime.fromisoformat(at.replace("Z", "+00:00"))
    except ValueError:
        return ""
    if moment.tzinfo is None:
        return ""
    return moment.astimezone(UTC).strftime("%H:%M UTC")


def cancel_time(trace: Iterable[Trace]) -> str:
    """Return when the trace says the run was cancelled ("14:02 UTC"), or ""."""
    for event in trace:
        if event.event == "run.cancelled":
            return clock_time(event.at)
    return ""


def run_cancelled_words(ended: str, at: str = "") -> str:
    """Return who cancelled a run, when, and why, from its error text ("cancelled by admin:
    duplicate invoice") and the clock time of the cancel ("14:02 UTC", or "" when unknown)."""
    who, _, why = ended.partition(": ")
    who = who.removeprefix("cancelled by ") or "an admin"
    if at:
        return f"Cancelled by {who} at {at}" + (f": {why}" if why else "")
    return f"Cancelled by {who}" + (f" ({why})" if why else "")


def votes_from(trace: Iterable[Trace]) -> dict[str, list[Vote]]:
    """Return the votes of a run's approval.vote events, by node path."""
    found: dict[str, list[Vote]] = {}
    for event in trace:
        if event.event != "approval.vote" or event.node is None:
            continue
        detail = event.detail
        groups = detail.get("groups")
        vote = Vote(event.node, event.execution_id, str(detail.get("user", "")),
                    tuple(str(g) for g in groups) if isinstance(groups, list) else (),
                    str(detail.get("decision", "")), str(detail.get("comment") or ""),
                    event.at)  # fmt: skip
        found.setdefault(event.node, []).append(vote)
    return found


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
    ranks = [rank_of(arrival) for arrival in arrivals]
    top = max(ranks)
    tied = [arrival for arrival, rank in zip(arrivals, ranks, strict=True) if rank == top]
    return tied[0] if len(tied) == 1 else max(tied, key=lambda arrival: arrival.order)


def rank_of(arrival: Arrival) -> tuple[int, str]:
    """Return the first two keys of an arrival's order."""
    rank = LIVE_RANK if arrival.paint is None else PAINT_RANK[arrival.paint]
    return rank, arrival.loose


def colors(
    graphs: Mapping[str, g.Graph],
    rows: Mapping[str, NodeRow],
    status: RunStatus,
    ended: str = "",
) -> dict[str, str]:
    """Return the color of every node path of the run (subflow nodes as `sub/child`)."""
    return {path: v.color.value for path, v in explain(graphs, rows, status, ended).items()}


def explain(
    graphs: Mapping[str, g.Graph],
    rows: Mapping[str, NodeRow],
    status: RunStatus,
    ended: str = "",
    focus: ExecutionId | None = None,
    cut: str = "",
    votes: Mapping[str, Sequence[Vote]] | None = None,
    cut_rows: Mapping[str, str] | None = None,
    older_rows: Mapping[str, str] | None = None,
    cancelled_at: str = "",
) -> dict[str, Verdict]:
    """Walk root → leaves: return every node path's color and reason.

    `ended` is the run's error text when it failed or was cancelled ("cancelled by admin:
    …"); it explains the rows a finished run left running or waiting. With a `focus`
    (an item or iteration: engine/core/executions.py), the walk enters that execution of
    its foreach or loop exactly instead of the whole body; `cut` says why that execution
    ended early while the run went on. `votes` name who decided (`votes_from`), and
    `cut_rows` the running or waiting rows whose frame was cancelled while the run goes
    on (`rows_cut_short`): in a body, rows alone cannot tell an earlier item's; and
    `older_rows` the finished rows of a loop's earlier round where that loop still runs in
    the row's own item (`rows_in_older_rounds`); `cancelled_at` the clock time an admin
    cancelled the run (`clock_time`), which the reasons of the rows it cut short name.
    """
    walk = Walk(graphs, rows, status, ended, focus, cut)
    walk.votes = votes or {}
    walk.cut_rows = cut_rows or {}
    walk.older_rows = older_rows or {}
    walk.cancelled_at = cancelled_at
    walk.scope("main", "", Arrival(ExecutionId.root(), None))
    return walk.result


def explain_run(
    graphs: Mapping[str, g.Graph],
    rows: Mapping[str, NodeRow],
    status: RunStatus,
    ended: str,
    trace: Sequence[Trace],
) -> dict[str, Verdict]:
    """Return explain() over a run whose whole trace is at hand (the in-process runtime,
    the CLI): who decided, and which rows' frames were cut short, come from it."""
    loops = frozenset().union(*(loops_of(graph) for graph in graphs.values()))
    older = rows_in_older_rounds(trace, older_round_candidates(rows, loops))
    return explain(graphs, rows, status, ended, votes=votes_from(trace),
                   cut_rows=rows_cut_short(trace, rows), older_rows=older,
                   cancelled_at=cancel_time(trace))  # fmt: skip


def explain_node(
    graphs: Mapping[str, g.Graph],
    rows: Mapping[str, NodeRow],
    status: RunStatus,
    path: str,
    ended: str = "",
    votes: Mapping[str, Sequence[Vote]] | None = None,
    cut_rows: Mapping[str, str] | None = None,
    older_rows: Mapping[str, str] | None = None,
    cancelled_at: str = "",
) -> Verdict | None:
    """Walk leaf → root: return one node path's color and reason, or None if unreachable.

    Only the node's ancestors are visited (and, for a node inside a subflow, the subflow
    node's ancestors in the parent graph). The arguments are explain()'s.
    """
    walk = Walk(graphs, rows, status, ended)
    walk.votes = votes or {}
    walk.cut_rows = cut_rows or {}
    walk.older_rows = older_rows or {}
    walk.cancelled_at = cancelled_at
    return Climb(walk).verdict("main", "", path)


# Hoisted for the walk's quick path, which is hot (an enum member's lookup goes through a
# descriptor): what completed_reason and unreached say of a plain node.
COMPLETED_ROW, RUNNING_ROW, COMPLETED_COLOR = (
    RowStatus.COMPLETED,
    RowStatus.RUNNING,
    Color.COMPLETED,
)
PLAIN_DONE = Verdict(Color.COMPLETED, "Completed")
NOT_REACHED = Verdict(Color.PENDING, "Pending: not reached yet")


class Walk:
    """The rule both walks share: a node's verdict and its edges' arrivals."""

    def __init__(
        self,
        graphs: Mapping[str, g.Graph],
        rows: Mapping[str, NodeRow],
        status: RunStatus,
        ended: str = "",
        focus: ExecutionId | None = None,
        cut: str = "",
    ) -> None:
        self.graphs = graphs
        self.rows = rows
        self.status = status
        self.finished = status.finished
        self.ended = ended
        self.focus = focus
        self.cut = cut
        self.votes: Mapping[str, Sequence[Vote]] = {}
        self.cut_rows: Mapping[str, str] = {}
        self.older_rows: Mapping[str, str] = {}
        self.cancelled_at = ""
        self.loops = frozenset().union(*(loops_of(graph) for graph in graphs.values()))
        self.result: dict[str, Verdict] = {}

    # ------------------------------------------------------------------ root → leaves

    def scope(self, key: str, prefix: str, entry: Arrival) -> None:
        """Color one graph (the run's, or a subflow's under a path prefix) in topological
        order, so that every node is settled once, after all its predecessors."""
        graph = self.graphs.get(key)
        if graph is None:
            return
        start = start_of(graph)
        claims: dict[str, list[Arrival]] = {start: [entry]}
        nodes = graph.nodes_by_id
        edges = forward(graph)
        for node_id in forward_order(graph, start):
            arrival = best(claims.pop(node_id, []))
            if arrival is None:
                continue
            node = nodes[node_id]
            passed = self.plain_onward(prefix, node, arrival) if type(node) in PLAIN else None
            if passed is not None:
                for edge in edges[node_id]:
                    claims.setdefault(edge.target, []).append(passed)
                continue
            verdict, onward = self.settle(graph, prefix, node, arrival)
            self.result[prefix + node_id] = verdict
            for target, next_arrival in onward:
                claims.setdefault(target, []).append(next_arrival)
            if isinstance(node, g.SubflowNode):
                self.scope(subflow_key(node), prefix + node.id + "/",
                           self.subflow_entry(prefix, node, arrival, verdict))  # fmt: skip

    def plain_onward(self, prefix: str, node: g.Node, arrival: Arrival) -> Arrival | None:
        """Settle a plain node the quick way where one applies; return what it passes on.

        Most nodes are plain, and three cases decide one without the general rule's cost
        (`settle` decides them alike): its live execution completed it, its action is in
        flight on a live path, or nothing wrote it. None: the general rule decides.
        """
        path = prefix + node.id
        row = self.rows.get(path)
        if row is None:
            return self.unwritten_onward(path, arrival)
        if arrival.paint is not None or arrival.loose:
            return None
        if row.status is COMPLETED_ROW and same(
            ExecutionId.parse(row.execution_id), arrival.execution_id
        ):
            # A plain node its live execution completed passes the same arrival on.
            self.result[path] = (
                PLAIN_DONE
                if row.attempt == 1
                else Verdict(COMPLETED_COLOR, f"Completed on attempt {row.attempt}")
            )
            return arrival
        if (
            row.status is RUNNING_ROW
            and not arrival.cut
            and not self.finished
            and path not in self.cut_rows
            and same(ExecutionId.parse(row.execution_id), arrival.execution_id)
        ):
            # A plain node whose action is in flight on a live path: what follows waits for it.
            self.result[path] = Verdict(Color.RUNNING, live_reason(node, row))
            return painted(Color.PENDING, f"Pending: `{node.id}` is running", arrival.execution_id)
        return None

    def unwritten_onward(self, path: str, arrival: Arrival) -> Arrival | None:
        """A plain node nothing wrote: pending (not yet reached) on a live path of a live
        run, or the paint it was reached with, passed on to what follows."""
        if arrival.loose or arrival.cut:
            return None
        if arrival.paint is not None:
            self.result[path] = Verdict(arrival.paint, arrival.why)
            return arrival
        if self.finished:
            return None
        self.result[path] = NOT_REACHED
        return Arrival(arrival.execution_id, Color.PENDING, NOT_REACHED.reason)

    # ------------------------------------------------------------------ the rule

    def settle(
        self, graph: g.Graph, prefix: str, node: g.Node, arrival: Arrival
    ) -> tuple[Verdict, list[tuple[str, Arrival]]]:
        """Return a node's verdict and how the walk enters each of its forward edges."""
        verdict = self.verdict(prefix + node.id, node, arrival)
        return verdict, self.successors(graph, prefix, node, arrival, verdict)

    def verdict(self, path: str, node: g.Node, arrival: Arrival) -> Verdict:
        """Return a node's color and reason from its row and how the walk arrived."""
        row = self.rows.get(path)
        if arrival.paint is not None:
            older_round = arrival.paint in (Color.PENDING, Color.SKIPPED) and not self.finished
            if older_round and row is not None and arrival.execution_id:
                # Written in an older round of a loop still running: a later one may again.
                later = iteration_reason(arrival.execution_id, row, self.loops)
                if later:
                    return Verdict(Color.PENDING, later)
            return Verdict(arrival.paint, arrival.why)
        if row is None:
            return self.unreached(arrival)
        if not self.belongs(row, arrival, isinstance(node, g.GatherNode)):
            return self.older(row, arrival)
        if row.status in (RowStatus.RUNNING, RowStatus.WAITING):
            doing = self.doing(row)
            if arrival.cut:
                return Verdict(Color.CANCELLED, f"Cancelled: {arrival.cut} while {doing}")
            if self.finished:
                return Verdict(Color.CANCELLED, self.cut_short(row))
            if path in self.cut_rows:
                return Verdict(Color.CANCELLED, f"{self.cut_rows[path]} while {doing}")
            if arrival.loose:
                # In a body, a race lost in this row's own item or round cut it short; in a
                # body whose owner finished, whatever still runs was cut short.
                lost = self.lost_race(path, row)
                if lost or arrival.closed:
                    why = lost or f"every {arrival.loose.split(' of ')[0]} finished"
                    return Verdict(Color.CANCELLED, f"Cancelled: {why} while {doing}")
        if arrival.loose and not self.finished:
            later = self.older_round(path, row) or self.older_rows.get(path, "")
            if later:
                return Verdict(Color.PENDING, later)
        if isinstance(node, g.ApprovalNode) and row.status is RowStatus.COMPLETED:
            return Verdict(Color.COMPLETED, self.decided_reason(path, row))
        return Verdict(Color(row.status.value), live_reason(node, row))

    def decided_reason(self, path: str, row: NodeRow) -> str:
        """Return "Approved by finance (dana): "fine"": the decision and who took it."""
        approved = row.result == g.Outcome.APPROVED.value
        said = "Approved" if approved else "Rejected"
        voted = (Decision.APPROVE if approved else Decision.REJECT).value
        people = [
            vote.words() for vote in self.votes.get(path, ())
            if vote.execution_id == row.execution_id and vote.decision == voted
        ]  # fmt: skip
        return f"{said} by {' and '.join(people)}" if people else said

    def older_round(self, path: str, row: NodeRow) -> str:
        """Return "Pending: loop `l` is in round n; …" when the row is from an older round of
        a loop still running in the row's own item (a body sees it loosely), else ''."""
        scope = path.rpartition("/")[0]
        prefix = scope + "/" if scope else ""
        segments = ExecutionId.parse(row.execution_id).segments
        for depth, segment in enumerate(segments):
            if segment.name not in self.loops:
                continue
            looped = self.rows.get(prefix + segment.name)
            if looped is None or looped.status is not RowStatus.RUNNING:
                continue
            if ExecutionId.parse(looped.execution_id).segments != segments[:depth]:
                continue
            now = looped.result.get("iteration") if isinstance(looped.result, dict) else None
            if isinstance(now, int) and now > segment.number:
                return (f"Pending: loop `{segment.name}` is in round {now}; this last ran in "
                        f"round {segment.number}")  # fmt: skip
        return ""

    def lost_race(self, path: str, row: NodeRow) -> str:
        """Return "race `r` was won by `b`" when a race of the row's own execution was won
        by another branch than the row's, else ''."""
        scope = path.rpartition("/")[0]
        prefix = scope + "/" if scope else ""
        segments = ExecutionId.parse(row.execution_id).segments
        for depth, segment in enumerate(segments):
            race, dot, branch = segment.name.partition(".")
            if not dot:
                continue
            raced = self.rows.get(prefix + race)
            if raced is None or raced.status is not RowStatus.COMPLETED:
                continue
            if ExecutionId.parse(raced.execution_id).segments != segments[:depth]:
                continue
            if isinstance(raced.result, str) and raced.result != branch:
                graph_node = self.node_at(prefix + race)
                if isinstance(graph_node, g.RaceNode):
                    return f"race `{race}` was won by `{raced.result}`"
        return ""

    def node_at(self, path: str) -> g.Node | None:
        """Return the graph node of a node path, through its subflow callers."""
        graph = self.graphs.get("main")
        *callers, last = path.split("/")
        for caller in callers:
            node = graph.nodes_by_id.get(caller) if graph is not None else None
            if not isinstance(node, g.SubflowNode):
                return None
            graph = self.graphs.get(subflow_key(node))
        return graph.nodes_by_id.get(last) if graph is not None else None

    def unreached(self, arrival: Arrival) -> Verdict:
        """Return the verdict of a node the live path reaches but no row records."""
        if arrival.cut and arrival.again:
            later = f"a later round of loop `{arrival.again}` may reach this"
            return Verdict(Color.PENDING, f"Pending: {arrival.cut} in this round; {later}")
        if arrival.cut:
            return Verdict(Color.SKIPPED, f"Skipped: {arrival.cut} before this started")
        if self.finished or arrival.closed:
            if arrival.loose:
                return Verdict(Color.SKIPPED, f"Skipped: no {arrival.loose} reached this")
            return Verdict(Color.SKIPPED, self.finished_without())
        if arrival.loose:
            return Verdict(Color.PENDING, f"Pending: no {arrival.loose} has reached this yet")
        return Verdict(Color.PENDING, "Pending: not reached yet")

    def older(self, row: NodeRow, arrival: Arrival) -> Verdict:
        """Return the verdict of a node whose row another execution wrote (an older one)."""
        assert arrival.execution_id is not None
        live = arrival.execution_id
        if arrival.cut:
            return Verdict(Color.SKIPPED, f"Skipped: {arrival.cut} before this started")
        if self.finished or arrival.closed:
            return Verdict(Color.SKIPPED, self.finished_without())
        later = iteration_reason(live, row, self.loops)
        return Verdict(Color.PENDING, later or "Pending: not reached yet in this round")

    def doing(self, row: NodeRow) -> str:
        """Return what a running or waiting row was doing: "waiting for legal"."""
        if row.status is RowStatus.RUNNING:
            return "running"
        node = self.node_at(row.node)
        if isinstance(node, g.ApprovalNode):
            return f"waiting for {' and '.join(node.groups)}"
        if isinstance(node, g.WaitNode):
            return "waiting for its timer"
        return "waiting"

    def cut_short(self, row: NodeRow) -> str:
        """Return why a row left running or waiting in a finished run shows cancelled."""
        doing = self.doing(row)
        if self.status is RunStatus.CANCELLED:
            words = run_cancelled_words(self.ended, self.cancelled_at)
            return f"{words} (while {doing})" if self.cancelled_at else f"{words} while {doing}"
        failed = self.first_failure()
        if self.status is RunStatus.FAILED and failed:
            return f"Cancelled: `{failed}` failed while {doing}"
        return f"Cancelled: the run ended ({self.status.value}) while {doing}"

    def finished_without(self) -> str:
        """Return why a finished run never reached a node."""
        failed = self.first_failure() if self.status is RunStatus.FAILED else ""
        if failed:
            return f"Skipped: the run failed at `{failed}` before reaching this"
        if self.status is RunStatus.CANCELLED:
            return "Skipped: the run was cancelled before reaching this"
        return "Skipped: the run finished without reaching this"

    def first_failure(self) -> str:
        """Return the path of the deepest failed row (the failure itself), or ''."""
        failed = [r for r in self.rows.values() if r.status is RowStatus.FAILED]
        if not failed:
            return ""
        deepest = max(failed, key=lambda r: (r.execution_id.count(":"), r.node))
        return deepest.node

    def belongs(self, row: NodeRow, arrival: Arrival, gather: bool = False) -> bool:
        """Return whether the row was written by the live execution of the arrival.

        A gather's row carries its continuation's id: the common prefix of its inputs'.
        """
        assert arrival.execution_id is not None
        written = ExecutionId.parse(row.execution_id)
        if arrival.loose:
            return arrival.execution_id.is_prefix_of(written)
        if gather:
            return written.is_prefix_of(arrival.execution_id)
        return written == arrival.execution_id

    def successors(
        self, graph: g.Graph, prefix: str, node: g.Node, arrival: Arrival, verdict: Verdict
    ) -> list[tuple[str, Arrival]]:
        """Return where the walk goes next, and how, from a colored node."""
        edges = forward(graph)[node.id]
        if arrival.paint is None and isinstance(node, g.ForeachNode | g.LoopNode):
            return self.owner_successors(prefix, node, arrival, verdict, edges)
        if arrival.paint is None and arrival.loose:
            # Inside a body every item and iteration writes the same nodes: no one item's
            # decision or failure paints the others' paths, so each node shows its own row.
            return [(e.target, arrival) for e in edges]
        if arrival.paint is None and isinstance(node, g.RaceNode):
            cut_race = self.cut_race(prefix, node, arrival, verdict, edges)
            if cut_race is not None:
                return cut_race
        if (
            arrival.paint is None
            and verdict.color is Color.FAILED
            and not self.finished
            and not arrival.cut
        ):
            # On a live path a failed row is an attempt the run will retry (a failure that
            # ends its activation ends the run, or lies in a body, where rows speak).
            attempt = self.rows[prefix + node.id].attempt if prefix + node.id in self.rows else 1
            again = f"Pending: `{node.id}` failed attempt {attempt} and will be retried"
            return [(e.target, painted(Color.PENDING, again, arrival.execution_id)) for e in edges]
        paint = downstream_paint(node, arrival, verdict)
        if paint is not None:
            return [(e.target, paint) for e in edges]
        row = self.rows.get(prefix + node.id)
        eid = ExecutionId.parse(row.execution_id) if row else arrival.execution_id
        assert eid is not None
        if verdict.color is Color.COMPLETED and not isinstance(node, DECIDING):
            onward = arrival if eid == arrival.execution_id else arrival._replace(execution_id=eid)
            return [(e.target, onward) for e in edges]  # the fast path: most nodes
        if type(node) is g.ForkNode and verdict.color is Color.COMPLETED:
            # A fork of 10,000 enters each branch: its branch ids, made in one loop from
            # their text, so that each is the parse cache's object its row's id is too.
            parent, parse = f"{eid}{SEPARATOR}{node.id}.", ExecutionId.parse
            return [
                (e.target, within(Arrival(parse(f"{parent}{e.branch}{SEPARATOR}1"), None),
                                  arrival))
                if e.branch is not None
                else (e.target, within(self.edge_arrival(node, e, arrival, eid, verdict, None),
                                       arrival))
                for e in edges
            ]  # fmt: skip
        decided = row.result if row is not None else None
        return [
            (e.target, within(self.edge_arrival(node, e, arrival, eid, verdict, decided), arrival))
            for e in edges
        ]

    def cut_race(
        self,
        prefix: str,
        node: g.RaceNode,
        arrival: Arrival,
        verdict: Verdict,
        edges: list[g.Edge],
    ) -> list[tuple[str, Arrival]] | None:
        """Return the arrivals leaving a race a cancel or a failure ended, else None: its
        branches keep the truth of their rows, its exits are skipped."""
        row = self.rows.get(prefix + node.id)
        if verdict.color not in (Color.CANCELLED, Color.FAILED) or row is None:
            return None
        if not self.belongs(row, arrival):
            return None
        eid = ExecutionId.parse(row.execution_id)
        leave = downstream_paint(node, arrival, verdict)
        assert leave is not None
        return [
            (e.target, within(Arrival(eid.branch(node.id, e.branch), None), arrival)
             if e.branch is not None else leave)
            for e in edges
        ]  # fmt: skip

    def owner_successors(
        self,
        prefix: str,
        node: g.ForeachNode | g.LoopNode,
        arrival: Arrival,
        verdict: Verdict,
        edges: list[g.Edge],
    ) -> list[tuple[str, Arrival]]:
        """Return the arrivals leaving a foreach or loop the walk reached live.

        The body keeps the truth of its rows whatever became of its owner: a body cut short
        by a cancel, a failure or a loop at its limit shows what each node did (completed,
        failed, cancelled where it was running or waiting, skipped where nothing reached
        it). Only a live loop's body is seen through its current iteration, where a row of
        an older iteration is pending. The exits follow the owner's own color.
        """
        row = self.rows.get(prefix + node.id)
        body_outcomes = (g.Outcome.ITEM.value, g.Outcome.BODY.value)
        paint = downstream_paint(node, arrival, verdict)
        if (
            row is None
            or not self.belongs(row, arrival)
            or verdict.color in PAINTS - {Color.CANCELLED}
        ):
            fallback = paint or painted(Color.PENDING, verdict.reason, arrival.execution_id)
            return [(e.target, fallback) for e in edges]
        body = self.body_arrival(node, arrival, row, verdict)
        if arrival.loose:
            # In an outer body the owner's row is one item's: the exits show their own rows.
            leave = arrival
        elif paint is not None:
            leave = paint
        elif verdict.color is Color.COMPLETED:
            leave = arrival._replace(execution_id=ExecutionId.parse(row.execution_id))
        else:
            doing = f"Pending: `{node.id}` is {verdict.color.value}"
            leave = painted(Color.PENDING, doing, arrival.execution_id)
        return [(e.target, body if e.follows in body_outcomes else leave) for e in edges]

    def edge_arrival(
        self, node: g.Node, edge: g.Edge, arrival: Arrival, eid: ExecutionId, verdict: Verdict,
        decided: object,
    ) -> Arrival:  # fmt: skip
        """Return how the walk enters an edge's target from a node that ran (or runs)."""
        if isinstance(node, g.ForkNode) and edge.branch is not None:
            return Arrival(ExecutionId((*eid.segments, branch_segment(node.id, edge.branch))), None)
        if isinstance(node, g.RaceNode) and edge.branch is not None:
            branch = eid.branch(node.id, edge.branch)
            if decided is None or edge.branch == decided:
                return Arrival(branch, None)
            return Arrival(branch, None, cut=f"race `{node.id}` was won by `{decided}`")
        if verdict.color is not Color.COMPLETED:
            return painted(Color.PENDING, f"Pending: `{node.id}` is {verdict.color.value}", eid)
        if isinstance(node, g.IfNode | g.SwitchNode | g.ApprovalNode | g.RaceNode):
            taken = edge.follows == decided or (
                isinstance(node, g.RaceNode) and edge.follows == g.Outcome.NEXT.value
            )
            if not taken:
                if arrival.again:  # pending means the run can still reach it
                    later = (f"Pending: `{node.id}` chose `{decided}` in this round; a later "
                             f"round of loop `{arrival.again}` may take this path")  # fmt: skip
                    return painted(Color.PENDING, later, eid)
                took = f"Not taken: `{node.id}` chose `{decided}`"
                return painted(Color.SKIPPED, took, eid)
        return Arrival(eid, None)

    def body_arrival(
        self, node: g.ForeachNode | g.LoopNode, arrival: Arrival, row: NodeRow, verdict: Verdict
    ) -> Arrival:
        """Return how the walk enters a foreach's or loop's body from the owner's row."""
        owner = ExecutionId.parse(row.execution_id)
        focused = self.focused(node, owner)
        if focused is not None:
            cut = self.cut if focused == self.focus else arrival.cut
            return Arrival(focused, None, cut=cut)
        # Nested in another body, any row under the outer body's execution counts.
        scope = arrival.execution_id if arrival.loose and arrival.execution_id else owner
        cut = arrival.cut
        if not cut and not self.finished and verdict.color in (Color.FAILED, Color.CANCELLED):
            cut = f"`{node.id}` {verdict.color.value}"  # e.g. in an item its foreach let fail
        # A finished body is closed, unless a later round of a live loop may open it again.
        closed = (
            verdict.color is Color.COMPLETED
            and not arrival.again
            and (not arrival.loose or arrival.closed)
        )
        if isinstance(node, g.ForeachNode):
            noun = f"item of foreach `{node.id}`"
            return Arrival(scope, None, loose=noun, cut=cut, closed=closed, again=arrival.again)
        loose = f"iteration of loop `{node.id}`"
        result = row.result if isinstance(row.result, dict) else {}
        ran_none = verdict.color is Color.COMPLETED and result.get("iterations") == 0
        if ran_none and not arrival.loose and not arrival.again:
            return painted(Color.SKIPPED, f"Skipped: loop `{node.id}` ran no round", owner)
        number = result.get("iteration")
        if verdict.color is Color.RUNNING and not arrival.loose and isinstance(number, int):
            if number > 0:
                # The live round, exactly: its decisions paint what it did not take.
                again = node.id if number < node.max_iterations else ""
                round_eid = owner.iteration(node.id, number)
                return Arrival(round_eid, None, cut=arrival.cut, again=again or arrival.again)
            return painted(Color.PENDING, f"Pending: loop `{node.id}` has not started a "
                                          "round")  # fmt: skip
        return Arrival(scope, None, loose=loose, cut=cut, closed=closed, again=arrival.again)

    def focused(self, node: g.Node, owner: ExecutionId) -> ExecutionId | None:
        """Return the item or iteration of `node` the focus lies in, if it lies in one."""
        focus = self.focus
        depth = len(owner.segments)
        if focus is None or len(focus.segments) <= depth or not owner.is_prefix_of(focus):
            return None
        segment = focus.segments[depth]
        if segment.name != node.id:
            return None
        return ExecutionId(focus.segments[: depth + 1])

    def subflow_entry(
        self, prefix: str, node: g.SubflowNode, arrival: Arrival, verdict: Verdict
    ) -> Arrival:
        """Return how the walk enters a subflow's graph from its calling node."""
        row = self.rows.get(prefix + node.id)
        if arrival.paint is not None or row is None or not self.belongs(row, arrival):
            called = f"{verdict.color.value.capitalize()}: subflow `{node.id}` is "
            return painted(verdict.color, f"{called}{verdict.color.value} ({verdict.reason})")
        if arrival.loose:
            return arrival  # a body's subflow: each child node shows its own row, as above
        return arrival._replace(execution_id=ExecutionId.parse(row.execution_id).subflow(node.id))


class Climb:
    """Leaf → root: one node's verdict from its ancestors' verdicts, memoized."""

    def __init__(self, walk: Walk) -> None:
        self.walk = walk
        self.arrivals: dict[str, Arrival | None] = {}
        self.verdicts: dict[str, Verdict] = {}
        self.entries: dict[str, Arrival] = {}

    def verdict(self, key: str, prefix: str, path: str) -> Verdict | None:
        """Return the verdict of `path` (relative to a scope: `sub/child` goes down)."""
        graph = self.walk.graphs.get(key)
        if graph is None:
            return None
        head, slash, rest = path.partition("/")
        if head not in graph.nodes_by_id:
            return None
        own = self.node_verdict(graph, prefix, head)
        if not slash:
            return own
        node = graph.node(head)
        arrival = self.arrival(graph, prefix, head)
        if own is None or arrival is None or not isinstance(node, g.SubflowNode):
            return None
        inner = prefix + head + "/"
        self.entries[inner] = self.walk.subflow_entry(prefix, node, arrival, own)
        return self.verdict(subflow_key(node), inner, rest)

    def node_verdict(self, graph: g.Graph, prefix: str, node_id: str) -> Verdict | None:
        """Return one node's verdict in a scope, climbing its ancestors first."""
        if prefix + node_id in self.verdicts:
            return self.verdicts[prefix + node_id]
        arrival = self.arrival(graph, prefix, node_id)
        if arrival is None:
            return None
        verdict = self.walk.verdict(prefix + node_id, graph.node(node_id), arrival)
        self.verdicts[prefix + node_id] = verdict
        return verdict

    def arrival(self, graph: g.Graph, prefix: str, node_id: str) -> Arrival | None:
        """Return the arrival that claims a node: the best of its incoming forward edges."""
        path = prefix + node_id
        if path in self.arrivals:
            return self.arrivals[path]
        self.arrivals[path] = None  # a cycle without a loop node reaches nothing
        start = start_of(graph)
        reached = reachable(graph, start)
        claims: list[Arrival] = []
        if node_id == start:
            entry = self.entries.get(prefix)
            claims.append(entry if entry is not None else Arrival(ExecutionId.root(), None))
        for edge in incoming(graph, node_id):
            if edge.source not in reached or edge not in forward(graph)[edge.source]:
                continue
            source = graph.node(edge.source)
            before = self.arrival(graph, prefix, edge.source)
            verdict = self.node_verdict(graph, prefix, edge.source)
            if before is None or verdict is None:
                continue
            for target, onward in self.walk.successors(graph, prefix, source, before, verdict):
                if target == node_id:
                    claims.append(onward)
        self.arrivals[path] = best(claims) if node_id in reached else None
        return self.arrivals[path]


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
    cache: frozenset[str] | None = graph.__dict__.get("_loops")
    if cache is None:
        cache = frozenset(n.id for n in graph.nodes if isinstance(n, g.LoopNode))
        graph.__dict__["_loops"] = cache
    return cache


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
