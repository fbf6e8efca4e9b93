"""The subflow node: call another flow's graph as a scope, and take back its outputs."""

from __future__ import annotations

from engine.core import expression_limits
from engine.core import graph as g
from engine.core.events import RowStatus
from engine.core.inputs import InputRejected, check_input
from engine.core.state import Frame, FrameState, subflow_key
from engine.core.stepper import NEXT, FlowFailure, NodeKind, Stepper, summaries
from engine.core.values import JSON, summary


def execute(stepper: Stepper, frame: Frame, node: g.SubflowNode) -> None:
    """Check the call, evaluate its input and open the called scope."""
    key = subflow_key(node)
    if key not in stepper.state.graphs:
        raise FlowFailure(f"subflow {key} is not available to this run")
    deepest = expression_limits.limits().max_subflow_depth
    if subflow_depth(stepper, frame) >= deepest:
        raise FlowFailure(
            f"subflow {key} would nest {deepest + 1} calls deep; the limit is {deepest} "
            "(BRAID_SUBFLOW_MAX_DEPTH)"
        )
    child_input = {
        a.field: stepper.evaluate(frame, a.expression, f"input.{a.field}") for a in node.input or ()
    }
    stepper.bounded(frame, child_input, "the subflow's input")
    try:
        check_input(stepper.state.graphs[key].input, child_input)
    except InputRejected as rejected:
        raise FlowFailure(f"subflow {key}: {rejected}") from rejected
    frame.state = FrameState.BLOCKED
    frame.barrier = {"kind": "subflow"}
    stepper.row(frame, RowStatus.RUNNING)
    eid = stepper.state.execution_id(frame).subflow(node.id)
    stepper.trace("subflow.started", frame, flow=key, execution=str(eid))
    prefix = stepper.state.path(frame) + "/"
    stepper.open_scope(key, prefix, child_input, frame.id, eid, {})


def subflow_depth(stepper: Stepper, frame: Frame) -> int:
    """Return how many subflow calls the frame's scope is nested in (0 for the run's)."""
    depth, scope = 0, stepper.state.scopes[frame.scope]
    while scope.caller is not None:
        depth += 1
        scope = stepper.state.scopes[stepper.state.frames[scope.caller].scope]
    return depth


def scope_finished(
    stepper: Stepper, caller: Frame, node: g.SubflowNode, view: dict[str, JSON]
) -> None:
    """The called scope reached its end: write its outputs to the caller and continue."""
    try:
        for mapping in node.output or ():
            stepper.write(caller, mapping.parent_field, view.get(mapping.child_field))
    except FlowFailure as failure:
        stepper.row(caller, RowStatus.FAILED, summary(str(failure)))
        stepper.fail(caller, str(failure))
        return
    returned = {m.parent_field: view.get(m.child_field) for m in node.output or ()}
    stepper.row(caller, RowStatus.COMPLETED, summary(returned))
    stepper.trace_completed(caller, summaries(returned))
    caller.state = FrameState.READY
    stepper.follow(caller, NEXT)


KIND = NodeKind(execute=execute, scope_finished=scope_finished)
