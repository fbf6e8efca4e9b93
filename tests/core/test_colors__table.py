"""One test per row of the derivation table in docs/monitor-states.md: color and reason."""

import itertools
import json
from pathlib import Path
from typing import Any

import pytest

from engine.core.colors import explain, explain_node, votes_from
from engine.core.events import ActionFailed, ApprovalDecided, Cancel, Decision
from tests.core.harness import Driver, edge, flow

DEMO = Path(__file__).resolve().parents[2] / "designer" / "demo_flows"
START, END = {"id": "start", "type": "start"}, {"id": "done", "type": "end"}
TASK = {"type": "task", "action": "noop"}


def demo(name: str) -> dict[str, Any]:
    document: dict[str, Any] = json.loads((DEMO / f"{name}.json").read_text())
    return document


def verdicts(driver: Driver) -> dict[str, tuple[str, str]]:
    """Return (color, reason) per node path, checking the leaf → root walk agrees."""
    status, ended = driver.state.status, driver.state.error or ""
    whole = explain(driver.graphs, driver.rows, status, ended)
    for path, verdict in whole.items():
        assert explain_node(driver.graphs, driver.rows, status, path, ended) == verdict
    return {path: (v.color.value, v.reason) for path, v in whole.items()}


def chain(*ids: str) -> dict[str, Any]:
    """start → tasks … → done."""
    nodes = [START, *({"id": node_id, **TASK} for node_id in ids), END]
    names = ["start", *ids, "done"]
    return flow(nodes, [edge(a, b) for a, b in itertools.pairwise(names)])


def check_flow() -> dict[str, Any]:
    """start → check (if) → yes | no → done."""
    return flow(
        [START, {"id": "check", "type": "if", "condition": "input.go"},
         {"id": "yes", **TASK}, {"id": "no", **TASK}, END],
        [edge("start", "check"), edge("check", "yes", outcome="true"),
         edge("check", "no", outcome="false"), edge("yes", "done"), edge("no", "done")],
    )  # fmt: skip


def test_row_1_a_row_of_the_live_execution_shows_its_status() -> None:
    driver = Driver(chain("charge"))
    driver.run_actions()
    assert verdicts(driver)["charge"] == ("completed", "Completed")


def test_row_2_a_running_row_is_running_with_what_it_does() -> None:
    assert verdicts(Driver(chain("charge")))["charge"] == (
        "running", "Running: its action is in flight",
    )  # fmt: skip


def test_row_3_an_approval_waits_for_its_groups() -> None:
    driver = Driver(demo("invoice-sign-off"), {"invoice": {"id": "I", "amount": 5, "vendor": "V"}})
    assert verdicts(driver)["fin"] == ("waiting", "Waiting for a decision by finance")


def test_row_4_a_wait_waits_for_its_timer() -> None:
    driver = Driver(demo("approval-or-timeout"), {"item": "desk", "hours": 1})
    assert verdicts(driver)["timer"] == ("waiting", "Waiting for its timer")


def test_row_5_a_failed_row_shows_the_failure() -> None:
    driver = Driver(chain("charge"))
    key = next(iter(driver.actions))
    driver.actions.pop(key)
    driver.send(ActionFailed(at=driver.now(), key=key, error="card declined"))
    assert verdicts(driver)["charge"] == ("failed", "Failed: card declined")


def test_row_6_a_row_left_waiting_by_a_cancelled_run_is_cancelled() -> None:
    driver = Driver(demo("invoice-sign-off"), {"invoice": {"id": "I", "amount": 5, "vendor": "V"}})
    driver.send(Cancel(at=driver.now(), by="admin", reason="duplicate invoice"))
    assert verdicts(driver)["fin"] == (
        "cancelled",
        "Cancelled by admin (duplicate invoice) while waiting for finance",
    )


