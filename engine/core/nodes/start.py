"""The start node: where a scope begins; it continues at once."""

from __future__ import annotations

from engine.core import graph as g
from engine.core.state import Frame
from engine.core.stepper import NEXT, NodeKind, Stepper


def execute(stepper: Stepper, frame: Frame, node: g.StartNode) -> None:
    """Complete the start node and continue."""
    stepper.complete(frame, NEXT)


KIND = NodeKind(execute=execute)
