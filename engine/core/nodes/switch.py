"""The switch node: continue on the outcome of the first case that holds."""

from __future__ import annotations

from engine.core import graph as g
from engine.core.state import Frame
from engine.core.stepper import NodeKind, Stepper


def execute(stepper: Stepper, frame: Frame, node: g.SwitchNode) -> None:
    """Follow the first case whose `when` holds, else the default."""
    outcome = node.default
    for index, case in enumerate(node.cases):
        if stepper.evaluate_bool(frame, case.when, f"cases[{index}].when"):
            outcome = case.outcome
            break
    stepper.complete(frame, outcome, outcome)


KIND = NodeKind(execute=execute)
