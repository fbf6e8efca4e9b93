"""The task node: dispatch an action, then take its result, failure, timeout or retry."""

from __future__ import annotations

import zlib

from engine.core import graph as g
from engine.core.events import (
    ActionCompleted,
    ActionFailed,
    Redrive,
    RowStatus,
    RunAction,
    SetTimer,
)
from engine.core.state import Frame, FrameState
from engine.core.stepper import FlowFailure, NodeKind, Stepper
from engine.core.timestamps import shift_time
from engine.core.values import JSON, summary


def execute(stepper: Stepper, frame: Frame, node: g.TaskNode) -> None:
    """Render the params and send the action, with its timeout timer."""
    params: JSON = (  # no params (most tasks): nothing to render or measure
        stepper.bounded(frame, render_params(stepper, frame, node.params), "params")
        if node.params else {}
    )  # fmt: skip
    path = stepper.state.path(frame)
    key = stepper.wait_key(frame, str(frame.attempt), path)
    frame.state = FrameState.WORKING
    keys = [key]
    timer = due = None
    if node.timeout_s:
        timer = f"{key}|timeout"
        due = shift_time(stepper.state.now, float(node.timeout_s))
        keys.append(timer)
        stepper.commands.append(SetTimer(key=timer, due=due))
    frame.wait = {"keys": keys, "action": key, "timer": timer, "due": due}
    stepper.state.working += 1
    for waiting in keys:
        stepper.state.waits[waiting] = frame.id
    stepper.row(frame, RowStatus.RUNNING)
    stepper.trace("action.dispatched", frame, action=node.action, attempt=frame.attempt)
    stepper.commands.append(RunAction(  # key, action, params, node, execution id, attempt, timeout
        key, node.action, params, path, frame.execution_id, frame.attempt,
        float(node.timeout_s) if node.timeout_s else None,
    ))  # fmt: skip


def render_params(stepper: Stepper, frame: Frame, value: JSON) -> JSON:
    """Interpolate `${CEL}` in string params; a lone `${expr}` keeps the value's type."""
    if isinstance(value, dict):
        return {k: render_params(stepper, frame, v) for k, v in value.items()}
    if isinstance(value, list):
        return [render_params(stepper, frame, v) for v in value]
    if isinstance(value, str) and "${" in value:
        inner = value[2:-1]
        if value.startswith("${") and value.endswith("}") and "${" not in inner:
            return stepper.evaluate(frame, inner, "params")
        return stepper.render(frame, value, "params")
    return value


def action_completed(stepper: Stepper, frame: Frame, event: ActionCompleted, key: str) -> None:
    """The action returned: write its output and follow its outcome."""
    node = stepper.state.node_of(frame)
    assert isinstance(node, g.TaskNode)
    if frame.wait.get("action") != event.key:
        stepper.refuse(event, f"{event.key} is not the action {frame.node} waits for")
        return
    stepper.clear_wait(frame)
    frame.state = FrameState.READY
    if node.output:
        stepper.write(frame, node.output, event.output)
    stepper.trace("action.completed", frame, attempt=frame.attempt, outcome=event.outcome)
    result = summary(event.output)  # the row's result and the write's summary alike
    stepper.complete(frame, event.outcome, result, {node.output: result} if node.output else None)


def action_failure(stepper: Stepper, frame: Frame, event: ActionFailed, key: str) -> None:
    """The action failed: retry it or fail the node."""
    action_failed(stepper, frame, event.error)


def action_failed(stepper: Stepper, frame: Frame, error: str) -> None:
    """Write the failure; schedule a retry while attempts remain, else fail."""
    node = stepper.state.node_of(frame)
    assert isinstance(node, g.TaskNode)
    stepper.clear_wait(frame)
    stepper.row(frame, RowStatus.FAILED, summary(error))
    stepper.trace("action.failed", frame, attempt=frame.attempt, error=error)
    max_attempts = node.retry.max_attempts if node.retry else 1
    if frame.attempt >= max_attempts:
        raise FlowFailure(f"{node.action} failed after {frame.attempt} attempt(s): {error}")
    backoff = float(node.retry.backoff_s or 0) if node.retry else 0.0
    key = stepper.wait_key(frame, f"{frame.attempt}|retry")
    delay = backoff * 2 ** (frame.attempt - 1) * jitter(key)
    due = shift_time(stepper.state.now, delay)
    frame.state = FrameState.SUSPENDED
    frame.wait = {"keys": [key], "timer": key, "retry": True, "due": due}
    stepper.state.waits[key] = frame.id
    stepper.trace(
        "action.retry_scheduled", frame, attempt=frame.attempt + 1, delay_s=round(delay, 3)
    )
    stepper.commands.append(SetTimer(key=key, due=due))


def redrive(stepper: Stepper, frame: Frame, event: Redrive, key: str) -> None:
    """Send the frame's action again with the next attempt (a retry of a failed run)."""
    if frame.wait.get("action") != event.key:
        stepper.refuse(event, f"{event.key} is not an action the run waits for")
        return
    stepper.clear_wait(frame)
    stepper.trace("action.redriven", frame, attempt=frame.attempt + 1, by=event.by)
    frame.attempt += 1
    frame.state = FrameState.READY
    reopen_owners(stepper, frame)
    stepper.execute(frame)


def reopen_owners(stepper: Stepper, frame: Frame) -> None:
    """The frames a retried action runs under (its foreach, loop, race and subflow
    calls) run again: the failure wrote their rows failed, so each reads running at its
    next attempt, which the fence lets replace the failed one."""
    owner = owner_of(stepper, frame)
    while owner is not None:
        owner.attempt += 1
        barrier = owner.barrier
        result: JSON = None
        if barrier.get("kind") == "loop":
            result = {"iteration": barrier["iteration"]}
        elif barrier.get("kind") == "foreach":
            result = {"items": len(barrier["items"])}
        stepper.row(owner, RowStatus.RUNNING, result)
        stepper.trace("frame.retried", owner, attempt=owner.attempt, result=result)
        owner = owner_of(stepper, owner)


def owner_of(stepper: Stepper, frame: Frame) -> Frame | None:
    """Return the frame that owns this one: its barrier's, else its scope's caller."""
    above = frame.owner if frame.owner is not None else stepper.state.scopes[frame.scope].caller
    return None if above is None else stepper.state.frames.get(above)


def jitter(key: str) -> float:
    """Return a factor in [0.5, 1.0) derived from the key: deterministic, yet spread out."""
    return 0.5 + (zlib.crc32(key.encode()) % 1000) / 2000


KIND = NodeKind(execute=execute)
