"""The fail node: fail its activation with the node's message."""

from __future__ import annotations

from engine.core import graph as g
from engine.core.state import Frame
from engine.core.stepper import FlowFailure, NodeKind, Stepper


def execute(stepper: Stepper, frame: Frame, node: g.FailNode) -> None:
    """Fail the frame with the node's error."""
    raise FlowFailure(node.error)


KIND = NodeKind(execute=execute)
