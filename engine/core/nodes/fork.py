"""The fork node: one frame per branch, each on a child lineage."""

from __future__ import annotations

from engine.core import graph as g
from engine.core.events import RowStatus
from engine.core.execution_ids import branch_text
from engine.core.state import Frame
from engine.core.stepper import NodeKind, Stepper, topology


def execute(stepper: Stepper, frame: Frame, node: g.ForkNode) -> None:
    """Start one frame per branch and retire the fork's own."""
    stepper.row(frame, RowStatus.COMPLETED, list(node.branch_names))
    stepper.trace("fork.activated", frame, branches=list(node.branch_names))
    children = []
    for branch in node.branch_names:
        lineage = stepper.state.lineages.child(frame.lineage)
        eid = branch_text(frame.execution_id, node.id, branch)
        child = stepper.spawn(
            scope=frame.scope, lineage=lineage.id, node=node.id, execution_id=eid,
            context=frame.context, activation=frame.activation, owner=frame.owner,
            variables=frame.variables, provenance=[eid],
        )  # fmt: skip
        children.append((child, branch))
    stepper.retire(frame)
    edges = topology(stepper.state.graph_of(frame)).branches
    for child, branch in children:
        stepper.trace("branch.started", child, node=node.id, branch=branch)
        stepper.move(child, edges[(node.id, branch)])


KIND = NodeKind(execute=execute)
