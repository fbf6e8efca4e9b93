"""Root -> leaves: the rule both walks share, a node's verdict and its edges' arrivals."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from engine.core import graph as g
from engine.core.colors.arrivals import (
    DECIDING,
    PAINTS,
    Arrival,
    Color,
    Verdict,
    best,
    painted,
    same,
)
from engine.core.colors.evidence import Vote, run_cancelled_words
from engine.core.colors.reasons import (
    downstream_paint,
    iteration_reason,
    live_reason,
    within,
)
from engine.core.colors.shapes import (
    branch_segment,
    forward,
    forward_order,
    forward_targets,
    loops_of,
    plain_of,
    start_of,
)
from engine.core.events import Decision, RowStatus, RunStatus
from engine.core.execution_ids import SEPARATOR, ExecutionId, parse_id
from engine.core.rows import NodeRow
from engine.core.state import subflow_key

# Hoisted for the walk's quick path, which is hot (an enum member's lookup goes through a
# descriptor): what completed_reason and unreached say of a plain node.
COMPLETED_ROW, RUNNING_ROW, COMPLETED_COLOR = (
    RowStatus.COMPLETED,
    RowStatus.RUNNING,
    Color.COMPLETED,
)
PLAIN_DONE = Verdict(Color.COMPLETED, "Completed")
LIVE = Arrival(None, None)[1:]  # a live arrival's fields after its execution id
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
        # What reaches each node: its first arrival, and the rest in the order they came
        # (`best` keeps the first of equals). Most nodes have one, which needs no list.
        first: dict[str, Arrival] = {start: entry}
        more: dict[str, list[Arrival]] = {}
        nodes = graph.nodes_by_id
        targets = forward_targets(graph)
        plain_ids = plain_of(graph)
        # Hoisted: the loop is hot (an enum member's lookup goes through a descriptor).
        rows, result, parse, completed = self.rows, self.result, parse_id, COMPLETED_ROW
        for node_id in forward_order(graph, start):
            arrival = first.pop(node_id, None)
            if arrival is None:
                continue  # nothing reaches it
            if more and (extra := more.pop(node_id, None)):
                arrival = best([arrival, *extra]) or arrival  # never None: the list has one
            path = prefix + node_id
            row = rows.get(path)
            if (
                node_id in plain_ids
                and row is not None
                and row.status is completed
                and arrival.paint is None
                and not arrival.loose
                and (
                    (eid := parse(row.execution_id)) is arrival.execution_id
                    or eid == arrival.execution_id
                )  # `same`, inline
            ):
                # Most nodes: a plain node its live execution completed passes the same
                # arrival on (what settle decides for it, without the general rule's cost).
                result[path] = (
                    PLAIN_DONE
                    if row.attempt == 1
                    else Verdict(COMPLETED_COLOR, f"Completed on attempt {row.attempt}")
                )
                passed = arrival
            else:
                node = nodes[node_id]
                quick = (
                    self.plain_onward(path, node, row, arrival) if node_id in plain_ids else None
                )
                if quick is None:
                    self.settle_and_claim(graph, prefix, node, arrival, first, more)
                    continue
                passed = quick
            for target in targets[node_id]:  # as settle_and_claim records them
                if target not in first:
                    first[target] = passed
                elif (claims := more.get(target)) is None:
                    more[target] = [passed]
                else:
                    claims.append(passed)

    def settle_and_claim(
        self,
        graph: g.Graph,
        prefix: str,
        node: g.Node,
        arrival: Arrival,
        first: dict[str, Arrival],
        more: dict[str, list[Arrival]],
    ) -> None:
        """Settle a node by the general rule, record what it passes to each target (as
        `scope` does, for a fork's 10,000 branches), and walk into a subflow it calls."""
        verdict, onward = self.settle(graph, prefix, node, arrival)
        self.result[prefix + node.id] = verdict
        for target, reaching in onward:
            if target not in first:
                first[target] = reaching
            elif (claims := more.get(target)) is None:
                more[target] = [reaching]
            else:
                claims.append(reaching)
        if isinstance(node, g.SubflowNode):
            entry = self.subflow_entry(prefix, node, arrival, verdict)
            self.scope(subflow_key(node), prefix + node.id + "/", entry)

    def plain_onward(
        self, path: str, node: g.Node, row: NodeRow | None, arrival: Arrival
    ) -> Arrival | None:
        """Settle a plain node its live execution did not complete, where a quick case
        applies (`settle` decides them alike); return what it passes on, or None for the
        general rule. Its action is in flight on a live path, or nothing wrote it."""
        if row is None:
            return self.unwritten_onward(path, arrival)
        if (
            row.status is RUNNING_ROW
            and arrival.paint is None
            and not arrival.loose
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
            parent, parse, make = f"{eid}{SEPARATOR}{node.id}.", parse_id, tuple.__new__
            # tuple.__new__ skips the named tuple's own __new__, a Python function.
            entered = [
                (e.target, make(Arrival, (parse(f"{parent}{e.branch}{SEPARATOR}1"), *LIVE)))
                if e.branch is not None
                else (e.target, self.edge_arrival(node, e, arrival, eid, verdict, None))
                for e in edges
            ]  # fmt: skip
            if not arrival.cut and not arrival.again:  # `within` would keep each as it is
                return entered
            return [(target, within(onward, arrival)) for target, onward in entered]
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
