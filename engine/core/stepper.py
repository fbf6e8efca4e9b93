"""The shared machinery of a scheduler step: emitting, moving, failing, finishing, state.

`Stepper` holds one step's work on a run. What is particular to a node type lives in
`engine/core/nodes/<type>.py` as a `NodeKind`; `engine.core.scheduler` puts them in one
table (node type -> kind) and the Stepper dispatches through it, so a node type is one
module and one row. The Stepper itself never names a node type's handlers.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from engine.core import expression_limits
from engine.core import graph as g
from engine.core.events import (
    Cancel,
    CancelTimer,
    CloseApproval,
    Command,
    Event,
    Refused,
    RowStatus,
    RunFinished,
    RunStatus,
    Start,
    Trace,
    WriteRow,
)
from engine.core.execution_ids import ExecutionId
from engine.core.expression_errors import ExpressionError, MissingFieldError
from engine.core.expressions import Bindings, compile_cel, compile_template
from engine.core.lineages import SizeExceeded, check_value
from engine.core.members import members
from engine.core.reducers import WriteRejected
from engine.core.state import MAIN, Frame, FrameState, RunState, Scope
from engine.core.values import JSON, json_size, nests_deeper_than, summary

Pick = Callable[[Sequence[int]], int]


def describe_fields(value: JSON) -> str:
    """Return `a`, `b` for an object's fields, else what the value was."""
    if isinstance(value, dict):
        return name_list(sorted(value))
    return "no object but " + ("null" if value is None else type(value).__name__)


def name_list(names: Sequence[str]) -> str:
    """Return `a`, `b`, or "no fields"."""
    return ", ".join(f"`{name}`" for name in names) if names else "no fields"


ROOT_ID = str(ExecutionId.root())
# Plain strs for the outcomes of every node and item: an enum's `value` is a property call.
NEXT, ITEM = g.Outcome.NEXT.value, g.Outcome.ITEM.value


class FlowFailure(Exception):
    """Raised inside a node handler to fail the frame's activation with a message."""


def summaries(values: dict[str, JSON]) -> dict[str, JSON]:
    """Return each value's summary, by field."""
    return {name: summary(value) for name, value in values.items()}


@dataclass(frozen=True, slots=True)
class NodeKind:
    """What the scheduler does with one node type: the hooks the Stepper calls for it.

    `execute` runs a frame standing on the node. The others are None for most types:
    `enter` takes a frame arriving by an edge (None: queue it on the node), `child_finished`
    and `child_failed` hear from an activation the node owns (by the key after `f<id>:`;
    `child_failed` returns whether the node absorbed the failure), and `scope_finished`
    takes the final view of a scope the node called.
    """

    execute: Callable[[Stepper, Frame, Any], None]
    enter: Callable[[Stepper, Frame, Any, g.Edge], None] | None = None
    child_finished: Callable[[Stepper, Frame, str, int], None] | None = None
    child_failed: Callable[[Stepper, Frame, str, str], bool] | None = None
    scope_finished: Callable[[Stepper, Frame, Any, dict[str, JSON]], None] | None = None


Deliver = Callable[["Stepper", Frame, Any, str], None]  # an event's handler: frame, event, key


