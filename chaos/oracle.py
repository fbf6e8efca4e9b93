"""The oracle: the in-process runtime fed the events a durable run applied, in its order.

A durable run's inbox keeps every event it applied, with when (`applied_at`). The oracle
starts the same graphs and input in `InProcessRuntime` on an in-memory store and applies
the same sequence of events, but computes every action's result itself (the actions'
outcomes are a function of seed, run, node, execution id and attempt) and takes from the
inbox only the people's decisions. So it is the same decisions and the same action
outcomes, in the interleaving the workers happened to produce: a race's winner, or which
siblings finished before a failure, depend on that order, and replaying it makes every
run comparable, not only the order-free ones.

The run must then end with the same status, error, state, node rows, approval requests
and the very same trace, event by event. Anything else is a mismatch: a step applied
twice or lost, a stale writer's row, a result recorded that the action did not give.
"""

import dataclasses
import json
from typing import Any

from approvals.models import ApprovalRequest
from engine.actions import ACTIONS
from engine.core.actions import ActionRegistry
from engine.core.events import (
    ActionCompleted,
    ActionFailed,
    ApprovalDecided,
    Event,
    RunAction,
    SetTimer,
    Start,
    TimerFired,
    event_from_json,
)
from engine.core.graph import Graph
from engine.core.runtime import InProcessRuntime, ManualClock
from engine.core.scheduler import step
from engine.core.state import RunState
from engine.core.store import InMemoryStore
from engine.models import NodeState, PendingEvent, Run, TraceEvent


def oracle_actions() -> ActionRegistry:
    """The project's actions, with `sleep` answering at once (its output is the same)."""
    registry = ActionRegistry()
    registry.specs = dict(ACTIONS.specs)
    registry.specs["sleep"] = dataclasses.replace(
        ACTIONS.specs["sleep"], function=lambda params, _: {"slept_s": float(params["seconds"])}
    )
    return registry


ORACLE_ACTIONS = oracle_actions()


def trace_entry(event: str, execution_id: str, node: str | None, detail: dict[str, Any]) -> str:
    """One trace event as compared: without timer due times (the clocks differ)."""
    timeless = {k: v for k, v in detail.items() if k != "due"}
    return json.dumps([event, execution_id, node or "", timeless], sort_keys=True)


def durable_outcome(run: Run) -> dict[str, Any]:
    """What the durable run left: status, error, state, rows, approvals and trace."""
    rows = {r.node: [r.status, r.execution_id, r.result, r.attempt]
            for r in NodeState.objects.filter(run=run)}  # fmt: skip
    asked = {a.key: a.status for a in ApprovalRequest.objects.filter(run=run)}
    trace = [trace_entry(t.event, t.execution_id, t.node, t.detail)
             for t in TraceEvent.objects.filter(run=run).order_by("seq")]  # fmt: skip
    return {"status": run.status, "error": run.error, "state": run.state, "rows": rows,
            "approvals": asked, "trace": trace}  # fmt: skip


class Replay:
    """The in-process runtime applying a durable run's events in the durable order."""

    def __init__(self, run: Run) -> None:
        self.run_id = str(run.pk)
        graphs = {key: Graph.from_json(document) for key, document in run.graphs.items()}
        self.store = InMemoryStore()
        self.engine = InProcessRuntime(self.store, ORACLE_ACTIONS, ManualClock())
        self.store.create(self.run_id, run.label, run.input, dict(run.graphs))
        self.state = RunState(run_id=self.run_id, graphs=graphs)
        self.results: dict[str, Event] = {}
        self.timers: set[str] = set()
        self.problems: list[str] = []

    def event_for(self, key: str, recorded: Event) -> Event | None:
        """The oracle's own event for an inbox row; None (and a problem) when it has none."""
        if isinstance(recorded, Start):
            return recorded
        if isinstance(recorded, (ActionCompleted, ActionFailed)):
            own = self.results.get(key)
            if own is None:
                self.problems.append(f"result {key} for an action the oracle never sent")
                return None
            own = dataclasses.replace(own, at=recorded.at)
            if own != recorded:
                self.problems.append(f"result {key}: durable {recorded} != oracle {own}")
            return own
        if isinstance(recorded, TimerFired):
            if key not in self.timers:
                self.problems.append(f"timer {key} fired that the oracle never set")
                return None
            return recorded
        if isinstance(recorded, ApprovalDecided):
            return recorded  # the same decision: the scripted approver's
        self.problems.append(f"unexpected inbox event {key}: {recorded.kind}")
        return None

    def apply(self, event: Event) -> None:
        """Step once, commit to the in-memory store, run the actions the step asked for."""
        self.state, commands = step(self.state, event)
        self.engine.commit(self.state, commands)
        for command in commands:
            if isinstance(command, RunAction):
                self.results[command.key] = self.engine.run_action(command, self.run_id)
            elif isinstance(command, SetTimer):
                self.timers.add(command.key)

    def outcome(self) -> dict[str, Any]:
        """What the in-process runtime left, in the durable outcome's terms."""
        rows = {path: [r.status.value, r.execution_id, r.result, r.attempt]
                for path, r in self.store.rows(self.run_id).items()}  # fmt: skip
        closed = self.store.closed[self.run_id]
        asked = {key: "closed" if key in closed else "open"
                 for key in self.store.requests[self.run_id]}  # fmt: skip
        trace = [trace_entry(t.event, t.execution_id, t.node, t.detail)
                 for t in self.store.trace(self.run_id)]  # fmt: skip
        return {"status": self.state.status.value, "error": self.state.error or "",
                "state": self.state.current_view(), "rows": rows, "approvals": asked,
                "trace": trace}  # fmt: skip


def compare(run: Run) -> list[str]:
    """Replay a durable run in the oracle; return the differences (none when it agrees)."""
    replay = Replay(run)
    applied = PendingEvent.objects.filter(run=run, applied_at__isnull=False)
    for row in applied.order_by("applied_at", "id"):
        try:
            recorded = event_from_json(row.event)
        except (TypeError, ValueError) as error:
            replay.problems.append(f"unreadable inbox event {row.key}: {error}")
            continue
        event = replay.event_for(row.key, recorded)
        if event is not None:
            try:
                replay.apply(event)
            except Exception as error:  # the oracle's own failure is a finding too
                replay.problems.append(f"oracle raised applying {row.key}: {error!r}")
                break
    expected, found = replay.outcome(), durable_outcome(run)
    for part in ("status", "error", "state", "rows", "approvals", "trace"):
        if expected[part] != found[part]:
            replay.problems.append(
                f"{part} differs: {first_difference(expected[part], found[part])}"
            )
    return replay.problems


def first_difference(expected: Any, found: Any) -> str:
    """Say briefly where two values first differ."""
    if isinstance(expected, list) and isinstance(found, list):
        for index, (a, b) in enumerate(zip(expected, found, strict=False)):
            if a != b:
                return f"at {index}: oracle {a} != durable {b}"
        return f"oracle has {len(expected)} entries, durable {len(found)}"
    if isinstance(expected, dict) and isinstance(found, dict):
        for key in sorted(set(expected) | set(found)):
            if expected.get(key) != found.get(key):
                return f"{key}: oracle {expected.get(key)!r} != durable {found.get(key)!r}"
    return f"oracle {expected!r} != durable {found!r}"
