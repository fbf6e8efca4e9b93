"""The loop node: run its body again while the condition holds, up to max_iterations."""

from __future__ import annotations

from engine.core import expression_limits
from engine.core import graph as g
from engine.core.events import RowStatus
from engine.core.execution_ids import iteration_text
from engine.core.lineages import SizeExceeded
from engine.core.state import Frame, FrameState
from engine.core.stepper import FlowFailure, NodeKind, Stepper, topology
from engine.core.values import JSON, summary


def execute(stepper: Stepper, frame: Frame, node: g.LoopNode) -> None:
    """Open the loop's barrier (once) and run the next iteration."""
    if frame.barrier.get("kind") != "loop":
        frame.barrier = {"kind": "loop", "iteration": 0}
    next_iteration(stepper, frame, node)


def next_iteration(stepper: Stepper, frame: Frame, node: g.LoopNode) -> None:
    """Run the body again while the condition holds and iterations remain."""
    number = frame.barrier["iteration"]
    variables = dict(frame.variables)
    if node.variable:
        # `as` is the 1-based number of the iteration about to run (in `while`, too).
        variables[node.variable] = number + 1
    frame.variables = variables
    go_on = stepper.evaluate_bool(frame, node.condition, "while")
    edges = topology(stepper.state.graph_of(frame))
    edge = edges.successor(node.id, g.Outcome.BODY.value)
    if not go_on or edge is None:
        frame.barrier = {}
        frame.state = FrameState.READY
        stepper.complete(frame, g.Outcome.DONE.value, {"iterations": number})
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
        stepper.complete(frame, g.Outcome.EXHAUSTED.value, result)
        return
    frame.barrier["iteration"] = number + 1
    frame.state = FrameState.BLOCKED
    # The loop's row names the live iteration, so the monitor can tell older rows apart.
    stepper.row(frame, RowStatus.RUNNING, {"iteration": number + 1})
    eid = iteration_text(frame.execution_id, node.id, number + 1)
    stepper.trace("iteration.started", frame, number=number + 1, execution=eid)
    stepper.own(frame, str(number + 1), node.id, eid, str(eid), variables, edge)


def child_finished(stepper: Stepper, frame: Frame, key: str, lineage: int) -> None:
    """Iteration `key` returned by the back-edge."""
    iteration_finished(stepper, frame, lineage)


def iteration_finished(stepper: Stepper, frame: Frame, lineage: int) -> None:
    """An iteration returned: fold its writes into the loop's lineage and go again."""
    try:
        merged = stepper.state.lineages.merge([lineage], frame.lineage)
    except SizeExceeded as error:
        message = f"loop {frame.node}: merging iteration {frame.barrier['iteration']}: {error}"
        stepper.row(frame, RowStatus.FAILED, summary(message))
        stepper.fail(frame, message)
        return
    stepper.state.lineages.abandon([lineage])
    stepper.state.lineages.release([lineage])
    frame.lineage = merged.id
    try:
        next_iteration(stepper, frame, stepper.state.node_of(frame))  # type: ignore[arg-type]
    except FlowFailure as failure:
        stepper.row(frame, RowStatus.FAILED, summary(str(failure)))
        stepper.fail(frame, str(failure))


KIND = NodeKind(execute=execute, child_finished=child_finished)
