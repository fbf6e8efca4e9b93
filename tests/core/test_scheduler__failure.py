"""Failure cleanup: siblings cancelled, late commits refused, tokens gone, the run failed."""

import json
from typing import Any

import pytest

from engine.core import expression_limits
from engine.core.actions import ActionFunction, ActionRegistry
from engine.core.events import ActionCompleted, ActionFailed, RunAction
from engine.core.runtime import perform
from tests.core.harness import Driver, append, edge, flow

START, END = {"id": "start", "type": "start"}, {"id": "done", "type": "end"}

FAILING_BRANCH = flow(
    [
        START,
        {"id": "split", "type": "fork", "branches": ["slow", "bad", "parked"]},
        {
            "id": "slow",
            "type": "task",
            "action": "noop",
            "params": {"value": ["late"]},
            "output": "log",
        },
        {
            "id": "bad",
            "type": "task",
            "action": "flaky",
            "params": {"succeed_on": 9},
            "output": "log",
        },
        append("parked", "log", "['parked']"),
        {"id": "join", "type": "gather", "slots": ["slow", "bad", "parked"]},
        END,
    ],
    [
        edge("start", "split"),
        edge("split", "slow", branch="slow"),
        edge("split", "bad", branch="bad"),
        edge("split", "parked", branch="parked"),
        edge("slow", "join", slot="slow"),
        edge("bad", "join", slot="bad"),
        edge("parked", "join", slot="parked"),
        edge("join", "done"),
    ],
    {"log": "append"},
)


def test_a_failed_branch_fails_the_run_and_refuses_the_siblings_late_commit() -> None:
    driver = Driver(FAILING_BRANCH)
    slow = next(k for k in driver.actions if "|slow|" in k)
    bad = next(k for k in driver.actions if "|bad|" in k)
    assert driver.state.gathers["1/join"].filled("root:1") == ["parked"]
    driver.complete(bad)
    assert driver.status == "failed"
    assert driver.state.error == "flaky failed after 1 attempt(s): attempt 1 failed"
    assert driver.state.gathers["1/join"].buckets == {}
    assert driver.state.frames == {}
    assert all(
        lineage.abandoned for lineage in driver.state.lineages.all.values() if lineage.parent
    )
    rows_before = driver.row_table()
    late = driver.send(ActionCompleted(at=driver.now(), key=slow, output=["late"]))
    assert [c.to_json() for c in late] == [
        {"kind": "refused", "event": "action.completed", "reason": "the run is failed"}
    ]
    assert driver.row_table() == rows_before
    assert rows_before["slow"] == ("running", "root:1:split.slow:1", None, 1)
    assert rows_before["bad"] == ("failed", "root:1:split.bad:1", "attempt 1 failed", 1)
    cancelled = [e.node for e in driver.trace if e.event == "frame.cancelled"]
    assert cancelled == ["slow"]


def items_flow(policy: str) -> dict[str, Any]:
    """A foreach whose odd items fail."""
    return flow(
        [
            START,
            {
                "id": "each",
                "type": "foreach",
                "items": "input.items",
                "as": "item",
                "concurrency": 2,
                "on_item_failure": policy,
                "errors": "errors",
            },
            {"id": "odd", "type": "if", "condition": "item % 2 == 1"},
            {"id": "boom", "type": "fail", "error": "odd item"},
            append("keep", "kept", "[item]"),
            END,
        ],
        [
            edge("start", "each"),
            edge("each", "odd", outcome="item"),
            edge("odd", "boom", outcome="true"),
            edge("odd", "keep", outcome="false"),
            edge("keep", "each"),
            edge("each", "done", outcome="done"),
        ],
        {"kept": "append", "errors": "append"},
    )


def test_skip_drops_the_failed_items_writes_and_goes_on() -> None:
    driver = Driver(items_flow("skip"), {"items": [2, 3, 4, 5]})
    assert (driver.status, driver.result) == ("completed", {"kept": [2, 4], "errors": []})
    assert driver.row_table()["each"] == ("completed", "root:1", {"items": 4, "failed": 2}, 1)


def test_collect_records_index_item_and_error_of_each_failure() -> None:
    driver = Driver(items_flow("collect"), {"items": [2, 3, 4, 5]})
    assert driver.status == "completed"
    assert driver.result == {
        "kept": [2, 4],
        "errors": [
            {"index": 1, "item": 3, "error": "odd item"},
            {"index": 3, "item": 5, "error": "odd item"},
        ],
    }


def test_fail_policy_fails_the_foreach_and_the_run_on_the_first_failure() -> None:
    driver = Driver(items_flow("fail"), {"items": [2, 3, 4, 5]})
    assert (driver.status, driver.state.error) == ("failed", "odd item")
    assert driver.row_table()["each"][0] == "failed"
    assert driver.row_table()["boom"] == ("failed", "root:1:each:2", "odd item", 1)


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ("1 / 0", "node `calc` values.total: `1 / 0` failed: division by zero in CEL expression"),
        ("'text'", "cannot write state field 'total': sum takes a number, not str"),
    ],
)
def test_a_bad_expression_or_value_fails_the_node_with_a_clear_cause(
    expression: str, message: str
) -> None:
    document = flow(
        [START, {"id": "calc", "type": "set", "values": {"total": expression}}, END],
        [edge("start", "calc"), edge("calc", "done")],
        {"total": "sum"},
    )
    driver = Driver(document)
    assert driver.status == "failed"
    assert driver.state.error is not None and driver.state.error.startswith(message)
    assert driver.row_table()["calc"][0] == "failed"


