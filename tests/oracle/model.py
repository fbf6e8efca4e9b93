"""The monitor's colors, recomputed by replaying a run's trace: the oracle the walks must match.

It reads only the graphs and the trace (the `Trace` commands the scheduler emitted, in
order). It never reads node rows and shares no code with `engine/core/colors/`.

The rule it implements (the spec, CONTRACT §4 as the lead stated it):

* A color never contradicts what happened. For a node in an execution E:
  - `completed` / `failed` when the node completed / failed in E (its last attempt);
  - `running` / `waiting` while its frame in E is working / suspended (a live run only);
  - `cancelled` when it was running or waiting in E when its activation ended (a cancel
    of the run, a failure, a race lost, a loop at its limit, its scope ending);
  - `skipped` when it never started in E and never will;
  - `pending` when it has not started but the run can still reach it.
  A node whose attempt failed keeps `failed` while it waits for its retry, and if it is
  cancelled then (the row the node wrote is `failed`).
* Executions: `root:1`, one per foreach item, loop iteration, fork/race branch and
  subflow call. Each is running or waiting while live (waiting when every live frame
  under it waits), then completed, failed or cancelled by how its activation ended.
* Aggregate colors (no execution picked): each node path shows its truth in the
  execution of its most recent write (highest execution id by CONTRACT §3 ordering, then
  attempt: the row the fence keeps). Exception: while the run is live, a node whose most
  recent write is from an older iteration of a loop that is still live shows `pending`.
  A node with no write is `pending` while the run can still reach it, else `skipped`.
  "Can still reach" is a plain BFS over forward edges from every live frame (a working
  or suspended node, or an owner that can still start a body), never across back-edges.
* A finished run shows nothing pending, running or waiting.
* A retry (`action.redriven`) puts the run back as it was just before the action's
  failure (the runtime restores that snapshot), so the replay restores its own
  checkpoint taken before that `action.failed`, the writes included: what the failing
  step did after the failure (an item skipped, the path on to a `fail` node) is undone,
  and the run will do it again. The owners of the retried action read running again
  (`frame.retried`, at their next attempt).

Decisions where the trace is coarser than the rows are documented in docs/monitor-oracle.md.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum

from engine.core import graph as g
from engine.core.events import Trace
from engine.core.execution_ids import encoded
from engine.core.state import subflow_key

ROOT = "root:1"
MAIN = "main"


def whole(event: Trace, name: str) -> int:
    """Return a whole-number field of a trace's detail: an attempt, an iteration's number."""
    value = event.detail[name]
    assert isinstance(value, int), (event.event, name, value)
    return value


class Color(StrEnum):
    """What the monitor shows for one node."""

    PENDING = "pending"
    RUNNING = "running"
    WAITING = "waiting"
    COMPLETED = "completed"
    FAILED = "failed"
    SKIPPED = "skipped"
    CANCELLED = "cancelled"


LIVE_COLORS = frozenset({Color.RUNNING, Color.WAITING})
OWNER_TYPES = (g.ForeachNode, g.LoopNode, g.RaceNode)


class Kind(StrEnum):
    """What started an execution."""

    ROOT = "root"
    ITEM = "item"
    ITERATION = "iteration"
    FORK_BRANCH = "fork branch"
    RACE_BRANCH = "race branch"
    SUBFLOW = "subflow"


class Live(StrEnum):
    """What a live frame is doing."""

    WORKING = "working"
    SUSPENDED = "suspended"
    BLOCKED = "blocked"  # an owner: foreach, loop, race or subflow caller


@dataclass
class Execution:
    """One execution: its kind, the node path that started it, and its status."""

    eid: str
    kind: Kind
    owner: str | None
    status: Color = Color.RUNNING


@dataclass(frozen=True)
class Place:
    """Where a node path is: its graph key, the path prefix of its scope, its node."""

    graph: str
    prefix: str
    node: g.Node


@dataclass
class Replayed:
    """What the replay knows at one point of the trace (copied for checkpoints)."""

    outcomes: dict[tuple[str, str], Color] = field(default_factory=dict)
    attempts: dict[tuple[str, str], int] = field(default_factory=dict)
    live: dict[tuple[str, str], Live] = field(default_factory=dict)
    executions: dict[str, Execution] = field(default_factory=dict)
    iterations: dict[tuple[str, str], int] = field(default_factory=dict)
    writes: dict[str, set[tuple[str, int]]] = field(default_factory=dict)
    run: Color = Color.PENDING  # the run's status: running/waiting are derived
    input: object = None


def parent_of(eid: str) -> str:
    """Return the execution id one boundary up."""
    return eid.rsplit(":", 2)[0]


class Model:
    """Replays a trace into execution statuses, node outcomes and aggregate colors."""

    def __init__(self, graphs: Mapping[str, g.Graph], trace: Iterable[Trace] = ()) -> None:
        self.graphs = graphs
        self.places: dict[str, Place] = {}
        self.index(MAIN, "")
        self.bodies = {key: bodies_of(graph) for key, graph in graphs.items()}
        self.now = Replayed()
        self.checkpoints: dict[tuple[str, str, int], Replayed] = {}
        for event in trace:
            self.apply(event)

    # ------------------------------------------------------------------ structure

    def index(self, key: str, prefix: str) -> None:
        """Record every node path of a graph, and of the subflows it calls, recursively."""
        for node in self.graphs[key].nodes:
            self.places[prefix + node.id] = Place(key, prefix, node)
            if isinstance(node, g.SubflowNode) and subflow_key(node) in self.graphs:
                self.index(subflow_key(node), f"{prefix}{node.id}/")

    def segments(self, eid: str) -> list[tuple[str, Kind, str, str]]:
        """Return each segment of an id as (text up to it, kind, owner path, scope prefix)."""
        parts = eid.split(":")
        found: list[tuple[str, Kind, str, str]] = [(ROOT, Kind.ROOT, "", "")]
        key, prefix = MAIN, ""
        for index in range(2, len(parts), 2):
            name, text = parts[index], ":".join(parts[: index + 2])
            node_id = name.split(".", 1)[0]
            node = self.graphs[key].node(node_id)
            path = prefix + node_id
            if isinstance(node, g.ForkNode):
                kind = Kind.FORK_BRANCH
            elif isinstance(node, g.RaceNode):
                kind = Kind.RACE_BRANCH
            elif isinstance(node, g.ForeachNode):
                kind = Kind.ITEM
            elif isinstance(node, g.LoopNode):
                kind = Kind.ITERATION
            else:
                assert isinstance(node, g.SubflowNode), (eid, name)
                kind = Kind.SUBFLOW
                key, prefix = subflow_key(node), f"{path}/"
            found.append((text, kind, path, prefix))
        return found

    def activation(self, eid: str) -> str:
        """Return the execution whose activation a node in `eid` belongs to (fork branches
        share their parent's activation: a failure in one fails the parent)."""
        for text, kind, _, _ in reversed(self.segments(eid)):
            if kind is not Kind.FORK_BRANCH:
                return text
        raise AssertionError(eid)

    # ------------------------------------------------------------------ replay

    def apply(self, event: Trace) -> None:
        """Replay one trace event."""
        handler = getattr(self, "on_" + event.event.replace(".", "_"), None)
        if handler is not None:
            handler(event, event.node or "", event.execution_id)

    def record(
        self, path: str, eid: str, color: Color, live: Live | None, write: bool = True
    ) -> None:
        """Record a node's outcome in an execution, its frame's liveness, and a row write."""
        self.now.outcomes[(path, eid)] = color
        if live is None:
            self.now.live.pop((path, eid), None)
        else:
            self.now.live[(path, eid)] = live
        if write:
            attempt = self.now.attempts.get((path, eid), 1)
            self.now.writes.setdefault(path, set()).add((eid, attempt))

    def start(self, eid: str, kind: Kind, owner: str | None) -> None:
        """Record an execution that started."""
        self.now.executions[eid] = Execution(eid, kind, owner)

    def end(self, eid: str, status: Color) -> None:
        """End a running execution; executions still running below it are cancelled."""
        execution = self.now.executions.get(eid)
        if execution is not None and execution.status is Color.RUNNING:
            execution.status = status
        for other in self.now.executions.values():
            if other.eid.startswith(eid + ":") and other.status is Color.RUNNING:
                other.status = Color.CANCELLED

    def owner_running(self, path: str, child: str) -> None:
        """An owner (foreach, loop, race, subflow caller) started a child execution."""
        self.record(path, parent_of(child), Color.RUNNING, Live.BLOCKED)

    def on_run_started(self, event: Trace, path: str, eid: str) -> None:
        self.now.run = Color.RUNNING
        self.now.input = event.detail.get("input")
        self.start(ROOT, Kind.ROOT, None)

    def on_run_completed(self, event: Trace, path: str, eid: str) -> None:
        self.finish(Color.COMPLETED)

    def on_run_failed(self, event: Trace, path: str, eid: str) -> None:
        self.finish(Color.FAILED)

    def on_run_cancelled(self, event: Trace, path: str, eid: str) -> None:
        if "by" not in event.detail:  # the first run.cancelled asks; the second is the end
            self.finish(Color.CANCELLED)

    def finish(self, status: Color) -> None:
        """The run ended: every frame left was cancelled (traced before this)."""
        self.now.run = status
        self.end(ROOT, status)
        self.now.live.clear()

    def on_action_dispatched(self, event: Trace, path: str, eid: str) -> None:
        self.now.attempts[(path, eid)] = whole(event, "attempt")
        self.record(path, eid, Color.RUNNING, Live.WORKING)

    def on_action_failed(self, event: Trace, path: str, eid: str) -> None:
        attempt = whole(event, "attempt")
        self.checkpoints[(path, eid, attempt)] = copy.deepcopy(self.now)
        self.now.attempts[(path, eid)] = attempt
        self.record(path, eid, Color.FAILED, None)

    def on_action_retry_scheduled(self, event: Trace, path: str, eid: str) -> None:
        self.now.live[(path, eid)] = Live.SUSPENDED

    def on_action_redriven(self, event: Trace, path: str, eid: str) -> None:
        attempt = whole(event, "attempt") - 1
        self.now = copy.deepcopy(self.checkpoints[(path, eid, attempt)])

    def on_frame_retried(self, event: Trace, path: str, eid: str) -> None:
        self.now.attempts[(path, eid)] = whole(event, "attempt")
        self.record(path, eid, Color.RUNNING, Live.BLOCKED)

    def on_paused(self, event: Trace, path: str, eid: str) -> None:
        self.record(path, eid, Color.WAITING, Live.SUSPENDED)

    def on_resumed(self, event: Trace, path: str, eid: str) -> None:
        self.record(path, eid, Color.RUNNING, Live.WORKING, write=False)

    def on_fork_activated(self, event: Trace, path: str, eid: str) -> None:
        self.record(path, eid, Color.COMPLETED, None)

    def on_node_completed(self, event: Trace, path: str, eid: str) -> None:
        self.record(path, eid, Color.COMPLETED, None)
        node = self.places[path].node
        if isinstance(node, g.LoopNode):
            self.iteration_over(path, eid)
        elif isinstance(node, g.SubflowNode):
            self.end(f"{eid}:{node.id}:1", Color.COMPLETED)

    def on_node_failed(self, event: Trace, path: str, eid: str) -> None:
        self.record(path, eid, Color.FAILED, None)
        if isinstance(self.places[path].node, g.LoopNode):
            self.iteration_over(path, eid)  # a loop at its limit: the last iteration returned
        self.activation_failed(eid)

    def activation_failed(self, eid: str) -> None:
        """Fail the activation of `eid`; a failed subflow call fails its caller, untraced."""
        activation = self.activation(eid)
        for text, kind, owner, _ in reversed(self.segments(eid)):
            self.end(text, Color.FAILED)
            if text == activation:
                if kind is Kind.SUBFLOW:
                    self.record(owner, parent_of(text), Color.FAILED, None)
                    self.activation_failed(parent_of(text))
                return

    def iteration_over(self, path: str, eid: str) -> None:
        """The loop moved on: its last iteration, if still running, returned (completed)."""
        number = self.now.iterations.get((path, eid))
        if number is not None:
            self.end(f"{eid}:{self.places[path].node.id}:{number}", Color.COMPLETED)

    def on_frame_cancelled(self, event: Trace, path: str, eid: str) -> None:
        if self.now.outcomes.get((path, eid)) in LIVE_COLORS:
            self.record(path, eid, Color.CANCELLED, None, write=False)
        self.now.live.pop((path, eid), None)
        node = self.places[path].node
        if isinstance(node, (*OWNER_TYPES, g.SubflowNode)):
            for execution in self.now.executions.values():
                if execution.owner == path and parent_of(execution.eid) == eid:
                    self.end(execution.eid, Color.CANCELLED)

    def on_branch_started(self, event: Trace, path: str, eid: str) -> None:
        if isinstance(self.places[path].node, g.RaceNode):
            self.owner_running(path, eid)
            self.start(eid, Kind.RACE_BRANCH, path)
        else:
            self.start(eid, Kind.FORK_BRANCH, path)

    def on_item_started(self, event: Trace, path: str, eid: str) -> None:
        self.owner_running(path, eid)
        self.start(eid, Kind.ITEM, path)

    def on_item_finished(self, event: Trace, path: str, eid: str) -> None:
        self.item_over(path, eid, Color.COMPLETED)

    def on_item_failed(self, event: Trace, path: str, eid: str) -> None:
        self.item_over(path, eid, Color.FAILED)

    def item_over(self, path: str, eid: str, status: Color) -> None:
        """One foreach item returned or failed (under skip/collect)."""
        self.end(eid, status)

    def on_iteration_started(self, event: Trace, path: str, eid: str) -> None:
        owner = parent_of(eid)
        self.iteration_over(path, owner)
        self.owner_running(path, eid)
        self.now.iterations[(path, owner)] = whole(event, "number")
        self.start(eid, Kind.ITERATION, path)

    def on_race_won(self, event: Trace, path: str, eid: str) -> None:
        node = self.places[path].node
        winner = str(event.detail["winner"])
        for branch in node.branches:
            status = Color.COMPLETED if branch == winner else Color.CANCELLED
            self.end(f"{eid}:{node.id}.{branch}:1", status)

    def on_subflow_started(self, event: Trace, path: str, eid: str) -> None:
        self.owner_running(path, eid)
        self.start(eid, Kind.SUBFLOW, path)

    def on_gather_waiting(self, event: Trace, path: str, eid: str) -> None:
        self.fork_branch_over(eid)

    def on_path_ended(self, event: Trace, path: str, eid: str) -> None:
        self.fork_branch_over(eid)

    def fork_branch_over(self, eid: str) -> None:
        """A fork branch's frame reached its gather, or its path ended: the branch is done."""
        execution = self.now.executions.get(eid)
        if execution is not None and execution.kind is Kind.FORK_BRANCH:
            self.end(eid, Color.COMPLETED)

    # ------------------------------------------------------------------ answers

    @property
    def finished(self) -> bool:
        """Return whether the trace shows the run ended."""
        return self.now.run in (Color.COMPLETED, Color.FAILED, Color.CANCELLED)

    def execution_statuses(self) -> dict[str, Color]:
        """Return every execution's status; a live one is waiting when nothing under it works."""
        found = {}
        for eid, execution in self.now.executions.items():
            status = execution.status
            if status is Color.RUNNING:
                below = [
                    how
                    for (_, at), how in self.now.live.items()
                    if at == eid or at.startswith(eid + ":")
                ]
                if Live.WORKING not in below and Live.SUSPENDED in below:
                    status = Color.WAITING
            found[eid] = status
        return found

    def outcomes(self) -> dict[tuple[str, str], Color]:
        """Return what happened to each node in each execution it started in."""
        return dict(self.now.outcomes)

    def latest_write(self, path: str) -> str | None:
        """Return the execution id of the write the fence keeps (then attempt), if any."""
        writes = self.now.writes.get(path)
        if not writes:
            return None
        return max(writes, key=lambda write: (encoded(write[0]), write[1]))[0]

    def colors(self) -> dict[str, Color]:
        """Return the aggregate color of every node path."""
        reach = self.reachable()
        found = {}
        for path in self.places:
            eid = self.latest_write(path)
            if eid is None:
                live = not self.finished and path in reach
                found[path] = Color.PENDING if live else Color.SKIPPED
            elif not self.finished and self.older_iteration(eid):
                found[path] = Color.PENDING
            else:
                found[path] = self.now.outcomes[(path, eid)]
        return found

    def older_iteration(self, eid: str) -> bool:
        """Return whether `eid` is from an iteration older than its live loop's current one."""
        for text, kind, owner, _ in self.segments(eid):
            if kind is Kind.ITERATION:
                loop = (owner, parent_of(text))
                number = int(text.rsplit(":", 1)[1])
                if loop in self.now.live and self.now.iterations[loop] > number:
                    return True
        return False

    # ------------------------------------------------------------------ reach

    def reachable(self) -> set[str]:
        """Return every node path a live frame can still reach over forward edges."""
        seen: set[str] = set()
        todo: list[str] = []
        for (path, eid), how in self.now.live.items():
            todo.extend(self.onward(path, eid, how))
        while todo:
            path = todo.pop()
            if path in seen:
                continue
            seen.add(path)
            todo.extend(self.successors(path, entering=True))
        return seen

    def onward(self, path: str, eid: str, how: Live) -> list[str]:
        """Return where a live frame can go next (an owner: its exits, and its body while
        it can still start one)."""
        if how is not Live.BLOCKED:
            return self.successors(path, entering=False)
        place = self.places[path]
        node = place.node
        exits = [t for t in self.successors(path, entering=False) if not self.is_body(place, t)]
        if isinstance(node, (g.RaceNode, g.SubflowNode)):
            return exits  # every race branch started at once; a child scope runs by itself
        graph = self.graphs[place.graph]
        if isinstance(node, g.ForeachNode):
            # Decision (f), docs/monitor-oracle.md: while a foreach runs, its whole body is
            # still reachable in the aggregate view. Which items are left and where each
            # stands is the per-item view's to say; one row per path cannot tell it.
            more = True
            entry = graph.successor(node.id, g.Outcome.ITEM.value)
        else:
            assert isinstance(node, g.LoopNode)
            more = self.now.iterations.get((path, eid), 0) < node.max_iterations
            entry = graph.successor(node.id, g.Outcome.BODY.value)
        if more and entry is not None:
            exits.append(place.prefix + entry.target)
        return exits

    def is_body(self, place: Place, target: str) -> bool:
        """Return whether a path is in the body of the owner at `place`."""
        return target[len(place.prefix) :] in self.bodies[place.graph].get(place.node.id, set())

    def successors(self, path: str, *, entering: bool) -> list[str]:
        """Return the paths one forward edge away (a subflow node also enters its start)."""
        place = self.places[path]
        graph = self.graphs[place.graph]
        found = []
        for edge in graph.outgoing(place.node.id):
            if edge.source in self.bodies[place.graph].get(edge.target, set()):
                continue  # a back-edge: the owner is live and answers for itself
            found.append(place.prefix + edge.target)
        node = place.node
        if entering and isinstance(node, g.SubflowNode) and subflow_key(node) in self.graphs:
            child = self.graphs[subflow_key(node)]
            start = next(n.id for n in child.nodes if isinstance(n, g.StartNode))
            found.append(f"{path}/{start}")
        return found


def bodies_of(graph: g.Graph) -> dict[str, set[str]]:
    """Return the body of every foreach, loop and race: nodes reached from its entries
    without passing through the owner again."""
    found: dict[str, set[str]] = {}
    for node in graph.nodes:
        if not isinstance(node, OWNER_TYPES):
            continue
        entries = [
            e.target
            for e in graph.outgoing(node.id)
            if e.branch is not None or e.follows in (g.Outcome.ITEM.value, g.Outcome.BODY.value)
        ]
        body: set[str] = set()
        todo = list(entries)
        while todo:
            current = todo.pop()
            if current == node.id or current in body:
                continue
            body.add(current)
            todo.extend(e.target for e in graph.outgoing(current))
        found[node.id] = body
    return found
