"""The execution tree and the per-execution views, from the trace (engine/core/executions.py)."""

import json
import random
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.core.colors import Color, cancel_time, explain, votes_from
from engine.core.events import Cancel
from engine.core.executions import executions, explain_execution, trace_rows
from tests.core.harness import Driver, edge, flow
from tests.core.test_colors__table import approval_loop
from tests.core.test_colors__walks import DEMOS, driver_for, step_randomly
from tests.core.test_scheduler__order import generated_flows

DEMO = Path(__file__).resolve().parents[2] / "designer" / "demo_flows"
START, END = {"id": "start", "type": "start"}, {"id": "done", "type": "end"}
LINES = [{"id": "a", "amount": 5}, {"id": "b", "amount": 50000}, {"id": "c", "amount": 60000}]


def demo(name: str) -> dict[str, Any]:
    document: dict[str, Any] = json.loads((DEMO / f"{name}.json").read_text())
    return document


def tree(driver: Driver) -> dict[str, tuple[str, str, str, str]]:
    """Return each execution as (kind, owner, label, status)."""
    found = executions(driver.trace, driver.state.status, driver.state.error or "")
    return {e.id: (e.kind.value, e.owner, e.label, e.status.value) for e in found}


def view(driver: Driver, focus: str) -> dict[str, tuple[str, str]]:
    """Return (color, reason) per node path as it stood in one execution."""
    status, ended = driver.state.status, driver.state.error or ""
    found = explain_execution(driver.graphs, driver.trace, status, focus, ended)
    return {path: (v.color.value, v.reason) for path, v in found.items()}


def test_items_are_listed_with_what_became_of_each_while_the_run_waits() -> None:
    driver = Driver(demo("batch-line-approval"), {"lines": LINES})
    driver.settle()
    assert tree(driver) == {
        "root:1": ("root", "", "run", "waiting"),
        "root:1:lines:1": ("item", "lines", "1", "completed"),
        "root:1:lines:2": ("item", "lines", "2", "waiting"),
        "root:1:lines:3": ("item", "lines", "3", "waiting"),
    }


def test_an_items_view_skips_the_branch_it_did_not_take_while_the_run_waits() -> None:
    driver = Driver(demo("batch-line-approval"), {"lines": LINES})
    driver.settle()
    seen = view(driver, "root:1:lines:1")
    assert seen["big"] == ("completed", "Completed: chose `false`")
    assert seen["small"] == ("completed", "Completed")
    assert seen["review"] == ("skipped", "Not taken: `big` chose `false`")
    assert seen["ok"] == ("skipped", "Not taken: `big` chose `false`")
    assert seen["done"] == ("pending", "Pending: `lines` is running")
    waiting = view(driver, "root:1:lines:2")
    assert waiting["review"] == ("waiting", "Waiting for a decision by finance")
    assert waiting["small"] == ("skipped", "Not taken: `big` chose `true`")
    assert waiting["ok"] == ("pending", "Pending: `review` is waiting")


def test_a_cancel_ends_the_waiting_items_and_keeps_the_finished_one() -> None:
    driver = Driver(demo("batch-line-approval"), {"lines": LINES})
    driver.settle()
    driver.send(Cancel(at="2026-12-06T09:30:00Z", by="admin", reason="duplicate batch"))
    assert tree(driver) == {
        "root:1": ("root", "", "run", "cancelled"),
        "root:1:lines:1": ("item", "lines", "1", "completed"),
        "root:1:lines:2": ("item", "lines", "2", "cancelled"),
        "root:1:lines:3": ("item", "lines", "3", "cancelled"),
    }
    seen = view(driver, "root:1:lines:3")
    assert seen["review"] == (
        "cancelled",
        "Cancelled by admin at 09:30 UTC: duplicate batch (while waiting for finance)",
    )
    assert seen["ok"] == ("skipped", "Skipped: `review` was cancelled before reaching this")
    assert view(driver, "root:1:lines:1")["small"][0] == "completed"


def test_branches_whose_gather_fired_are_completed_while_the_run_waits() -> None:
    document = flow(
        [START, {"id": "split", "type": "fork", "branches": ["a", "b"]},
         {"id": "ta", "type": "task", "action": "noop"},
         {"id": "tb", "type": "task", "action": "noop"},
         {"id": "join", "type": "gather", "slots": ["a", "b"]},
         {"id": "ask", "type": "approval", "groups": ["legal"], "policy": "any", "title": "t"},
         END],
        [edge("start", "split"), edge("split", "ta", branch="a"),
         edge("split", "tb", branch="b"), edge("ta", "join", slot="a"),
         edge("tb", "join", slot="b"), edge("join", "ask"),
         edge("ask", "done", outcome="approved"), edge("ask", "done", outcome="rejected")],
    )  # fmt: skip
    driver = Driver(document)
    driver.settle()
    assert tree(driver) == {
        "root:1": ("root", "", "run", "waiting"),
        "root:1:split.a:1": ("branch", "split", "a", "completed"),
        "root:1:split.b:1": ("branch", "split", "b", "completed"),
    }