def test_a_retried_task_records_each_attempt_and_completes_on_the_third() -> None:
    document = flow(
        [
            START,
            {
                "id": "call",
                "type": "task",
                "action": "flaky",
                "params": {"succeed_on": 3},
                "output": "out",
                "retry": {"max_attempts": 3, "backoff_s": 10},
            },
            END,
        ],
        [edge("start", "call"), edge("call", "done")],
        {"out": "overwrite"},
    )
    driver = Driver(document)
    driver.settle()
    assert driver.status == "completed"
    assert driver.row_table()["call"] == ("completed", "root:1", None, 3)
    events = [(e.event, e.detail.get("attempt")) for e in driver.trace if e.node == "call"]
    assert events == [
        ("action.dispatched", 1),
        ("action.failed", 1),
        ("action.retry_scheduled", 2),
        ("action.dispatched", 2),
        ("action.failed", 2),
        ("action.retry_scheduled", 3),
        ("action.dispatched", 3),
        ("action.completed", 3),
        ("node.completed", None),
    ]
    assert 10 <= driver.seconds < 30  # backoff 10 s then 20 s, each jittered to 50-100 %


def test_a_task_that_times_out_fails_and_its_late_result_is_refused() -> None:
    document = flow(
        [START, {"id": "call", "type": "task", "action": "noop", "timeout_s": 5}, END],
        [edge("start", "call"), edge("call", "done")],
    )
    driver = Driver(document)
    key = next(iter(driver.actions))
    driver.fire(f"{key}|timeout")
    assert (driver.status, driver.state.error) == (
        "failed",
        "noop failed after 1 attempt(s): timed out after 5 s",
    )
    driver.complete(key)
    assert driver.refused[-1].reason == "the run is failed"


def test_a_foreach_over_more_items_than_the_limit_fails_before_admitting_any() -> None:
    previous = expression_limits.limits()
    expression_limits.configure(max_foreach_items=4)
    try:
        at_limit = Driver(items_flow("skip"), {"items": [2, 4, 6, 8]})
        over = Driver(items_flow("skip"), {"items": [2, 4, 6, 8, 10]})
    finally:
        expression_limits.configure(max_foreach_items=previous.max_foreach_items)
    assert (at_limit.status, at_limit.result) == ("completed", {"kept": [2, 4, 6, 8], "errors": []})
    assert (over.status, over.state.error) == (
        "failed",
        "items: 5 items; a foreach takes at most 4 (BRAID_FOREACH_MAX_ITEMS)",
    )
    assert over.row_table()["each"][0] == "failed"
    assert [e for e in over.trace if e.event == "item.started"] == []


def test_a_value_nested_deeper_than_the_limit_fails_the_node_that_writes_it() -> None:
    document = flow(
        [START, {"id": "wrap", "type": "set", "values": {"x": "[[[input.x]]]"}}, END],
        [edge("start", "wrap"), edge("wrap", "done")],
        {"x": "overwrite"},
    )
    previous = expression_limits.limits()
    expression_limits.configure(max_value_depth=4)
    try:
        fits = Driver(document, {"x": [1]})
        deep = Driver(document, {"x": [[1]]})
    finally:
        expression_limits.configure(max_value_depth=previous.max_value_depth)
    assert (fits.status, fits.result) == ("completed", {"x": [[[[1]]]]})
    message = "cannot write state field 'x': the value nests deeper than 4 levels " \
        "(BRAID_VALUE_MAX_DEPTH)"  # fmt: skip
    assert (deep.status, deep.state.error) == ("failed", message)
    assert deep.row_table()["wrap"] == ("failed", "root:1", message, 1)


def test_an_action_output_nested_deeper_than_the_limit_fails_the_action() -> None:
    registry = ActionRegistry()
    registry.register("deep")(lambda params, context: json.loads("[" * 101 + "]" * 101))
    registry.register("fits")(lambda params, context: json.loads("[" * 100 + "]" * 100))
    events = [
        perform(registry, RunAction(key="k", action=name, params={}, node="n",
                                    execution_id="root:1", attempt=1), "run", lambda: "t")
        for name in ("deep", "fits")
    ]  # fmt: skip
    assert events[0] == ActionFailed(
        at="t", key="k", error="the output nests deeper than 100 levels (BRAID_VALUE_MAX_DEPTH)"
    )
    assert isinstance(events[1], ActionCompleted)


def returning(output: Any) -> ActionFunction:
    """Return an action giving `output`, whatever it is (JSON or not)."""
    return lambda params, context: output


def test_an_action_output_json_cannot_hold_fails_the_action_saying_where() -> None:
    outputs: dict[str, Any] = {  # values JSON cannot hold, on purpose
        "nan": {"rate": [1.0, float("nan")]},
        "infinite": float("-inf"),
        "tuple": {"pair": (1, 2)},
        "key": {"ok": {3: "three"}},
        "fine": {"rate": [1.5, None, True, "x", {"n": 2}]},
    }
    registry = ActionRegistry()
    for name, output in outputs.items():
        registry.register(name)(returning(output))
    events = {
        name: perform(registry, RunAction(key="k", action=name, params={}, node="n",
                                          execution_id="root:1", attempt=1), "run", lambda: "t")
        for name in outputs
    }  # fmt: skip
    assert {name: getattr(event, "error", None) for name, event in events.items()} == {
        "nan": "the output.rate[1] is nan, which JSON cannot hold",
        "infinite": "the output is -inf, which JSON cannot hold",
        "tuple": "the output.pair is a tuple; JSON holds lists, objects, strings, numbers, "
        "booleans, null",
        "key": "the output.ok has the key 3; JSON object keys are strings",
        "fine": None,
    }
    assert events["fine"] == ActionCompleted(at="t", key="k", output=outputs["fine"])
