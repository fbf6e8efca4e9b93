"""The set node: evaluate CEL values and write them to state fields."""

from __future__ import annotations

from engine.core import graph as g
from engine.core.state import Frame
from engine.core.stepper import NEXT, NodeKind, Stepper, summaries
from engine.core.values import summary


def execute(stepper: Stepper, frame: Frame, node: g.SetNode) -> None:
    """Evaluate every value, then write them together."""
    # Every value sees the state as the node found it; the writes apply together after,
    # so JSON member order (which carries no meaning) cannot change the result.
    written = {
        assignment.field: stepper.evaluate(
            frame, assignment.expression, f"values.{assignment.field}"
        )
        for assignment in node.values
    }
    for name, value in written.items():
        stepper.write(frame, name, value)
    stepper.complete(frame, NEXT, summary(written), summaries(written))


KIND = NodeKind(execute=execute)