def test_row_7_a_row_left_running_by_a_failed_sibling_is_cancelled() -> None:
    document = flow(
        [START, {"id": "split", "type": "fork", "branches": ["ok", "bad"]},
         {"id": "slow", **TASK}, {"id": "boom", "type": "fail", "error": "no budget"},
         {"id": "join", "type": "gather", "slots": ["ok"]}, END],
        [edge("start", "split"), edge("split", "slow", branch="ok"),
         edge("split", "boom", branch="bad"), edge("slow", "join", slot="ok"),
         edge("join", "done")],
    )  # fmt: skip
    seen = verdicts(Driver(document))
    assert seen["slow"] == ("cancelled", "Cancelled: `boom` failed while running")
    assert seen["boom"] == ("failed", "Failed: no budget")
    assert seen["join"] == ("skipped", "Skipped: `slow` was cancelled before reaching this")


def test_row_8_a_node_not_reached_in_a_live_run_is_pending() -> None:
    assert verdicts(Driver(chain("charge", "ship")))["ship"] == (
        "pending", "Pending: `charge` is running",
    )  # fmt: skip


def test_row_9_a_node_a_finished_run_never_reached_is_skipped() -> None:
    driver = Driver(chain("charge", "ship"))
    driver.send(Cancel(at=driver.now(), by="admin", reason=""))
    seen = verdicts(driver)
    assert seen["charge"] == ("cancelled", "Cancelled by admin while running")
    assert seen["ship"] == ("skipped", "Skipped: `charge` was cancelled before reaching this")


def loop_flow() -> dict[str, Any]:
    return flow(
        [START, {"id": "review", "type": "loop", "while": "true", "max_iterations": 5},
         {"id": "draft", **TASK}, {"id": "check", **TASK}, END],
        [edge("start", "review"), edge("review", "draft", outcome="body"),
         edge("draft", "check"), edge("check", "review"), edge("review", "done", outcome="done")],
    )  # fmt: skip


def test_row_10_a_row_of_an_older_iteration_under_a_live_loop_is_pending() -> None:
    driver = Driver(loop_flow())
    for _ in range(4):  # iterations 1 and 2 complete, iteration 3 drafts
        driver.complete(next(iter(driver.actions)))
    seen = verdicts(driver)
    assert seen["draft"] == ("running", "Running: its action is in flight")
    assert seen["check"] == (
        "pending", "Pending: loop `review` is in round 3; this last ran in round 2",
    )  # fmt: skip


def test_row_11_the_outcome_a_decision_did_not_take_is_skipped() -> None:
    driver = Driver(check_flow(), {"go": False})
    driver.run_actions()
    seen = verdicts(driver)
    assert seen["yes"] == ("skipped", "Not taken: `check` chose `false`")
    assert seen["no"] == ("completed", "Completed")


def test_row_12_a_race_losers_branch_keeps_what_it_did() -> None:
    driver = Driver(demo("approval-or-timeout"), {"item": "desk", "hours": 1})
    driver.fire(next(iter(driver.timers)))
    seen = verdicts(driver)
    assert seen["approve"] == (
        "cancelled", "Cancelled: race `deadline` was won by `timer` while waiting for finance",
    )  # fmt: skip
    assert seen["approved"] == (
        "skipped", "Skipped: race `deadline` was won by `timer` before this started",
    )  # fmt: skip
    assert seen["decided"] == ("skipped", "Not taken: `deadline` chose `timer`")


def test_row_13_downstream_of_a_failure_is_skipped() -> None:
    driver = Driver(chain("charge", "ship"))
    key = next(iter(driver.actions))
    driver.actions.pop(key)
    driver.send(ActionFailed(at=driver.now(), key=key, error="declined"))
    assert verdicts(driver)["ship"] == ("skipped", "Skipped: `charge` failed before reaching this")


def test_row_14_a_paint_keeps_the_reason_of_the_node_that_decided_it() -> None:
    driver = Driver(check_flow(), {"go": True})
    document_seen = verdicts(driver)
    assert document_seen["no"] == ("skipped", "Not taken: `check` chose `true`")
    assert document_seen["done"] == ("pending", "Pending: `yes` is running")


def test_row_15_a_foreach_body_no_item_reached_names_the_foreach() -> None:
    lines = [{"id": "a", "amount": 5}, {"id": "b", "amount": 7}]
    driver = Driver(demo("batch-line-approval"), {"lines": lines})
    driver.settle()
    seen = verdicts(driver)
    assert seen["review"] == ("skipped", "Skipped: no item of foreach `lines` reached this")
    assert seen["small"][0] == "completed"