def test_a_finished_subflow_call_is_completed_while_its_caller_waits() -> None:
    driver = Driver(
        demo("vendor-payment"),
        {"amount": 20000, "new_vendor": True, "vendor": "ACME"},
        subflows={"a-risk-score@latest": demo("a-risk-score")},
    )
    driver.settle()
    assert tree(driver) == {
        "root:1": ("root", "", "run", "waiting"),
        "root:1:assess:1": ("subflow", "assess", "assess", "completed"),
    }


def test_a_race_loser_is_cancelled_and_its_view_keeps_what_it_did() -> None:
    driver = Driver(demo("approval-or-timeout"), {"item": "desk", "hours": 1})
    driver.fire(next(iter(driver.timers)))
    driver.settle()
    assert tree(driver) == {
        "root:1": ("root", "", "run", "completed"),
        "root:1:deadline.decision:1": ("branch", "deadline", "decision", "cancelled"),
        "root:1:deadline.timer:1": ("branch", "deadline", "timer", "completed"),
    }
    seen = view(driver, "root:1:deadline.decision:1")
    won = "race `deadline` was won by `timer`"
    assert seen["approve"] == ("cancelled", f"Cancelled: {won} while waiting for finance")
    assert seen["approved"] == ("skipped", f"Skipped: {won} before this started")
    assert seen["timer"] == ("completed", "Completed")


def test_rounds_of_a_loop_end_as_the_next_begins_and_the_last_with_the_loop() -> None:
    driver = Driver(approval_loop())
    driver.decide("ask", "dana", ("finance",), "approve")
    assert tree(driver)["root:1:lp:1"][3] == "completed"
    assert tree(driver)["root:1:lp:2"][3] == "waiting"
    driver.decide("ask", "dana", ("finance",), "approve")
    driver.decide("ask", "dana", ("finance",), "approve")
    assert driver.state.status.value == "failed"
    assert {k: v[3] for k, v in tree(driver).items()} == {
        "root:1": "failed",
        "root:1:lp:1": "completed",
        "root:1:lp:2": "completed",
        "root:1:lp:3": "completed",
    }
    assert view(driver, "root:1:lp:2")["ask"] == ("completed", "Approved by finance (dana)")


def assert_views_hold(driver: Driver) -> None:
    """The root's view is the aggregate one, and a finished run leaves nothing open."""
    status, ended = driver.state.status, driver.state.error or ""
    votes = votes_from(driver.trace)
    at = cancel_time(driver.trace)  # as the tree endpoint reads it (monitor/reading.py)
    whole = explain(driver.graphs, driver.rows, status, ended, votes=votes, cancelled_at=at)
    assert explain_execution(driver.graphs, driver.trace, status, "root:1", ended) == whole
    rows = trace_rows(driver.trace)
    assert explain(driver.graphs, rows, status, ended, votes=votes, cancelled_at=at) == whole
    found = executions(driver.trace, status, ended)
    if not status.finished:
        return
    still = {Color.PENDING, Color.RUNNING, Color.WAITING}
    assert [e.id for e in found if e.status in still] == []
    assert [p for p, v in whole.items() if v.color in still] == []
    for execution in found:
        seen = explain_execution(driver.graphs, driver.trace, status, execution.id, ended)
        assert [p for p, v in seen.items() if v.color in still] == [], execution.id


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(DEMOS), st.integers(0, 2**32 - 1), st.integers(3, 40))
def test_views_hold_on_every_step_of_demo_runs(
    case: tuple[str, dict[str, Any]], seed: int, steps: int
) -> None:
    rng = random.Random(seed)
    driver = driver_for(*case)
    for _ in range(steps):
        assert_views_hold(driver)
        if not step_randomly(driver, rng):
            break
    assert_views_hold(driver)


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(generated_flows(), st.integers(0, 2**32 - 1))
def test_views_hold_on_every_step_of_generated_runs(document: dict[str, Any], seed: int) -> None:
    rng = random.Random(seed)
    driver = Driver(document, {"items": [1, 2, 3]})
    for _ in range(30):
        assert_views_hold(driver)
        if not step_randomly(driver, rng):
            break
    assert_views_hold(driver)