class Stepper:
    """One step's work on a run: the machinery every node type shares."""

    def __init__(
        self, state: RunState, pick: Pick | None, kinds: Mapping[str, NodeKind],
        events: Mapping[type[Event], Deliver],
    ) -> None:  # fmt: skip
        self.state = state
        self.pick = pick
        self.kinds = kinds
        self.events = events
        self.commands: list[Command] = []
        self.max_steps = expression_limits.limits().max_run_steps

    # ------------------------------------------------------------------ emitting

    def row(
        self, frame: Frame, status: RowStatus, result: JSON = None, *, node: str | None = None,
        execution_id: str | None = None,
    ) -> None:  # fmt: skip
        """Write the row of the frame's node (or `node`) with the frame's execution id (or
        `execution_id`)."""
        self.commands.append(
            WriteRow(  # node, status, execution id, result, attempt (by position: see events)
                self.state.scopes[frame.scope].prefix + (node or frame.node),
                status,
                execution_id or frame.execution_id,
                result,
                frame.attempt,
            )
        )

    def trace(
        self, event: str, frame: Frame | None, node: str | None = None,
        execution: str | None = None, **detail: JSON,
    ) -> None:  # fmt: skip
        """Append a trace event for a frame (or the run), under `execution` when given."""
        if frame is None:
            execution_id, path = execution or ROOT_ID, node
        else:
            execution_id = execution or frame.execution_id
            named = node or frame.node
            path = self.state.scopes[frame.scope].prefix + named if named else node
        # event, execution id, node, at, detail (by position: see engine.core.events)
        self.commands.append(Trace(event, execution_id, path, self.state.now, detail))

    def trace_completed(self, frame: Frame, writes: dict[str, JSON] | None, **detail: JSON) -> None:
        """Trace a node's completion with the summaries of the state fields it wrote, if any."""
        if writes:
            detail["writes"] = writes
        self.trace("node.completed", frame, None, None, **detail)

    # ------------------------------------------------------------------ events

    def apply(self, event: Event) -> None:
        """Dispatch one event; refuse what the run cannot accept."""
        self.state.now = event.at
        if self.state.status.finished:
            self.refuse(event, f"the run is {self.state.status.value}")
        elif isinstance(event, Start):
            self.start(event)
        elif isinstance(event, Cancel):
            self.cancel_run(event)
        else:
            self.resume(event)

    def refuse(self, event: Event, reason: str) -> None:
        """Record that an event changed nothing."""
        self.commands.append(Refused(event=event.kind, reason=reason))

    def start(self, event: Start) -> None:
        """Open the root scope and put its start frame on the ready queue."""
        if self.state.started:
            self.refuse(event, "the run has already started")
            return
        self.state.started = True
        self.trace("run.started", None, input=event.input)
        self.open_scope(MAIN, "", event.input, None, ExecutionId.root(), {})

    def resume(self, event: Event) -> None:
        """Deliver an action result, decision or timer to the frame waiting on its key."""
        key: str = event.key  # type: ignore[attr-defined]
        frame_id = self.state.waits.get(key)
        frame = self.state.frames.get(frame_id) if frame_id is not None else None
        if frame is None:
            self.refuse(event, f"nothing waits on {key} (a duplicate or late delivery)")
            return
        try:
            self.deliver(frame, event, key)
        except FlowFailure as failure:
            self.fail(frame, str(failure))

    def deliver(self, frame: Frame, event: Event, key: str) -> None:
        """Route the event to its handler in the table of events."""
        handler = self.events.get(type(event))
        if handler is not None:
            handler(self, frame, event, key)

    def cancel_run(self, event: Cancel) -> None:
        """Cancel every frame and finish the run as cancelled."""
        self.trace("run.cancelled", None, by=event.by, reason=event.reason)
        self.cancel_activation("s1", f"run cancelled by {event.by}")
        self.finish_run(RunStatus.CANCELLED, {}, f"cancelled by {event.by}: {event.reason}")

    # ------------------------------------------------------------------ scheduling

    def drain(self) -> None:
        """Run ready frames until none is left or the run finished."""
        ready = self.state.ready
        while ready and not self.state.status.finished:
            if self.pick is None:
                frame_id = ready.popleft()
            else:
                index = self.pick(list(ready))
                frame_id = ready[index]
                del ready[index]
            frame = self.state.frames.get(frame_id)
            if frame is not None and frame.state is FrameState.READY:
                self.execute(frame)

    def settle(self) -> None:
        """Set the run's status: running while actions run, waiting while frames wait."""
        state = self.state
        if state.status.finished:
            return
        if state.ready or state.working:
            state.status = RunStatus.RUNNING
        elif state.frames:
            # No frame is ready or working: every live frame waits for a person or a timer,
            # or for children that do (counted, not scanned: a step must not cost O(frames)).
            state.status = RunStatus.WAITING
        elif state.started:
            self.finish_run(RunStatus.FAILED, {}, "no frame can advance (internal error)")

    def spawn(
        self, *, scope: int, lineage: int, node: str, execution_id: str, context: str,
        activation: str, owner: int | None, variables: dict[str, JSON],
        provenance: list[str] | None = None,
    ) -> Frame:  # fmt: skip
        """Create a live frame (not yet queued) and count it in its activation."""
        state = self.state
        # Positional: a fork or foreach makes one frame per branch or item, and keyword
        # matching of 10 fields was a measurable part of that.
        frame = Frame(state.next_frame, scope, lineage, node, execution_id, context, activation,
                      owner, variables, [] if provenance is None else provenance)  # fmt: skip
        state.next_frame += 1
        state.frames[frame.id] = frame
        state.live[frame.activation] = state.live.get(frame.activation, 0) + 1
        members(state).add(state, frame)
        return frame

    def queue(self, frame: Frame, node: str) -> None:
        """Put a frame on a node and on the ready queue."""
        frame.node = node
        frame.state = FrameState.READY
        self.state.ready.append(frame.id)

    def open_scope(
        self, graph_key: str, prefix: str, input_value: JSON, caller: int | None,
        execution_id: ExecutionId, variables: dict[str, JSON],
    ) -> None:  # fmt: skip
        """Start a scope (the run or a subflow call) at its start node."""
        state = self.state
        graph = state.graphs[graph_key]
        fields = {f.name: f.reducer.value for f in graph.state or ()}
        base = {f.name: f.initial for f in graph.state or ()}
        scope_id = state.next_scope
        state.next_scope += 1
        root = state.lineages.new_root(scope_id, fields, base)
        activation = f"s{scope_id}"
        scope = Scope(scope_id, graph_key, prefix, input_value, caller, root.id, activation)
        state.scopes[scope_id] = scope
        start = next(node.id for node in graph.nodes if node.type is g.NodeType.START)
        frame = self.spawn(
            scope=scope_id, lineage=root.id, node=start, execution_id=str(execution_id),
            context=str(execution_id), activation=activation, owner=None, variables=variables,
        )  # fmt: skip
        self.queue(frame, start)

    def retire(self, frame: Frame) -> bool:
        """Remove a finished frame; return whether it was its activation's last."""
        state = self.state
        state.frames.pop(frame.id, None)
        members(state).remove(frame)
        for key in frame.wait.get("keys", ()):
            state.waits.pop(key, None)
        remaining = state.live.get(frame.activation, 1) - 1
        if remaining > 0:
            state.live[frame.activation] = remaining
            return False
        state.live.pop(frame.activation, None)
        return True

    # ------------------------------------------------------------------ moving

    def execute(self, frame: Frame) -> None:
        """Run the node the frame stands on, within the run's step budget."""
        state = self.state
        state.steps += 1
        if state.steps > self.max_steps:
            self.finish_run(
                RunStatus.FAILED, {}, f"the run executed {self.max_steps:,} nodes, its budget "
                f"(BRAID_RUN_MAX_STEPS); node `{state.path(frame)}` was next",
            )  # fmt: skip
            return
        node = state.node_of(frame)
        try:
            self.kinds[node.type].execute(self, frame, node)
        except FlowFailure as failure:
            self.row(frame, RowStatus.FAILED, summary(str(failure)))
            self.fail(frame, str(failure))

    def follow(self, frame: Frame, outcome: str) -> None:
        """Continue a frame along the edge of an outcome, or end its path."""
        edge = topology(self.state.graph_of(frame)).successor(frame.node, outcome)
        if edge is None:
            self.dead_end(frame, outcome)
        else:
            self.move(frame, edge)

    def move(self, frame: Frame, edge: g.Edge) -> None:
        """Take one edge: into a node, into a gather slot, or back to the frame's owner."""
        owner = self.state.frames.get(frame.owner) if frame.owner is not None else None
        if owner is not None and owner.node == edge.target and owner.scope == frame.scope:
            self.returned(owner, frame)
            return
        target = self.state.graph_of(frame).node(edge.target)
        enter = self.kinds[target.type].enter
        if enter is None:
            self.queue(frame, edge.target)
        else:
            enter(self, frame, target, edge)

    def dead_end(self, frame: Frame, outcome: str) -> None:
        """A path ends without an edge: the activation closes if this was its last frame."""
        self.trace("path.ended", frame, outcome=outcome)
        lineage = frame.lineage
        if self.retire(frame):
            self.activation_closed(frame, lineage)

    def activation_closed(self, last: Frame, lineage: int) -> None:
        """An activation has no live frame left after a path ended in it."""
        activation = last.activation
        stuck = [
            t
            for b in self.state.gathers.values()
            for t in b.pending()
            if t.activation == activation
        ]
        if stuck:
            self.fail_activation(
                activation, f"a gather can never fire: {len(stuck)} token(s) wait forever"
            )
        elif activation.startswith("s"):
            self.scope_finished(self.state.scopes[last.scope], lineage)
        else:
            owner = self.state.frames[int(activation[1:].split(":", 1)[0])]
            self.child_finished(owner, activation, lineage)

    # ------------------------------------------------------------------ failure

    def fail(self, frame: Frame, message: str) -> None:
        """Fail the frame's activation: the nearest foreach item that tolerates it, or up."""
        self.trace("node.failed", frame, error=message)
        self.retire(frame)
        self.state.lineages.abandon([frame.lineage])
        self.fail_activation(frame.activation, message)

    def fail_activation(self, activation: str, message: str) -> None:
        """Cancel an activation's frames and pass the failure to whoever owns it."""
        while True:
            self.cancel_activation(activation, message)
            if activation.startswith("s"):
                scope = self.state.scopes[int(activation[1:])]
                if scope.caller is None:
                    self.finish_run(RunStatus.FAILED, {}, message)
                    return
                caller = self.state.frames[scope.caller]
                self.row(caller, RowStatus.FAILED, summary(message))
                self.trace("node.failed", caller, error=message)  # as its row says
                activation = caller.activation
                continue
            owner_id, key = activation[1:].split(":", 1)
            owner = self.state.frames[int(owner_id)]
            kind = self.kinds.get(owner.barrier.get("kind", ""))
            tolerates = None if kind is None else kind.child_failed
            if tolerates is not None and tolerates(self, owner, key, message):
                return  # a foreach under `skip` or `collect` goes on without the item
            self.row(owner, RowStatus.FAILED, summary(message))
            self.trace("node.failed", owner, error=message)
            activation = owner.activation

    def cancel_activation(self, activation: str, reason: str, keep: int | None = None) -> None:
        """Cancel every frame in the activation and below; drop their parked tokens.

        The frames are found through the activation index, so closing one foreach item
        costs what the item holds, not what the run holds.
        """
        state = self.state
        index = members(state)
        if keep is not None and not index.owned.get(keep):
            group = index.frames.get(activation)
            if group is not None and len(group) == 1 and keep in group:
                # A foreach item or loop round coming back alone (the common return): no
                # frame to cancel and nothing nested, only its parked tokens to drop.
                self.drop_parked({activation})
                if state.live.get(activation) != 1:
                    state.live[activation] = 1
                return
        doomed, victims = index.below(activation)
        for frame in victims:
            if frame.id != keep:
                self.cancel_frame(frame, reason)
        self.drop_parked(doomed)
        for name in doomed:
            state.live.pop(name, None)
        if keep is not None and keep in state.frames:
            state.live[state.frames[keep].activation] = 1

    def drop_parked(self, activations: set[str]) -> None:
        """Drop the tokens the activations parked at gathers, and abandon their lineages."""
        state = self.state
        if not state.gathers:
            return
        for barrier in state.gathers.values():
            dropped = barrier.discard(activations)
            state.lineages.abandon(token.lineage for token in dropped)

    def cancel_frame(self, frame: Frame, reason: str) -> None:
        """Cancel one frame: close its waits, abandon its lineage, refuse its later results."""
        state = self.state
        state.frames.pop(frame.id, None)
        members(state).remove(frame)
        for key in frame.wait.get("keys", []):
            state.waits.pop(key, None)
            if key.endswith("|approval"):
                self.commands.append(CloseApproval(key=key, reason=reason))
            elif frame.wait.get("timer") == key:
                self.commands.append(CancelTimer(key=key))
        if frame.wait.get("action"):
            state.working -= 1
        if frame.state is not FrameState.BLOCKED:
            state.lineages.abandon([frame.lineage])
        if frame.state is not FrameState.READY:
            self.trace("frame.cancelled", frame, reason=reason)

    # ------------------------------------------------------------------ finishing

    def scope_finished(self, scope: Scope, lineage: int) -> None:
        """A scope reached its end: the run completes, or its caller's node takes the view."""
        view = dict(self.state.lineages.view(lineage))
        if scope.caller is None:
            self.finish_run(RunStatus.COMPLETED, view, None)
            return
        caller = self.state.frames[scope.caller]
        node = self.state.node_of(caller)
        returned = self.kinds[node.type].scope_finished
        assert returned is not None, f"a {node.type.value} node calls no scope"
        returned(self, caller, node, view)

    def finish_run(self, status: RunStatus, result: dict[str, JSON], error: str | None) -> None:
        """End the run and say so."""
        state = self.state
        for frame in list(state.frames.values()):
            self.cancel_frame(frame, f"the run {status.value}")
        state.live.clear()
        state.ready.clear()
        state.status = status
        state.result = result if status is RunStatus.COMPLETED else None
        state.error = error
        self.trace(f"run.{status.value}", None, error=error)
        self.commands.append(RunFinished(status=status, state=result, error=error))

    # ------------------------------------------------------------------ state

    def bindings(self, frame: Frame) -> Bindings:
        """Return what the frame's expressions see."""
        scope = self.state.scopes[frame.scope]
        view = self.state.lineages.view(frame.lineage)
        return Bindings(state=view, input=scope.input, variables=frame.variables)

    def explain(self, frame: Frame, what: str, error: ExpressionError) -> str:
        """Return the failure message of an expression: the node, the field and the expression.

        A missing field also says what was there; any other error says what failed.
        """
        if not isinstance(error, MissingFieldError):
            return f"node `{frame.node}` {what}: `{error.source}` failed: {error.message}"
        message = f"node `{frame.node}` {what}: `{error.source}` reads `{error.path}`, "
        if error.held is None:
            message += f"but `{error.holder}` is null"
        else:
            message += "which is missing"
            if error.holder != "input":
                message += f"; `{error.holder}` held {name_list(error.held)}"
        if error.holder == "input" and error.held is None:
            return message  # "`input` is null" already says what the input held
        return message + f"; the input held {describe_fields(self.bindings(frame).input)}"

    def evaluate(self, frame: Frame, source: str, what: str) -> JSON:
        """Evaluate a CEL expression for the frame; an error fails the node."""
        try:
            return compile_cel(source).evaluate(self.bindings(frame))
        except ExpressionError as error:
            raise FlowFailure(self.explain(frame, what, error)) from error

    def evaluate_bool(self, frame: Frame, source: str, what: str) -> bool:
        """Evaluate a boolean CEL expression for the frame."""
        try:
            return compile_cel(source).evaluate_bool(self.bindings(frame))
        except ExpressionError as error:
            raise FlowFailure(self.explain(frame, what, error)) from error

    def render(self, frame: Frame, text: str | None, what: str) -> str:
        """Render `${CEL}` interpolation in a text."""
        if not text:
            return ""
        try:
            return compile_template(text).render(self.bindings(frame))
        except ExpressionError as error:
            raise FlowFailure(self.explain(frame, what, error)) from error

    def write(self, frame: Frame, name: str, value: JSON) -> None:
        """Write a state field in the frame's lineage through its reducer."""
        limit = expression_limits.limits().max_value_depth
        if nests_deeper_than(value, limit):
            raise FlowFailure(
                f"cannot write state field {name!r}: the value nests deeper than {limit} "
                "levels (BRAID_VALUE_MAX_DEPTH)"
            )
        try:
            self.state.lineages.write(frame.lineage, name, value)
        except (WriteRejected, KeyError) as error:
            raise FlowFailure(f"cannot write state field {name!r}: {error}") from error
        except SizeExceeded as error:
            raise FlowFailure(f"node `{frame.node}` cannot write: {error}") from error

    def bounded(self, frame: Frame, value: JSON, what: str) -> JSON:
        """Return a value the node stores or sends; fail the node past BRAID_VALUE_MAX_BYTES."""
        try:
            check_value(json_size(value), what)
        except SizeExceeded as error:
            raise FlowFailure(f"node `{frame.node}`: {error}") from error
        return value

    # ------------------------------------------------------------------ continuing

    def complete(
        self, frame: Frame, outcome: str, result: JSON = None, writes: dict[str, JSON] | None = None
    ) -> None:
        """Write the node's completed row and trace, then follow the outcome.

        `writes` are summaries of the state fields the node wrote: the trace keeps them, so
        the monitor can show the writes that reach a node (engine/core/history.py).
        """
        self.row(frame, RowStatus.COMPLETED, result)
        if isinstance(result, dict) and isinstance(
            self.state.node_of(frame), g.ForeachNode | g.LoopNode
        ):
            # What a foreach or loop did (items, rounds): the monitor's reason reads it.
            self.trace_completed(frame, writes, outcome=outcome, result=result)
        else:
            self.trace_completed(frame, writes, outcome=outcome)
        self.follow(frame, outcome)

    # ------------------------------------------------------------------ owned children

    def own(self, owner: Frame, key: str, node: str, eid: str, context: str,
            variables: dict[str, JSON], edge: g.Edge) -> Frame:  # fmt: skip
        """Start a child frame of a foreach item, loop iteration or race branch."""
        lineage = self.state.lineages.child(owner.lineage)
        child = self.spawn(
            scope=owner.scope, lineage=lineage.id, node=node, execution_id=eid,
            context=context, activation=f"f{owner.id}:{key}", owner=owner.id,
            variables=variables, provenance=[eid],
        )  # fmt: skip
        self.move(child, edge)
        return child

    def returned(self, owner: Frame, child: Frame) -> None:
        """A child came back by the back-edge: close its activation and tell the owner."""
        activation, lineage = child.activation, child.lineage
        self.cancel_activation(activation, "its activation returned", keep=child.id)
        self.retire(child)
        self.child_finished(owner, activation, lineage)

    def child_finished(self, owner: Frame, activation: str, lineage: int) -> None:
        """Route a finished child to its owner's node type (foreach, loop or race)."""
        finished = self.kinds[owner.barrier["kind"]].child_finished
        assert finished is not None, f"a {owner.barrier['kind']} barrier owns no children"
        finished(self, owner, activation.split(":", 1)[1], lineage)

    # ------------------------------------------------------------------ waits

    def wait_key(self, frame: Frame, suffix: str, path: str | None = None) -> str:
        """Return the key of something the frame waits for: run, node, execution, suffix.

        For actions the suffix is the attempt, which makes the key the idempotency key.
        `path` is the frame's node path, when the caller has it already.
        """
        path = self.state.path(frame) if path is None else path
        return f"{self.state.run_id}|{path}|{frame.execution_id}|{suffix}"

    def clear_wait(self, frame: Frame) -> None:
        """Forget every key the frame waited on; cancel its timeout timer."""
        for key in frame.wait.get("keys", []):
            self.state.waits.pop(key, None)
        timer = frame.wait.get("timer")
        if frame.wait.get("action"):
            self.state.working -= 1
            if timer:
                self.commands.append(CancelTimer(key=timer))
        frame.wait = {}


class Topology:
    """Constant-time edge lookups for one graph (a 10,000-branch fork must stay linear)."""

    def __init__(self, graph: g.Graph) -> None:
        self.successors: dict[tuple[str, str], g.Edge] = {}
        self.branches: dict[tuple[str, str], g.Edge] = {}
        for edge in graph.edges:
            if edge.branch is not None:
                self.branches.setdefault((edge.source, edge.branch), edge)
            elif edge.follows is not None:
                self.successors.setdefault((edge.source, edge.follows), edge)

    def successor(self, node: str, outcome: str) -> g.Edge | None:
        """Return the edge an outcome continues on, if it is wired."""
        return self.successors.get((node, outcome))


def topology(graph: g.Graph) -> Topology:
    """Return the topology of a graph, built once and kept on the (frozen) graph."""
    cached = graph.__dict__.get("_topology")
    if cached is None:
        cached = Topology(graph)
        object.__setattr__(graph, "_topology", cached)
    return cached