def test_row_16_a_loop_that_ran_no_iteration_skips_its_body() -> None:
    document = loop_flow()
    document["nodes"][1]["while"] = "false"
    driver = Driver(document)
    seen = verdicts(driver)
    assert seen["draft"] == ("skipped", "Skipped: loop `review` ran no round")
    assert seen["done"][0] == "completed"


def test_row_17_a_subflow_not_reached_paints_its_nodes_with_its_reason() -> None:
    driver = Driver(
        demo("vendor-payment") | {"nodes": [START, *demo("vendor-payment")["nodes"][1:]]},
        {"amount": 1, "new_vendor": False, "vendor": "V"},
        subflows={"a-risk-score@latest": demo("a-risk-score")},
    )
    driver.settle()
    seen = verdicts(driver)
    assert seen["assess/score"] == ("completed", "Completed")
    assert seen["review"] == ("skipped", "Not taken: `risky` chose `false`")


def test_row_18_a_gather_shows_the_row_of_its_continuation() -> None:
    driver = Driver(demo("staged-gathers"))
    seen = verdicts(driver)
    assert seen["ab"] == ("completed", "Completed")
    assert seen["c_done"] == ("pending", "Pending: `c` is running")
    assert seen["dc"] == ("pending", "Pending: not reached yet")


def test_a_path_that_is_no_node_has_no_verdict() -> None:
    driver = Driver(chain("charge"))
    status = driver.state.status
    assert explain_node(driver.graphs, driver.rows, status, "nowhere") is None
    assert explain_node(driver.graphs, driver.rows, status, "charge/inner") is None


@pytest.mark.parametrize("size", [1, 50])
def test_the_walk_colors_every_node_of_a_long_chain(size: int) -> None:
    ids = [f"t{i}" for i in range(size)]
    seen = verdicts(Driver(chain(*ids)))
    assert len(seen) == size + 2
    assert all(
        color == "running" or color == "pending" or path == "start"
        for path, (color, _) in seen.items()
    )


def test_row_19_a_failed_foreach_item_fails_and_its_running_siblings_are_cancelled() -> None:
    document = flow(
        [START, {"id": "each", "type": "foreach", "items": "input.items", "as": "item",
                 "concurrency": 3},
         {"id": "bad", "type": "if", "condition": "item == 2"},
         {"id": "boom", "type": "fail", "error": "item two is bad"},
         {"id": "work", **TASK}, END],
        [edge("start", "each"), edge("each", "bad", outcome="item"),
         edge("bad", "boom", outcome="true"), edge("bad", "work", outcome="false"),
         edge("work", "each"), edge("each", "done", outcome="done")],
    )  # fmt: skip
    driver = Driver(document, {"items": [1, 2, 3]})
    seen = verdicts(driver)
    assert driver.state.status.value == "failed"
    assert seen["each"][0] == "failed"
    assert seen["boom"] == ("failed", "Failed: item two is bad")
    assert seen["work"] == ("cancelled", "Cancelled: `boom` failed while running")
    assert seen["done"] == ("skipped", "Skipped: `each` failed before reaching this")


def lines_flow_cancelled() -> Driver:
    """batch-line-approval: item 1 auto-approved, items 2 and 3 wait for finance; cancel."""
    lines = [{"id": "a", "amount": 5}, {"id": "b", "amount": 50000}, {"id": "c", "amount": 60000}]
    driver = Driver(demo("batch-line-approval"), {"lines": lines})
    driver.settle()
    driver.send(Cancel(at=driver.now(), by="admin", reason="duplicate batch"))
    return driver


def test_row_20_a_cancel_inside_a_foreach_leaves_its_body_the_truth_of_its_rows() -> None:
    seen = verdicts(lines_flow_cancelled())
    assert seen["lines"] == (
        "cancelled",
        "Cancelled by admin (duplicate batch) while running",
    )
    assert seen["small"] == ("completed", "Completed")
    assert seen["big"] == ("completed", "Completed: chose `true`")
    assert seen["review"] == (
        "cancelled",
        "Cancelled by admin (duplicate batch) while waiting for finance",
    )
    assert seen["ok"] == ("skipped", "Skipped: no item of foreach `lines` reached this")
    assert seen["done"] == ("skipped", "Skipped: `lines` was cancelled before reaching this")


