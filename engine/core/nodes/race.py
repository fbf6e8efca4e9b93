"""The race node: start every branch; the first back wins and the others are cancelled."""

from __future__ import annotations

from engine.core import graph as g
from engine.core.events import RowStatus
from engine.core.execution_ids import branch_text
from engine.core.state import Frame, FrameState
from engine.core.stepper import NEXT, NodeKind, Stepper, topology


def execute(stepper: Stepper, frame: Frame, node: g.RaceNode) -> None:
    """Block the race's frame and start one owned frame per branch."""
    frame.state = FrameState.BLOCKED
    frame.barrier = {"kind": "race"}
    stepper.row(frame, RowStatus.RUNNING)
    edges = topology(stepper.state.graph_of(frame)).branches
    for branch in node.branch_names:
        eid = branch_text(frame.execution_id, node.id, branch)
        stepper.trace("branch.started", frame, branch=branch, execution=eid)
        stepper.own(
            frame,
            branch,
            node.id,
            eid,
            frame.context,
            frame.variables,
            edges[(node.id, branch)],
        )
        if frame.id not in stepper.state.frames or not frame.barrier:
            return


def child_finished(stepper: Stepper, frame: Frame, branch: str, lineage: int) -> None:
    """The first branch back wins; the others are cancelled and never merged."""
    node = stepper.state.node_of(frame)
    for other in node.branches:
        if other != branch:
            stepper.cancel_activation(f"f{frame.id}:{other}", f"race {node.id} won by {branch}")
    frame.lineage = lineage
    frame.barrier = {}
    frame.state = FrameState.READY
    stepper.trace("race.won", frame, winner=branch)
    has_edge = topology(stepper.state.graph_of(frame)).successor(node.id, branch) is not None
    stepper.complete(frame, branch if has_edge else NEXT, branch)


KIND = NodeKind(execute=execute, child_finished=child_finished)
