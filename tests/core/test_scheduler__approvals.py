"""Durable pause: parallel approvals, one approval per item, and approvals racing timers."""

import json
from pathlib import Path

import pytest

from tests.core.harness import Driver, append, edge, flow

DEMO = Path(__file__).resolve().parents[2] / "designer" / "demo_flows"
START, END = {"id": "start", "type": "start"}, {"id": "done", "type": "end"}
INVOICE = json.loads((DEMO / "invoice-sign-off.json").read_text())
BATCH = json.loads((DEMO / "batch-line-approval.json").read_text())
RACE = json.loads((DEMO / "approval-or-timeout.json").read_text())
INVOICE_INPUT = {"invoice": {"id": "INV-7", "amount": 1200, "vendor": "Acme"}}


@pytest.mark.parametrize("first", ["fin", "leg"])
def test_two_parallel_approvals_resumed_in_either_order_give_the_same_result(first: str) -> None:
    driver = Driver(INVOICE, INVOICE_INPUT)
    assert driver.status == "waiting"
    assert sorted(r.node for r in driver.approvals.values()) == ["fin", "leg"]
    assert driver.approvals[next(k for k in driver.approvals if "|fin|" in k)].title == (
        "Finance sign-off for INV-7"
    )
    people = {"fin": ("fiona", ("finance",)), "leg": ("leo", ("legal",))}
    for node in [first, "leg" if first == "fin" else "fin"]:
        user, groups = people[node]
        driver.decide(node, user, groups, "approve")
    assert driver.status == "completed"
    assert driver.result == {
        "invoice": INVOICE_INPUT["invoice"],
        "total": 1200,
        "log": ["finance approved", "legal approved"],
    }
    assert driver.row_table()["fin"] == ("completed", "root:1:split.finance:1", "approved", 1)
    assert driver.row_table()["both"] == (
        "completed",
        "root:1",
        '["root:1:split.finance:1", "root:1:split.legal:1"]',
        1,
    )


def test_an_approver_outside_the_groups_is_refused_and_changes_nothing() -> None:
    driver = Driver(INVOICE, INVOICE_INPUT)
    before = driver.row_table()
    driver.decide("fin", "leo", ("legal",), "approve")
    assert driver.refused[-1].reason == "leo is in none of the groups ['finance']"
    assert (driver.status, driver.row_table()) == ("waiting", before)


def test_one_rejection_fails_the_invoice_and_cancels_the_other_request() -> None:
    driver = Driver(INVOICE, INVOICE_INPUT)
    driver.decide("leg", "leo", ("legal",), "reject")
    assert (driver.status, driver.state.error) == ("failed", "Legal rejected the invoice")
    assert driver.approvals == {}
    assert [(c.key, c.reason) for c in driver.closed] == [
        ("run|leg|root:1:split.legal:1|approval", "rejected"),
        ("run|fin|root:1:split.finance:1|approval", "Legal rejected the invoice"),
    ]


def test_each_line_over_the_limit_waits_for_its_own_approval_and_resumes_independently() -> None:
    lines = [{"id": f"L{n}", "amount": 20000 if n % 2 else 10} for n in range(1, 7)]
    driver = Driver(BATCH, {"lines": lines})
    waiting = sorted(r.execution_id for r in driver.approvals.values())
    assert waiting == ["root:1:lines:1", "root:1:lines:3", "root:1:lines:5"]
    assert driver.status == "waiting"
    driver.decide("review", "fiona", ("finance",), "approve", "root:1:lines:5")
    driver.decide("review", "fiona", ("finance",), "reject", "root:1:lines:1")
    assert driver.status == "waiting"
    driver.decide("review", "fiona", ("finance",), "approve", "root:1:lines:3")
    assert driver.status == "completed"
    assert driver.result == {"approved": ["L3", "L5"], "auto": ["L2", "L4", "L6"], "errors": []}


def test_in_a_race_the_timer_wins_and_the_approval_is_cancelled() -> None:
    driver = Driver(RACE, {"item": "laptop", "hours": 1})
    (timer,) = driver.timers
    driver.fire(timer)
    assert driver.status == "completed"
    assert driver.result == {"outcome": "escalated: no decision in time", "decision": None}
    assert driver.approvals == {}
    assert driver.row_table()["deadline"] == ("completed", "root:1", "timer", 1)
    assert driver.row_table()["approve"] == ("waiting", "root:1:deadline.decision:1", None, 1)


def test_in_a_race_the_decision_wins_and_the_timer_is_cancelled() -> None:
    driver = Driver(RACE, {"item": "laptop", "hours": 1})
    (timer,) = driver.timers
    driver.decide("approve", "fiona", ("finance",), "approve")
    assert driver.status == "completed"
    assert driver.result == {"outcome": "decided: approved", "decision": "approved"}
    assert driver.cancelled_timers == [timer]
    assert driver.timers == {}
    assert driver.row_table()["timer"] == ("waiting", "root:1:deadline.timer:1", None, 1)


def test_quorum_needs_that_many_distinct_approvers() -> None:
    document = flow(
        [
            START,
            {"id": "vote", "type": "approval", "groups": ["board"], "policy": {"quorum": 2}},
            append("yes", "log", "['yes']"),
            END,
        ],
        [edge("start", "vote"), edge("vote", "yes", outcome="approved"), edge("yes", "done")],
        {"log": "append"},
    )
    driver = Driver(document)
    driver.decide("vote", "ann", ("board",), "approve")
    driver.decide("vote", "ann", ("board",), "approve")
    assert driver.refused[-1].reason == "ann has already decided"
    assert driver.status == "waiting"
    driver.decide("vote", "bob", ("board",), "approve")
    assert (driver.status, driver.result) == ("completed", {"log": ["yes"]})


def test_abort_fails_a_waiting_run_and_closes_its_requests() -> None:
    from engine.core.events import CloseApproval, RunFinished
    from engine.core.scheduler import abort

    driver = Driver(INVOICE, INVOICE_INPUT)
    state, commands = abort(driver.state, "2026-01-02T00:00:00Z", "internal error: boom")
    assert (state.status.value, state.error, state.frames) == ("failed", "internal error: boom", {})
    assert sorted(c.key for c in commands if isinstance(c, CloseApproval)) == [
        "run|fin|root:1:split.finance:1|approval",
        "run|leg|root:1:split.legal:1|approval",
    ]
    assert [c.status.value for c in commands if isinstance(c, RunFinished)] == ["failed"]
    assert abort(state, "2026-01-02T00:00:01Z", "again") == (state, [])
