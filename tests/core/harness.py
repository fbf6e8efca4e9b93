"""A test driver for the pure scheduler: it plays the adapter, with full control of order.

It applies every command the way a runtime would (rows through the fenced write, trace
appended, actions and timers held until the test releases them), so tests can decide
exactly when and in which order actions complete, timers fire and people decide.
"""

from __future__ import annotations

import datetime as dt
import json
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from engine.core.events import (
    ActionCompleted,
    ActionFailed,
    ApprovalDecided,
    CancelTimer,
    CloseApproval,
    Command,
    Decision,
    Event,
    Refused,
    RequestApproval,
    RunAction,
    RunFinished,
    SetTimer,
    Start,
    TimerFired,
    Trace,
    WriteRow,
)
from engine.core.graph import Graph
from engine.core.members import Members, members
from engine.core.parts import assemble, restore, take_delta
from engine.core.rows import NodeRow, apply_write
from engine.core.scheduler import step
from engine.core.state import RunState
from engine.core.store import apply_parts
from engine.core.validation import validate
from engine.core.values import JSON

ACTION_CATALOG = {
    "noop": frozenset({"next"}),
    "flaky": frozenset({"next"}),
    "route": frozenset({"next", "left", "right"}),
}
EPOCH = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)


def behave(action: RunAction) -> tuple[JSON, str] | str:
    """Return (output, outcome) for a test action, or an error message to fail it with."""
    params = action.params if isinstance(action.params, dict) else {}
    succeed_on = params.get("succeed_on", 2)
    assert isinstance(succeed_on, int), succeed_on
    if action.action == "flaky" and action.attempt < succeed_on:
        return f"attempt {action.attempt} failed"
    if action.action == "route":
        return params.get("value"), str(params["to"])
    return params.get("value"), "next"


def graph_of(document: dict[str, Any]) -> Graph:
    """Validate a test document strictly and return its graph."""
    report = validate(document, ACTION_CATALOG)
    assert report.errors == (), [p.to_json() for p in report.errors]
    assert report.graph is not None
    return report.graph


