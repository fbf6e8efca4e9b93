"""The end node: its scope finishes, whatever else still runs in it."""

from __future__ import annotations

from engine.core import graph as g
from engine.core.events import RowStatus
from engine.core.state import Frame
from engine.core.stepper import NodeKind, Stepper


def execute(stepper: Stepper, frame: Frame, node: g.EndNode) -> None:
    """Cancel the rest of the scope and finish it with this frame's view."""
    stepper.row(frame, RowStatus.COMPLETED)
    stepper.trace("node.completed", frame)
    scope = stepper.state.scopes[frame.scope]
    stepper.cancel_activation(scope.activation, "the scope ended", keep=frame.id)
    lineage = frame.lineage
    stepper.retire(frame)
    stepper.scope_finished(scope, lineage)


KIND = NodeKind(execute=execute)
