"""The token scheduler: `step(state, event) -> (state, commands)`, pure and deterministic.

A step applies one event, then runs every ready frame until none is left: pure nodes
execute at once, tasks leave as RunAction commands, approvals and waits suspend their
own frame only. A flow's failure is a value (a failed run and a RunFinished command);
nothing a flow does makes `step` raise. See docs/engine.md for the model.
"""

from __future__ import annotations

from collections.abc import Mapping

from engine.core import graph as g
from engine.core.events import (
    ActionCompleted,
    ActionFailed,
    ApprovalDecided,
    Command,
    Event,
    Redrive,
    RunStatus,
    TimerFired,
)
from engine.core.nodes import (
    approval,
    end,
    fail,
    foreach,
    fork,
    gather,
    if_else,
    loop,
    race,
    start,
    subflow,
    switch,
    task,
    wait,
)
from engine.core.nodes import set as set_node
from engine.core.state import RunState
from engine.core.stepper import Deliver, NodeKind, Pick, Stepper

# What the scheduler does with each node type (engine/core/nodes): one row per type.
KINDS: Mapping[str, NodeKind] = {
    g.NodeType.START: start.KIND,
    g.NodeType.END: end.KIND,
    g.NodeType.TASK: task.KIND,
    g.NodeType.SET: set_node.KIND,
    g.NodeType.IF: if_else.KIND,
    g.NodeType.SWITCH: switch.KIND,
    g.NodeType.FORK: fork.KIND,
    g.NodeType.GATHER: gather.KIND,
    g.NodeType.FOREACH: foreach.KIND,
    g.NodeType.LOOP: loop.KIND,
    g.NodeType.RACE: race.KIND,
    g.NodeType.APPROVAL: approval.KIND,
    g.NodeType.WAIT: wait.KIND,
    g.NodeType.SUBFLOW: subflow.KIND,
    g.NodeType.FAIL: fail.KIND,
}
# Where an event for a waiting frame goes, by the event's type.
EVENTS: Mapping[type[Event], Deliver] = {
    ActionCompleted: task.action_completed,
    ActionFailed: task.action_failure,
    ApprovalDecided: approval.approval_decided,
    TimerFired: wait.timer_fired,
    Redrive: task.redrive,
}


def step(state: RunState, event: Event, pick: Pick | None = None) -> tuple[RunState, list[Command]]:
    """Apply one event and run until nothing is ready; return the state and the commands.

    The state is updated in place and returned. `pick` chooses which ready frame runs
    next (an index into the queue); the default is first-in, first-out.
    """
    stepper = Stepper(state, pick, KINDS, EVENTS)
    stepper.apply(event)
    stepper.drain()
    stepper.settle()
    return state, stepper.commands


def abort(state: RunState, at: str, reason: str) -> tuple[RunState, list[Command]]:
    """Fail a run that cannot go on (an adapter caught an internal error), closing it down.

    Every frame is cancelled as when a flow fails: waits close, timers are cancelled and
    the run ends `failed` with the reason. A finished run is left as it is.
    """
    stepper = Stepper(state, None, KINDS, EVENTS)
    state.now = at
    if not state.status.finished:
        stepper.finish_run(RunStatus.FAILED, {}, reason)
    return state, stepper.commands
