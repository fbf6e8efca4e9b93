"""The token scheduler: `step(state, event) -> (state, commands)`, pure and deterministic.

A step applies one event, then runs every ready frame until none is left: pure nodes
execute at once, tasks leave as RunAction commands, approvals and waits suspend their
own frame only. A flow's failure is a value (a failed run and a RunFinished command);
nothing a flow does makes `step` raise. See docs/engine.md for the model.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Sequence
from typing import Any

from engine.core import expression_limits, seats
from engine.core import graph as g
from engine.core.events import (
    ActionCompleted,
    ActionFailed,
    ApprovalDecided,
    Cancel,
    CancelTimer,
    CloseApproval,
    Command,
    Decision,
    Event,
    Redrive,
    Refused,
    RequestApproval,
    RowStatus,
    RunAction,
    RunFinished,
    RunStatus,
    SetTimer,
    Start,
    TimerFired,
    Trace,
    WriteRow,
)
from engine.core.execution_ids import (
    ExecutionId,
    branch_text,
    common_prefix_text,
    iteration_text,
)
from engine.core.expression_errors import ExpressionError, MissingFieldError
from engine.core.expressions import Bindings, compile_cel, compile_template
from engine.core.gathers import DuplicateSlot, Token
from engine.core.inputs import InputRejected, check_input, json_type
from engine.core.lineages import LineageError, SizeExceeded, check_value
from engine.core.members import members
from engine.core.reducers import MergeConflict, WriteRejected
from engine.core.state import MAIN, Frame, FrameState, RunState, Scope, subflow_key
from engine.core.timestamps import format_timestamp, shift_time
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
HANDLERS = {kind: f"on_{kind.value}" for kind in g.NodeType}  # the Stepper method per node type
# Plain strs for the outcomes of every node and item: an enum's `value` is a property call.
NEXT, ITEM = g.Outcome.NEXT.value, g.Outcome.ITEM.value


class FlowFailure(Exception):
    """Raised inside a node handler to fail the frame's activation with a message."""


def step(state: RunState, event: Event, pick: Pick | None = None) -> tuple[RunState, list[Command]]:
    """Apply one event and run until nothing is ready; return the state and the commands.

    The state is updated in place and returned. `pick` chooses which ready frame runs
    next (an index into the queue); the default is first-in, first-out.
    """
    stepper = Stepper(state, pick)
    stepper.apply(event)
    stepper.drain()
    stepper.settle()
    return state, stepper.commands


def abort(state: RunState, at: str, reason: str) -> tuple[RunState, list[Command]]:
    """Fail a run that cannot go on (an adapter caught an internal error), closing it down.

    Every frame is cancelled as when a flow fails: waits close, timers are cancelled and
    the run ends `failed` with the reason. A finished run is left as it is.
    """
    stepper = Stepper(state, None)
    state.now = at
    if not state.status.finished:
        stepper.finish_run(RunStatus.FAILED, {}, reason)
    return state, stepper.commands


def summaries(values: dict[str, JSON]) -> dict[str, JSON]:
    """Return each value's summary, by field."""
    return {name: summary(value) for name, value in values.items()}


def jitter(key: str) -> float:
    """Return a factor in [0.5, 1.0) derived from the key: deterministic, yet spread out."""
    return 0.5 + (zlib.crc32(key.encode()) % 1000) / 2000