def approval_loop(max_iterations: int = 3) -> dict[str, Any]:
    """A loop whose body counts, then waits for finance, while `true`."""
    return flow(
        [START, {"id": "lp", "type": "loop", "while": "true", "max_iterations": max_iterations},
         {"id": "count", "type": "set", "values": {"n": "state.n + 1"}},
         {"id": "ask", "type": "approval", "groups": ["finance"], "policy": "any", "title": "t"},
         END],
        [edge("start", "lp"), edge("lp", "count", outcome="body"), edge("count", "ask"),
         edge("ask", "lp", outcome="approved"), edge("ask", "lp", outcome="rejected"),
         edge("lp", "done", outcome="done")],
        {"n": "sum"},
    )  # fmt: skip


def test_row_21_a_cancel_inside_a_loop_keeps_the_rounds_writes_and_cancels_its_wait() -> None:
    driver = Driver(approval_loop())
    driver.decide("ask", "dana", ("finance",), "approve")
    driver.send(Cancel(at=driver.now(), by="admin", reason=""))
    seen = verdicts(driver)
    assert seen["count"] == ("completed", "Completed")
    assert seen["ask"] == (
        "cancelled", "Cancelled by admin while waiting for finance",
    )  # fmt: skip
    assert seen["done"] == ("skipped", "Skipped: `lp` was cancelled before reaching this")


def test_row_22_a_loop_that_fails_at_its_limit_shows_the_body_it_ran() -> None:
    driver = Driver(approval_loop())
    for _ in range(3):
        driver.decide("ask", "dana", ("finance",), "approve")
    seen = verdicts(driver)
    assert driver.state.status.value == "failed"
    assert seen["lp"][0] == "failed"
    assert seen["count"] == ("completed", "Completed")
    assert seen["ask"] == ("completed", "Approved")
    assert seen["done"] == ("skipped", "Skipped: `lp` failed before reaching this")


def test_row_23_a_race_losers_finished_node_stays_completed() -> None:
    document = flow(
        [START, {"id": "race", "type": "race", "branches": ["fast", "slow"]},
         {"id": "quick", **TASK}, {"id": "prep", **TASK}, {"id": "ask", "type": "approval",
          "groups": ["legal"], "policy": "any", "title": "t"},
         {"id": "after", **TASK}, END],
        [edge("start", "race"), edge("race", "quick", branch="fast"),
         edge("race", "prep", branch="slow"), edge("prep", "ask"),
         edge("ask", "after", outcome="approved"), edge("ask", "race", outcome="rejected"),
         edge("after", "race"), edge("quick", "race"), edge("race", "done")],
    )  # fmt: skip
    driver = Driver(document)
    prep = next(k for k, a in driver.actions.items() if a.node == "prep")
    driver.complete(prep)  # the slow branch prepares, then waits for legal
    driver.run_actions()  # the fast branch returns first and wins
    seen = verdicts(driver)
    assert driver.state.status.value == "completed"
    assert seen["prep"] == ("completed", "Completed")
    won = "race `race` was won by `fast`"
    assert seen["ask"] == ("cancelled", f"Cancelled: {won} while waiting for legal")
    assert seen["after"] == ("skipped", f"Skipped: {won} before this started")
    assert seen["quick"] == ("completed", "Completed")


def test_row_24_a_decided_approval_names_who_decided_and_what_they_said() -> None:
    driver = Driver(approval_loop(max_iterations=1))
    driver.send(
        ApprovalDecided(at=driver.now(), key=next(iter(driver.approvals)), user="dana",
                        groups=("finance",), decision=Decision.APPROVE, comment="fine")
    )  # fmt: skip
    status, ended = driver.state.status, driver.state.error or ""
    seen = explain(driver.graphs, driver.rows, status, ended, votes=votes_from(driver.trace))
    assert seen["ask"].reason == 'Approved by finance (dana): "fine"'
    assert verdicts(driver)["ask"] == ("completed", "Approved")  # without the votes
