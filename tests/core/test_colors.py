"""The root-to-leaves color walk (CONTRACT §4) over real runs of the scheduler."""

import json
from pathlib import Path

from engine.core.colors import colors
from engine.core.events import RunStatus
from tests.core.harness import Driver, append, edge, flow

DEMO = Path(__file__).resolve().parents[2] / "designer" / "demo_flows"
START, END = {"id": "start", "type": "start"}, {"id": "done", "type": "end"}


def painted(driver: Driver) -> dict[str, str]:
    """Return the colors of a driver's run."""
    return colors(driver.graphs, driver.rows, driver.state.status)


def test_the_branch_an_if_did_not_take_is_skipped_and_the_rest_completed() -> None:
    document = json.loads((DEMO / "b-and-d-or-e.json").read_text())
    assert painted(Driver(document, {"urgent": True})) == {
        "start": "completed",
        "split": "completed",
        "b": "completed",
        "check": "completed",
        "d": "completed",
        "e": "skipped",
        "join": "completed",
        "done": "completed",
    }


def test_a_race_losers_waiting_node_is_cancelled_and_what_never_started_skipped() -> None:
    driver = Driver(
        json.loads((DEMO / "approval-or-timeout.json").read_text()), {"item": "x", "hours": 1}
    )
    waiting = painted(driver)
    assert waiting["approve"] == "waiting" and waiting["timer"] == "waiting"
    assert waiting["decided"] == "pending" and waiting["deadline"] == "running"
    driver.fire(next(iter(driver.timers)))
    assert painted(driver) == {
        "start": "completed",
        "deadline": "completed",
        "approve": "cancelled",
        "approved": "skipped",
        "rejected": "skipped",
        "timer": "completed",
        "decided": "skipped",
        "escalate": "completed",
        "done": "completed",
    }


def test_after_a_failure_siblings_are_cancelled_or_skipped_and_downstream_skipped() -> None:
    document = flow(
        [
            START,
            {"id": "split", "type": "fork", "branches": ["ok", "bad"]},
            {"id": "slow", "type": "task", "action": "noop"},
            append("after", "log", "['x']"),
            {"id": "boom", "type": "fail", "error": "no"},
            {"id": "join", "type": "gather", "slots": ["ok"]},
            END,
        ],
        [
            edge("start", "split"),
            edge("split", "slow", branch="ok"),
            edge("split", "boom", branch="bad"),
            edge("slow", "after"),
            edge("after", "join", slot="ok"),
            edge("join", "done"),
        ],
        {"log": "append"},
    )
    driver = Driver(document)
    assert driver.state.status is RunStatus.FAILED
    assert painted(driver) == {
        "start": "completed",
        "split": "completed",
        "slow": "cancelled",
        "after": "skipped",
        "boom": "failed",
        "join": "skipped",
        "done": "skipped",
    }


def test_a_live_loop_shows_older_iterations_rows_as_pending() -> None:
    document = flow(
        [
            START,
            {"id": "rounds", "type": "loop", "while": "true", "max_iterations": 3},
            {"id": "first", "type": "task", "action": "noop"},
            {"id": "second", "type": "task", "action": "noop"},
            END,
        ],
        [
            edge("start", "rounds"),
            edge("rounds", "first", outcome="body"),
            edge("first", "second"),
            edge("second", "rounds"),
            edge("rounds", "done", outcome="done"),
        ],
    )
    driver = Driver(document)
    driver.complete(next(iter(driver.actions)))  # iteration 1: first
    driver.complete(next(iter(driver.actions)))  # iteration 1: second
    assert driver.row_table()["second"][:2] == ("completed", "root:1:rounds:1")
    assert painted(driver) == {
        "start": "completed",
        "rounds": "running",
        "first": "running",
        "second": "pending",
        "done": "pending",
    }
