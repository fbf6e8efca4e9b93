"""The if node: continue on `true` or `false` as its condition says."""

from __future__ import annotations

from engine.core import graph as g
from engine.core.state import Frame
from engine.core.stepper import NodeKind, Stepper


def execute(stepper: Stepper, frame: Frame, node: g.IfNode) -> None:
    """Evaluate the condition and follow its outcome."""
    taken = stepper.evaluate_bool(frame, node.condition, "condition")
    outcome = g.Outcome.TRUE.value if taken else g.Outcome.FALSE.value
    stepper.complete(frame, outcome, outcome)


KIND = NodeKind(execute=execute)
