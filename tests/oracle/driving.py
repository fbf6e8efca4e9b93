"""Driving runs for the oracle: the core harness plus a retry, random moves and the comparison.

`RetryingDriver` adds what the durable runtime's retry does (engine/runtime/runs.py `retry`):
it keeps the state from before each action failure; a retry restores it (rows and trace
are kept, as the runtime keeps them), holds again the actions, timers and approval
requests the restored state waits on, and sends `Redrive` for the failed action.

`compare` checks the root → leaf walk, the leaf → root walk and the oracle's aggregate
colors on every node, the execution tree's status of every execution, and every
execution's own view of the nodes that started in it.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine.core.colors import (
    explain,
    explain_node,
    loops_of,
    older_round_candidates,
    rows_cut_short,
    rows_in_older_rounds,
)
from engine.core.events import (
    ActionFailed,
    Cancel,
    Command,
    Event,
    Redrive,
    RequestApproval,
    RunAction,
)
from engine.core.executions import executions, explain_execution
from engine.core.state import RunState
from tests.core.harness import Driver
from tests.oracle.model import Model

DEMO = Path(__file__).resolve().parents[2] / "designer" / "demo_flows"


def demo(name: str) -> dict[str, Any]:
    """Return a demo flow's document."""
    document: dict[str, Any] = json.loads((DEMO / f"{name}.json").read_text())
    return document


@dataclass
class RetryingDriver(Driver):
    """A harness driver that can retry a run an action's failure ended."""

    seen_actions: dict[str, RunAction] = field(default_factory=dict)
    seen_requests: dict[str, RequestApproval] = field(default_factory=dict)
    redrive: tuple[dict[str, Any], str] | None = None

    def carry_out(self, command: Command) -> None:
        """Apply a command, remembering every action and request by key."""
        if isinstance(command, RunAction):
            self.seen_actions[command.key] = command
        elif isinstance(command, RequestApproval):
            self.seen_requests[command.key] = command
        super().carry_out(command)

    def send(self, event: Event) -> list[Command]:
        """Step, keeping the state before an action failure that fails the run."""
        failing = event if isinstance(event, ActionFailed) else None
        before = json.loads(json.dumps(self.state.to_json())) if failing else None
        commands = super().send(event)
        if failing and before is not None and self.state.status.value == "failed":
            self.redrive = (before, failing.key)
        return commands

    def retry(self) -> list[Command]:
        """Restore the state before the failure and redrive the failed action."""
        assert self.redrive is not None, "only a run an action's failure ended can be retried"
        snapshot, key = self.redrive
        self.redrive = None
        self.state = RunState.from_json(snapshot, self.graphs)
        self.finished = None
        self.actions = {
            k: self.seen_actions[k]
            for k, frame_id in self.state.waits.items()
            if k != key and self.state.frames[frame_id].wait.get("action") == k
        }
        self.timers = {k: due for due, k in self.state.timers()}
        self.approvals = {k: self.seen_requests[k] for k, _ in self.state.approvals()}
        return self.send(Redrive(at=self.now(), key=key, by="admin"))


def moves_of(driver: RetryingDriver) -> list[str]:
    """Return the moves the run allows now, weighted by repetition."""
    if driver.state.status.finished:
        return ["retry"] if driver.redrive is not None else []
    moves: list[str] = []
    if driver.actions:
        moves += ["complete"] * 4 + ["fail"]
    if driver.timers:
        moves += ["fire"] * 2
    if driver.approvals:
        moves += ["approve"] * 3 + ["reject"]
    return [*moves, "cancel"]