@dataclass
class Driver:
    """Runs one flow through `step`, holding back actions, timers and approvals."""

    document: dict[str, Any]
    input: Any = None
    subflows: Mapping[str, dict[str, Any]] = field(default_factory=dict)
    pick: Callable[[Sequence[int]], int] | None = None
    round_trip: bool = False
    seconds: float = 0.0
    rows: dict[str, NodeRow] = field(default_factory=dict)
    trace: list[Trace] = field(default_factory=list)
    actions: dict[str, RunAction] = field(default_factory=dict)
    approvals: dict[str, RequestApproval] = field(default_factory=dict)
    timers: dict[str, str] = field(default_factory=dict)
    refused: list[Refused] = field(default_factory=list)
    closed: list[CloseApproval] = field(default_factory=list)
    cancelled_timers: list[str] = field(default_factory=list)
    finished: RunFinished | None = None
    parts: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        graphs = {"main": graph_of(self.document)}
        graphs |= {key: graph_of(doc) for key, doc in self.subflows.items()}
        self.graphs = graphs
        self.state = RunState(run_id="run", graphs=graphs)
        self.send(Start(at=self.now(), input=self.input))

    def now(self) -> str:
        """Return the driver's clock as RFC 3339."""
        return (EPOCH + dt.timedelta(seconds=self.seconds)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")

    def send(self, event: Event) -> list[Command]:
        """Step once and apply the commands; optionally round-trip the snapshot first.

        The round trip goes through the parts a store keeps (each step's delta applied to
        the parts of the steps before), which must assemble to the snapshot exactly.
        """
        if self.round_trip:
            head = json.loads(apply_parts(self.parts, take_delta(self.state)))
            assembled = assemble(head, ((k, json.loads(v)) for k, v in self.parts.items()))
            whole = json.loads(json.dumps(self.state.to_json()))
            assert {**assembled, "stored": None} == {**whole, "stored": None}
            self.state = restore(assembled, self.graphs)
        self.state, commands = step(self.state, event, self.pick)
        # The activation index the step kept up to date is the one its frames imply.
        assert members(self.state).layout() == Members(self.state).layout()
        for command in commands:
            self.carry_out(command)
        return commands

    def carry_out(self, command: Command) -> None:
        """Apply one command as an adapter would."""
        if isinstance(command, WriteRow):
            apply_write(self.rows, command)
        elif isinstance(command, Trace):
            self.trace.append(command)
        elif isinstance(command, RunAction):
            self.actions[command.key] = command
        elif isinstance(command, RequestApproval):
            self.approvals[command.key] = command
        elif isinstance(command, CloseApproval):
            self.approvals.pop(command.key, None)
            self.closed.append(command)
        elif isinstance(command, SetTimer):
            self.timers[command.key] = command.due
        elif isinstance(command, CancelTimer):
            self.timers.pop(command.key, None)
            self.cancelled_timers.append(command.key)
        elif isinstance(command, Refused):
            self.refused.append(command)
        elif isinstance(command, RunFinished):
            self.finished = command

    def complete(self, key: str) -> list[Command]:
        """Answer one held action with its test behaviour."""
        action = self.actions.pop(key)
        behaviour = behave(action)
        if isinstance(behaviour, str):
            return self.send(ActionFailed(at=self.now(), key=key, error=behaviour))
        output, outcome = behaviour
        return self.send(ActionCompleted(at=self.now(), key=key, output=output, outcome=outcome))

    def run_actions(self, rng: random.Random | None = None) -> None:
        """Complete held actions (in random order with an rng) until none is held."""
        while self.actions:
            keys = sorted(self.actions)
            self.complete(rng.choice(keys) if rng else keys[0])

    def fire(self, key: str) -> list[Command]:
        """Advance the clock to a held timer's due time and fire it."""
        due = dt.datetime.fromisoformat(self.timers.pop(key).replace("Z", "+00:00"))
        self.seconds = max(self.seconds, (due - EPOCH).total_seconds())
        return self.send(TimerFired(at=self.now(), key=key))

    def settle(self, rng: random.Random | None = None) -> None:
        """Run actions and fire timers (earliest first) while no approval is open."""
        while not self.state.status.finished:
            self.run_actions(rng)
            if self.approvals or not self.timers:
                return
            self.fire(min(self.timers, key=self.timers.__getitem__))

    def decide(
        self,
        node: str,
        user: str,
        groups: tuple[str, ...],
        decision: str,
        execution_id: str | None = None,
    ) -> list[Command]:
        """Decide the open approval at a node (and execution) as a user."""
        key = next(
            k
            for k, r in self.approvals.items()
            if r.node == node and execution_id in (None, r.execution_id)
        )
        return self.send(
            ApprovalDecided(
                at=self.now(), key=key, user=user, groups=groups, decision=Decision(decision)
            )
        )

    @property
    def status(self) -> str:
        """Return the run's status."""
        return self.state.status.value

    @property
    def result(self) -> dict[str, Any] | None:
        """Return the final state of a completed run."""
        return self.state.result

    def row_table(self) -> dict[str, tuple[str, str, Any, int]]:
        """Return every row as (status, execution id, result, attempt)."""
        return {
            path: (row.status.value, row.execution_id, row.result, row.attempt)
            for path, row in sorted(self.rows.items())
        }

    def trace_by_execution(self) -> dict[str, list[tuple[str, str | None, str]]]:
        """Return trace events per execution id, in order, without times."""
        grouped: dict[str, list[tuple[str, str | None, str]]] = {}
        for event in self.trace:
            detail = json.dumps(event.detail, sort_keys=True)
            grouped.setdefault(event.execution_id, []).append((event.event, event.node, detail))
        return grouped


def flow(
    nodes: list[dict[str, Any]], edges: list[dict[str, Any]], state: dict[str, str] | None = None
) -> dict[str, Any]:
    """Build a document from nodes, edges and {field: reducer}."""
    return {
        "format": "braid.graph/1",
        "state": {name: {"reducer": reducer} for name, reducer in (state or {}).items()},
        "nodes": nodes,
        "edges": edges,
    }


def edge(source: str, target: str, **fields: str) -> dict[str, str]:
    """Build an edge."""
    return {"source": source, "target": target, **fields}


def append(node_id: str, field_name: str, expression: str) -> dict[str, Any]:
    """Build a set node appending the expression's list to a field."""
    return {"id": node_id, "type": "set", "values": {field_name: expression}}
