"""The wait node: suspend the frame until a time; and where every timer lands when it fires."""

from __future__ import annotations

from engine.core import graph as g
from engine.core.events import RowStatus, SetTimer, TimerFired
from engine.core.expression_errors import ExpressionError
from engine.core.expressions import compile_cel
from engine.core.nodes.task import action_failed
from engine.core.state import Frame, FrameState
from engine.core.stepper import NEXT, FlowFailure, NodeKind, Stepper
from engine.core.timestamps import format_timestamp, shift_time


def execute(stepper: Stepper, frame: Frame, node: g.WaitNode) -> None:
    """Suspend the frame and set its timer, for `until` or `seconds`."""
    if node.until is not None:
        try:
            due = format_timestamp(
                compile_cel(node.until).evaluate_timestamp(stepper.bindings(frame))
            )
        except ExpressionError as error:
            raise FlowFailure(stepper.explain(frame, "until", error)) from error
    else:
        due = shift_time(stepper.state.now, float(node.seconds or 0))
    key = stepper.wait_key(frame, "timer")
    frame.state = FrameState.SUSPENDED
    frame.wait = {"keys": [key], "timer": key, "due": due}
    stepper.state.waits[key] = frame.id
    stepper.row(frame, RowStatus.WAITING)
    stepper.trace("paused", frame, reason="timer", due=due)
    stepper.commands.append(SetTimer(key=key, due=due))


def timer_fired(stepper: Stepper, frame: Frame, event: TimerFired, key: str) -> None:
    """A timer fired: a task's timeout or retry, or the end of a wait."""
    if key.endswith("|timeout"):
        node = stepper.state.node_of(frame)
        assert isinstance(node, g.TaskNode)
        action_failed(stepper, frame, f"timed out after {node.timeout_s} s")
        return
    retry = frame.wait.get("retry")
    stepper.clear_wait(frame)
    frame.state = FrameState.READY
    if retry:
        frame.attempt += 1
        stepper.execute(frame)
        return
    stepper.trace("resumed", frame, reason="timer")
    stepper.complete(frame, NEXT)


KIND = NodeKind(execute=execute)