def make_move(driver: RetryingDriver, move: str, rng: random.Random) -> str:
    """Carry out one move; return a line describing it (for reproducing a failure)."""
    if move == "complete":
        key = rng.choice(sorted(driver.actions))
        driver.complete(key)
    elif move == "fail":
        key = rng.choice(sorted(driver.actions))
        driver.actions.pop(key)
        driver.send(ActionFailed(at=driver.now(), key=key, error="boom"))
    elif move == "fire":
        key = rng.choice(sorted(driver.timers))
        driver.fire(key)
    elif move in ("approve", "reject"):
        request = driver.approvals[rng.choice(sorted(driver.approvals))]
        key = request.key
        user = f"u{rng.randrange(3)}"
        driver.decide(request.node, user, tuple(request.groups), move, request.execution_id)
    elif move == "retry":
        key = driver.redrive[1] if driver.redrive else ""
        driver.retry()
    else:
        key = ""
        driver.send(Cancel(at=driver.now(), by="admin", reason="test"))
    return f"{move} {key}"


def walk_colors(driver: Driver) -> dict[str, str]:
    """Return the root → leaf walk's colors, checking the leaf → root walk agrees on each."""
    status, ended = driver.state.status, driver.state.error or ""
    # What the product's tree reads beside the rows: the frames the trace says were cut,
    # and rows of an earlier round of a loop still running in another item.
    loops = frozenset().union(*(loops_of(graph) for graph in driver.graphs.values()))
    cut_rows = rows_cut_short(driver.trace, driver.rows)
    older_rows = rows_in_older_rounds(driver.trace, older_round_candidates(driver.rows, loops))
    whole = explain(
        driver.graphs, driver.rows, status, ended, cut_rows=cut_rows, older_rows=older_rows
    )
    found = {}
    for path, verdict in whole.items():
        single = explain_node(
            driver.graphs,
            driver.rows,
            status,
            path,
            ended,
            cut_rows=cut_rows,
            older_rows=older_rows,
        )
        assert single is not None and single.color == verdict.color, (path, verdict, single)
        found[path] = verdict.color.value
    return found


def oracle_colors(driver: Driver) -> dict[str, str]:
    """Return the oracle's aggregate colors, from the graphs and the trace only."""
    model = Model(driver.graphs, driver.trace)
    assert model.finished == driver.state.status.finished, (model.now.run, driver.state.status)
    return {path: color.value for path, color in model.colors().items()}


@dataclass(frozen=True)
class Disagreement:
    """One node on which the walk and the oracle differ."""

    path: str
    walk: str | None
    oracle: str | None


def compare(driver: Driver) -> list[Disagreement]:
    """Return every node whose walk color differs from the oracle's, and every execution
    whose status in the execution tree (engine/core/executions.py) differs from it."""
    walked, expected = walk_colors(driver), oracle_colors(driver)
    found = [
        Disagreement(path, walked.get(path), expected.get(path))
        for path in sorted(set(walked) | set(expected))
        if walked.get(path) != expected.get(path)
    ]
    status, ended = driver.state.status, driver.state.error or ""
    tree = {e.id: e.status.value for e in executions(driver.trace, status, ended)}
    model = Model(driver.graphs, driver.trace).execution_statuses()
    statuses = {eid: color.value for eid, color in model.items()}
    return (
        found
        + [
            Disagreement(f"execution {eid}", tree.get(eid), statuses.get(eid))
            for eid in sorted(set(tree) | set(statuses))
            if tree.get(eid) != statuses.get(eid)
        ]
        + execution_views(driver, sorted(tree))
    )


def execution_views(driver: Driver, ids: list[str]) -> list[Disagreement]:
    """Return every node that started in an execution whose color in that execution's view
    (`explain_execution`, the per-item and per-iteration view) is not what the oracle says
    happened to it there."""
    status, ended = driver.state.status, driver.state.error or ""
    happened = Model(driver.graphs, driver.trace).outcomes()
    found = []
    for eid in ids:
        view = explain_execution(driver.graphs, driver.trace, status, eid, ended)
        for (path, at), color in sorted(happened.items()):
            shown = view.get(path)
            if at == eid and (shown is None or shown.color.value != color.value):
                found.append(Disagreement(f"{path} in {eid}", shown and shown.color.value,
                                          color.value))  # fmt: skip
    return found