class Stepper:
    """One step's work on a run: the handlers of every node type and event."""

    def __init__(self, state: RunState, pick: Pick | None) -> None:
        self.state = state
        self.pick = pick
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
        """Route the event to its handler."""
        if isinstance(event, ActionCompleted):
            self.action_completed(frame, event)
        elif isinstance(event, ActionFailed):
            self.action_failed(frame, event.error)
        elif isinstance(event, ApprovalDecided):
            self.approval_decided(frame, event)
        elif isinstance(event, TimerFired):
            self.timer_fired(frame, key)
        elif isinstance(event, Redrive):
            self.redrive(frame, event)

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
        handler = getattr(self, HANDLERS[node.type])
        try:
            handler(frame, node)
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
        if isinstance(target, g.GatherNode):
            self.arrive(frame, target, edge.slot or "")
        else:
            self.queue(frame, edge.target)

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
            if owner.barrier.get("kind") == "foreach" and owner.barrier["policy"] != "fail":
                self.item_failed(owner, int(key), message)
                return
            self.row(owner, RowStatus.FAILED, summary(message))
            self.trace("node.failed", owner, error=message)
            activation = owner.activation

    def cancel_activation(self, activation: str, reason: str, keep: int | None = None) -> None:
        """Cancel every frame in the activation and below; drop their parked tokens.

        The frames are found through the activation index, so closing one foreach item
        costs what the item holds, not what the run holds.
        """
        state = self.state
        doomed, victims = members(state).below(activation)
        for frame in victims:
            if frame.id != keep:
                self.cancel_frame(frame, reason)
        for barrier in state.gathers.values():
            dropped = barrier.discard(doomed)
            state.lineages.abandon(token.lineage for token in dropped)
        for name in doomed:
            state.live.pop(name, None)
        if keep is not None and keep in state.frames:
            state.live[state.frames[keep].activation] = 1

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
        """A scope reached its end: the run completes, or the subflow returns."""
        view = dict(self.state.lineages.view(lineage))
        if scope.caller is None:
            self.finish_run(RunStatus.COMPLETED, view, None)
            return
        caller = self.state.frames[scope.caller]
        node = self.state.node_of(caller)
        assert isinstance(node, g.SubflowNode)
        try:
            for mapping in node.output or ():
                self.write(caller, mapping.parent_field, view.get(mapping.child_field))
        except FlowFailure as failure:
            self.row(caller, RowStatus.FAILED, summary(str(failure)))
            self.fail(caller, str(failure))
            return
        returned = {m.parent_field: view.get(m.child_field) for m in node.output or ()}
        self.row(caller, RowStatus.COMPLETED, summary(returned))
        self.trace_completed(caller, summaries(returned))
        caller.state = FrameState.READY
        self.follow(caller, NEXT)

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

    def bounded_text(self, frame: Frame, value: JSON, what: str) -> None:
        """Fail the node when an approval's text or shown values are over their limit."""
        limit = expression_limits.limits().max_approval_text_bytes
        size = json_size(value)
        if size > limit:
            raise FlowFailure(
                f"node `{frame.node}`: {what} is {size:,} bytes of JSON; the limit is "
                f"{limit:,} (BRAID_APPROVAL_TEXT_MAX_BYTES)"
            )

    # ------------------------------------------------------------------ plain nodes

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

    def on_start(self, frame: Frame, node: g.StartNode) -> None:
        self.complete(frame, NEXT)

    def on_end(self, frame: Frame, node: g.EndNode) -> None:
        self.row(frame, RowStatus.COMPLETED)
        self.trace("node.completed", frame)
        scope = self.state.scopes[frame.scope]
        self.cancel_activation(scope.activation, "the scope ended", keep=frame.id)
        lineage = frame.lineage
        self.retire(frame)
        self.scope_finished(scope, lineage)

    def on_set(self, frame: Frame, node: g.SetNode) -> None:
        # Every value sees the state as the node found it; the writes apply together after,
        # so JSON member order (which carries no meaning) cannot change the result.
        written = {
            assignment.field: self.evaluate(
                frame, assignment.expression, f"values.{assignment.field}"
            )
            for assignment in node.values
        }
        for name, value in written.items():
            self.write(frame, name, value)
        self.complete(frame, NEXT, summary(written), summaries(written))

    def on_if(self, frame: Frame, node: g.IfNode) -> None:
        taken = self.evaluate_bool(frame, node.condition, "condition")
        outcome = g.Outcome.TRUE.value if taken else g.Outcome.FALSE.value
        self.complete(frame, outcome, outcome)

    def on_switch(self, frame: Frame, node: g.SwitchNode) -> None:
        outcome = node.default
        for index, case in enumerate(node.cases):
            if self.evaluate_bool(frame, case.when, f"cases[{index}].when"):
                outcome = case.outcome
                break
        self.complete(frame, outcome, outcome)

    def on_fail(self, frame: Frame, node: g.FailNode) -> None:
        raise FlowFailure(node.error)

    # ------------------------------------------------------------------ fork / gather

    def on_fork(self, frame: Frame, node: g.ForkNode) -> None:
        self.row(frame, RowStatus.COMPLETED, list(node.branch_names))
        self.trace("fork.activated", frame, branches=list(node.branch_names))
        children = []
        for branch in node.branch_names:
            lineage = self.state.lineages.child(frame.lineage)
            eid = branch_text(frame.execution_id, node.id, branch)
            child = self.spawn(
                scope=frame.scope, lineage=lineage.id, node=node.id, execution_id=eid,
                context=frame.context, activation=frame.activation, owner=frame.owner,
                variables=frame.variables, provenance=[eid],
            )  # fmt: skip
            children.append((child, branch))
        self.retire(frame)
        edges = topology(self.state.graph_of(frame)).branches
        for child, branch in children:
            self.trace("branch.started", child, node=node.id, branch=branch)
            self.move(child, edges[(node.id, branch)])

    def arrive(self, frame: Frame, gather: g.GatherNode, slot: str) -> None:
        """Park the frame's token in its slot; fire the gather when every slot is filled."""
        barrier = self.state.gather(
            frame.scope, self.state.graph_of(frame), gather.id, gather.slots
        )
        token = Token(frame.lineage, frame.execution_id, frame.context, frame.activation,
                      tuple(frame.provenance or [frame.execution_id]))  # fmt: skip
        try:
            barrier.update(slot, token)
        except DuplicateSlot as duplicate:
            self.trace("gather.duplicate", frame, node=gather.id, slot=slot)
            self.fail(frame, f"gather {gather.id}: {duplicate}")
            return
        # Which slots are filled is read off the gather.waiting events of one context; a
        # "filled so far" list would record the interleaving, which must not reach the trace.
        self.trace("gather.waiting", frame, node=gather.id, slot=slot, context=frame.context)
        if not barrier.is_ready(frame.context):
            self.retire(frame)
            return
        self.fire(frame, gather, barrier.consume(frame.context))

    def fire(self, frame: Frame, gather: g.GatherNode, tokens: list[Token]) -> None:
        """Merge the tokens' lineages in declared-slot order into one continuation."""
        eid = common_prefix_text([t.execution_id for t in tokens])
        lineages = self.state.lineages
        try:
            base = lineages.merge_base([t.lineage for t in tokens])
            merged = lineages.merge([t.lineage for t in tokens], base)
        except (MergeConflict, LineageError, SizeExceeded) as conflict:
            self.row(
                frame,
                RowStatus.FAILED,
                summary(str(conflict)),
                node=gather.id,
                execution_id=eid,
            )
            self.fail(frame, f"gather {gather.id}: {conflict}")
            return
        lineages.abandon(t.lineage for t in tokens)
        lineages.release(t.lineage for t in tokens)
        provenance = [p for t in tokens for p in t.provenance]
        inputs = [[slot, t.execution_id] for slot, t in zip(gather.slots, tokens, strict=True)]
        order: JSON = list(gather.slots)
        self.trace("gather.merged", frame, gather.id, eid, inputs=inputs, order=order)  # type: ignore[arg-type]
        frame.lineage, frame.execution_id, frame.provenance = merged.id, eid, provenance
        frame.node = gather.id
        self.complete(frame, NEXT, summary([t.execution_id for t in tokens]))

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
        """Route a finished child to its owner's barrier."""
        key = activation.split(":", 1)[1]
        kind = owner.barrier["kind"]
        if kind == "foreach":
            self.item_finished(owner, int(key), lineage)
        elif kind == "loop":
            self.iteration_finished(owner, lineage)
        else:
            self.race_won(owner, key, lineage)

    # ------------------------------------------------------------------ foreach

    def on_foreach(self, frame: Frame, node: g.ForeachNode) -> None:
        items = self.evaluate(frame, node.items, "items")
        if not isinstance(items, list):
            raise FlowFailure(
                f"node `{frame.node}` items: `{node.items}` gave {json_type(items)}, not a list"
            )
        limit = expression_limits.limits().max_foreach_items
        if len(items) > limit:
            raise FlowFailure(
                f"items: {len(items):,} items; a foreach takes at most {limit:,} "
                "(BRAID_FOREACH_MAX_ITEMS)"
            )
        self.bounded(frame, items, "items")  # the barrier keeps them in the snapshot
        frame.state = FrameState.BLOCKED
        frame.barrier = {"kind": "foreach", "items": items, "admitted": 0, "running": 0,
                         "done": {}, "failed": {}, "policy": node.failure_policy.value}  # fmt: skip
        self.row(frame, RowStatus.RUNNING, {"items": len(items)})
        self.admit(frame, node)

    def admit(self, frame: Frame, node: g.ForeachNode) -> None:
        """Start items while fewer than `concurrency` run; finish when all are done."""
        barrier = frame.barrier
        items = barrier["items"]
        edge = topology(self.state.graph_of(frame)).successor(node.id, ITEM)
        while barrier["running"] < node.max_concurrency and barrier["admitted"] < len(items):
            barrier["admitted"] += 1
            barrier["running"] += 1
            number = barrier["admitted"]
            eid = iteration_text(frame.execution_id, node.id, number)
            variables = {**frame.variables, node.variable: items[number - 1]}
            if edge is None:
                self.item_finished(frame, number, self.state.lineages.child(frame.lineage).id)
                continue
            self.trace("item.started", frame, node=node.id, index=number - 1, execution=eid)
            self.own(frame, str(number), node.id, eid, eid, variables, edge)
            if frame.id not in self.state.frames:
                return
        if barrier["running"] == 0 and barrier["admitted"] == len(items):
            self.foreach_done(frame, node)

    def item_finished(self, frame: Frame, number: int, lineage: int) -> None:
        """One item returned; admit the next."""
        frame.barrier["running"] -= 1
        frame.barrier["done"][str(number)] = lineage
        item = iteration_text(frame.execution_id, frame.node, number)
        self.trace("item.finished", frame, execution=item, index=number - 1)
        self.admit(frame, self.state.node_of(frame))  # type: ignore[arg-type]

    def item_failed(self, frame: Frame, number: int, message: str) -> None:
        """One item failed under `skip` or `collect`: drop its writes and go on."""
        frame.barrier["running"] -= 1
        frame.barrier["failed"][str(number)] = message
        item = iteration_text(frame.execution_id, frame.node, number)
        self.trace("item.failed", frame, execution=item, index=number - 1, error=message)
        frame.state = FrameState.BLOCKED
        self.admit(frame, self.state.node_of(frame))  # type: ignore[arg-type]

    def foreach_done(self, frame: Frame, node: g.ForeachNode) -> None:
        """Merge the items' writes in item order, record failures, and continue `done`."""
        barrier = frame.barrier
        done = [barrier["done"][k] for k in sorted(barrier["done"], key=int)]
        lineages = self.state.lineages
        try:
            merged = lineages.merge(done, frame.lineage) if done else lineages.child(frame.lineage)
        except (MergeConflict, SizeExceeded) as conflict:
            why = "items conflict" if isinstance(conflict, MergeConflict) else "merging the items"
            message = f"foreach {node.id}: {why}: {conflict}"
            self.row(frame, RowStatus.FAILED, summary(message))
            self.fail(frame, message)
            return
        lineages.abandon(done)
        lineages.release(done)
        frame.lineage = merged.id
        failed = sorted(barrier["failed"], key=int)
        errors: dict[str, JSON] = {}
        if node.errors and barrier["policy"] == "collect" and failed:
            records: JSON = [{"index": int(k) - 1, "item": barrier["items"][int(k) - 1],
                              "error": barrier["failed"][k]} for k in failed]  # fmt: skip
            self.write(frame, node.errors, records)
            errors[node.errors] = summary(records)
        result: JSON = {"items": len(barrier["items"]), "failed": len(failed)}
        frame.barrier = {}
        frame.state = FrameState.READY
        self.complete(frame, g.Outcome.DONE.value, result, errors)

    # ------------------------------------------------------------------ loop

    def on_loop(self, frame: Frame, node: g.LoopNode) -> None:
        if frame.barrier.get("kind") != "loop":
            frame.barrier = {"kind": "loop", "iteration": 0}
        self.next_iteration(frame, node)

    def next_iteration(self, frame: Frame, node: g.LoopNode) -> None:
        """Run the body again while the condition holds and iterations remain."""
        number = frame.barrier["iteration"]
        variables = dict(frame.variables)
        if node.variable:
            # `as` is the 1-based number of the iteration about to run (in `while`, too).
            variables[node.variable] = number + 1
        frame.variables = variables
        go_on = self.evaluate_bool(frame, node.condition, "while")
        edges = topology(self.state.graph_of(frame))
        edge = edges.successor(node.id, g.Outcome.BODY.value)
        if not go_on or edge is None:
            frame.barrier = {}
            frame.state = FrameState.READY
            self.complete(frame, g.Outcome.DONE.value, {"iterations": number})
            return
        ceiling = expression_limits.limits().max_loop_iterations
        if ceiling <= number < node.max_iterations:
            frame.barrier = {}
            raise FlowFailure(
                f"loop {node.id} reached {ceiling:,} iterations, the most any loop may run "
                "(BRAID_LOOP_MAX_ITERATIONS)"
            )
        if number >= node.max_iterations:
            # The condition still holds but no iteration remains: never leave by `done`.
            frame.barrier = {}
            if edges.successor(node.id, g.Outcome.EXHAUSTED.value) is None:
                raise FlowFailure(
                    f"loop {node.id} reached max_iterations ({node.max_iterations}) while its "
                    f"condition `{node.condition}` still held, and has no `exhausted` edge"
                )
            frame.state = FrameState.READY
            result: JSON = {"iterations": number, "outcome": g.Outcome.EXHAUSTED.value}
            self.complete(frame, g.Outcome.EXHAUSTED.value, result)
            return
        frame.barrier["iteration"] = number + 1
        frame.state = FrameState.BLOCKED
        # The loop's row names the live iteration, so the monitor can tell older rows apart.
        self.row(frame, RowStatus.RUNNING, {"iteration": number + 1})
        eid = iteration_text(frame.execution_id, node.id, number + 1)
        self.trace("iteration.started", frame, number=number + 1, execution=eid)
        self.own(frame, str(number + 1), node.id, eid, str(eid), variables, edge)

    def iteration_finished(self, frame: Frame, lineage: int) -> None:
        """An iteration returned: fold its writes into the loop's lineage and go again."""
        try:
            merged = self.state.lineages.merge([lineage], frame.lineage)
        except SizeExceeded as error:
            message = f"loop {frame.node}: merging iteration {frame.barrier['iteration']}: {error}"
            self.row(frame, RowStatus.FAILED, summary(message))
            self.fail(frame, message)
            return
        self.state.lineages.abandon([lineage])
        self.state.lineages.release([lineage])
        frame.lineage = merged.id
        try:
            self.next_iteration(frame, self.state.node_of(frame))  # type: ignore[arg-type]
        except FlowFailure as failure:
            self.row(frame, RowStatus.FAILED, summary(str(failure)))
            self.fail(frame, str(failure))

    # ------------------------------------------------------------------ race

    def on_race(self, frame: Frame, node: g.RaceNode) -> None:
        frame.state = FrameState.BLOCKED
        frame.barrier = {"kind": "race"}
        self.row(frame, RowStatus.RUNNING)
        edges = topology(self.state.graph_of(frame)).branches
        for branch in node.branch_names:
            eid = branch_text(frame.execution_id, node.id, branch)
            self.trace("branch.started", frame, branch=branch, execution=eid)
            self.own(
                frame,
                branch,
                node.id,
                eid,
                frame.context,
                frame.variables,
                edges[(node.id, branch)],
            )
            if frame.id not in self.state.frames or not frame.barrier:
                return

    def race_won(self, frame: Frame, branch: str, lineage: int) -> None:
        """The first branch back wins; the others are cancelled and never merged."""
        node = self.state.node_of(frame)
        for other in node.branches:
            if other != branch:
                self.cancel_activation(f"f{frame.id}:{other}", f"race {node.id} won by {branch}")
        frame.lineage = lineage
        frame.barrier = {}
        frame.state = FrameState.READY
        self.trace("race.won", frame, winner=branch)
        has_edge = topology(self.state.graph_of(frame)).successor(node.id, branch) is not None
        self.complete(frame, branch if has_edge else NEXT, branch)

    # ------------------------------------------------------------------ subflow

    def on_subflow(self, frame: Frame, node: g.SubflowNode) -> None:
        key = subflow_key(node)
        if key not in self.state.graphs:
            raise FlowFailure(f"subflow {key} is not available to this run")
        deepest = expression_limits.limits().max_subflow_depth
        if self.subflow_depth(frame) >= deepest:
            raise FlowFailure(
                f"subflow {key} would nest {deepest + 1} calls deep; the limit is {deepest} "
                "(BRAID_SUBFLOW_MAX_DEPTH)"
            )
        child_input = {
            a.field: self.evaluate(frame, a.expression, f"input.{a.field}")
            for a in node.input or ()
        }
        self.bounded(frame, child_input, "the subflow's input")
        try:
            check_input(self.state.graphs[key].input, child_input)
        except InputRejected as rejected:
            raise FlowFailure(f"subflow {key}: {rejected}") from rejected
        frame.state = FrameState.BLOCKED
        frame.barrier = {"kind": "subflow"}
        self.row(frame, RowStatus.RUNNING)
        eid = self.state.execution_id(frame).subflow(node.id)
        self.trace("subflow.started", frame, flow=key, execution=str(eid))
        prefix = self.state.path(frame) + "/"
        self.open_scope(key, prefix, child_input, frame.id, eid, {})

    def subflow_depth(self, frame: Frame) -> int:
        """Return how many subflow calls the frame's scope is nested in (0 for the run's)."""
        depth, scope = 0, self.state.scopes[frame.scope]
        while scope.caller is not None:
            depth += 1
            scope = self.state.scopes[self.state.frames[scope.caller].scope]
        return depth

    # ------------------------------------------------------------------ task

    def on_task(self, frame: Frame, node: g.TaskNode) -> None:
        params = self.bounded(frame, self.render_params(frame, node.params or {}), "params")
        path = self.state.path(frame)
        key = self.wait_key(frame, str(frame.attempt), path)
        frame.state = FrameState.WORKING
        keys = [key]
        timer = due = None
        if node.timeout_s:
            timer = f"{key}|timeout"
            due = shift_time(self.state.now, float(node.timeout_s))
            keys.append(timer)
            self.commands.append(SetTimer(key=timer, due=due))
        frame.wait = {"keys": keys, "action": key, "timer": timer, "due": due}
        self.state.working += 1
        for waiting in keys:
            self.state.waits[waiting] = frame.id
        self.row(frame, RowStatus.RUNNING)
        self.trace("action.dispatched", frame, action=node.action, attempt=frame.attempt)
        self.commands.append(RunAction(  # key, action, params, node, execution id, attempt, timeout
            key, node.action, params, path, frame.execution_id, frame.attempt,
            float(node.timeout_s) if node.timeout_s else None,
        ))  # fmt: skip

    def wait_key(self, frame: Frame, suffix: str, path: str | None = None) -> str:
        """Return the key of something the frame waits for: run, node, execution, suffix.

        For actions the suffix is the attempt, which makes the key the idempotency key.
        `path` is the frame's node path, when the caller has it already.
        """
        path = self.state.path(frame) if path is None else path
        return f"{self.state.run_id}|{path}|{frame.execution_id}|{suffix}"

    def render_params(self, frame: Frame, value: JSON) -> JSON:
        """Interpolate `${CEL}` in string params; a lone `${expr}` keeps the value's type."""
        if isinstance(value, dict):
            return {k: self.render_params(frame, v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.render_params(frame, v) for v in value]
        if isinstance(value, str) and "${" in value:
            inner = value[2:-1]
            if value.startswith("${") and value.endswith("}") and "${" not in inner:
                return self.evaluate(frame, inner, "params")
            return self.render(frame, value, "params")
        return value

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

    def action_completed(self, frame: Frame, event: ActionCompleted) -> None:
        node = self.state.node_of(frame)
        assert isinstance(node, g.TaskNode)
        if frame.wait.get("action") != event.key:
            self.refuse(event, f"{event.key} is not the action {frame.node} waits for")
            return
        self.clear_wait(frame)
        frame.state = FrameState.READY
        if node.output:
            self.write(frame, node.output, event.output)
        self.trace("action.completed", frame, attempt=frame.attempt, outcome=event.outcome)
        result = summary(event.output)  # the row's result and the write's summary alike
        self.complete(frame, event.outcome, result, {node.output: result} if node.output else None)

    def action_failed(self, frame: Frame, error: str) -> None:
        node = self.state.node_of(frame)
        assert isinstance(node, g.TaskNode)
        self.clear_wait(frame)
        self.row(frame, RowStatus.FAILED, summary(error))
        self.trace("action.failed", frame, attempt=frame.attempt, error=error)
        max_attempts = node.retry.max_attempts if node.retry else 1
        if frame.attempt >= max_attempts:
            raise FlowFailure(f"{node.action} failed after {frame.attempt} attempt(s): {error}")
        backoff = float(node.retry.backoff_s or 0) if node.retry else 0.0
        key = self.wait_key(frame, f"{frame.attempt}|retry")
        delay = backoff * 2 ** (frame.attempt - 1) * jitter(key)
        due = shift_time(self.state.now, delay)
        frame.state = FrameState.SUSPENDED
        frame.wait = {"keys": [key], "timer": key, "retry": True, "due": due}
        self.state.waits[key] = frame.id
        self.trace(
            "action.retry_scheduled", frame, attempt=frame.attempt + 1, delay_s=round(delay, 3)
        )
        self.commands.append(SetTimer(key=key, due=due))

    # ------------------------------------------------------------------ approval / wait

    def on_approval(self, frame: Frame, node: g.ApprovalNode) -> None:
        title = self.render(frame, node.title, "title") or node.id
        instructions = self.render(frame, node.instructions, "instructions")
        self.bounded_text(frame, title, "the title")
        self.bounded_text(frame, instructions, "the instructions")
        shown = tuple((source, self.evaluate(frame, source, "show")) for source in node.show)
        self.bounded_text(frame, [value for _, value in shown], "the shown values")
        due = None if node.due_in_s is None else shift_time(self.state.now, float(node.due_in_s))
        key = self.wait_key(frame, "approval")
        frame.state = FrameState.SUSPENDED
        frame.wait = {"keys": [key], "votes": {}, "approval": key}
        self.state.waits[key] = frame.id
        self.row(frame, RowStatus.WAITING)
        self.trace("paused", frame, reason="approval", groups=list(node.groups))
        self.commands.append(RequestApproval(
            key=key, node=self.state.path(frame), execution_id=frame.execution_id,
            groups=node.groups, policy=node.decision_policy.to_json(), title=title,
            instructions=instructions, shown=shown, due=due, allow_starter=node.allow_starter,
        ))  # fmt: skip

    def approval_decided(self, frame: Frame, event: ApprovalDecided) -> None:
        node = self.state.node_of(frame)
        assert isinstance(node, g.ApprovalNode)
        groups = [group for group in node.groups if group in event.groups]
        votes: dict[str, Any] = frame.wait["votes"]
        if not groups:
            self.refuse(event, f"{event.user} is in none of the groups {list(node.groups)}")
            return
        if event.user in votes:
            self.refuse(event, f"{event.user} has already decided")
            return
        most = expression_limits.limits().max_approval_text_bytes
        if json_size(event.comment) > most:
            self.refuse(
                event, f"the comment is over {most:,} bytes (BRAID_APPROVAL_TEXT_MAX_BYTES)"
            )
            return
        votes[event.user] = {"decision": event.decision.value, "groups": groups}
        self.trace("approval.vote", frame, user=event.user, decision=event.decision.value,
                   comment=event.comment, groups=list(event.groups))  # fmt: skip
        outcome = approval_outcome(node, votes)
        if outcome is None:
            return
        self.commands.append(CloseApproval(key=event.key, reason=outcome))
        self.clear_wait(frame)
        frame.state = FrameState.READY
        self.trace("resumed", frame, decision=outcome, by=event.user)
        self.complete(frame, outcome, outcome)

    def on_wait(self, frame: Frame, node: g.WaitNode) -> None:
        if node.until is not None:
            try:
                due = format_timestamp(
                    compile_cel(node.until).evaluate_timestamp(self.bindings(frame))
                )
            except ExpressionError as error:
                raise FlowFailure(self.explain(frame, "until", error)) from error
        else:
            due = shift_time(self.state.now, float(node.seconds or 0))
        key = self.wait_key(frame, "timer")
        frame.state = FrameState.SUSPENDED
        frame.wait = {"keys": [key], "timer": key, "due": due}
        self.state.waits[key] = frame.id
        self.row(frame, RowStatus.WAITING)
        self.trace("paused", frame, reason="timer", due=due)
        self.commands.append(SetTimer(key=key, due=due))

    def redrive(self, frame: Frame, event: Redrive) -> None:
        """Send the frame's action again with the next attempt (a retry of a failed run)."""
        if frame.wait.get("action") != event.key:
            self.refuse(event, f"{event.key} is not an action the run waits for")
            return
        self.clear_wait(frame)
        self.trace("action.redriven", frame, attempt=frame.attempt + 1, by=event.by)
        frame.attempt += 1
        frame.state = FrameState.READY
        self.reopen_owners(frame)
        self.execute(frame)

    def reopen_owners(self, frame: Frame) -> None:
        """The frames a retried action runs under (its foreach, loop, race and subflow
        calls) run again: the failure wrote their rows failed, so each reads running at its
        next attempt, which the fence lets replace the failed one."""
        owner = self.owner_of(frame)
        while owner is not None:
            owner.attempt += 1
            barrier = owner.barrier
            result: JSON = None
            if barrier.get("kind") == "loop":
                result = {"iteration": barrier["iteration"]}
            elif barrier.get("kind") == "foreach":
                result = {"items": len(barrier["items"])}
            self.row(owner, RowStatus.RUNNING, result)
            self.trace("frame.retried", owner, attempt=owner.attempt, result=result)
            owner = self.owner_of(owner)

    def owner_of(self, frame: Frame) -> Frame | None:
        """Return the frame that owns this one: its barrier's, else its scope's caller."""
        above = frame.owner if frame.owner is not None else self.state.scopes[frame.scope].caller
        return None if above is None else self.state.frames.get(above)

    def timer_fired(self, frame: Frame, key: str) -> None:
        if key.endswith("|timeout"):
            node = self.state.node_of(frame)
            assert isinstance(node, g.TaskNode)
            self.action_failed(frame, f"timed out after {node.timeout_s} s")
            return
        retry = frame.wait.get("retry")
        self.clear_wait(frame)
        frame.state = FrameState.READY
        if retry:
            frame.attempt += 1
            self.execute(frame)
            return
        self.trace("resumed", frame, reason="timer")
        self.complete(frame, NEXT)


def approval_outcome(node: g.ApprovalNode, votes: dict[str, Any]) -> str | None:
    """Return `approved`/`rejected` once the policy is decided, else None."""
    if any(vote["decision"] == Decision.REJECT.value for vote in votes.values()):
        return g.Outcome.REJECTED.value
    # One vote per person: under `all` a vote covers one group, whatever groups its voter
    # holds (engine/core/seats.py).
    holders = {user: vote["groups"] for user, vote in votes.items()}
    done = seats.people_needed(node.decision_policy, node.groups, holders) == 0
    return g.Outcome.APPROVED.value if done else None


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
