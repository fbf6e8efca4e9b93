"""The state writes that reach a node, rebuilt from the trace (engine/core/history.py)."""

from typing import Any

from engine.core.history import lineage_writes
from tests.core.harness import Driver, append, edge, flow
from tests.core.test_scheduler__gathers import STAGED

START, END = {"id": "start", "type": "start"}, {"id": "done", "type": "end"}


def seen(driver: Driver, path: str, execution_id: str | None = None) -> list[tuple[Any, ...]]:
    """Return (node, field, value, via) of each write that reached the node."""
    writes = lineage_writes(driver.trace, path, execution_id)
    assert writes is not None
    return [(w.node, w.field, w.value, w.via) for w in writes]


def test_a_chain_node_sees_the_writes_before_it_and_its_own_not_those_after() -> None:
    driver = Driver(flow(
        [START, append("one", "log", "['1']"), append("two", "log", "['2']"),
         append("three", "log", "['3']"), END],
        [edge("start", "one"), edge("one", "two"), edge("two", "three"), edge("three", "done")],
        {"log": "append"},
    ))  # fmt: skip
    assert seen(driver, "two") == [("one", "log", '["1"]', None), ("two", "log", '["2"]', None)]
    assert [w.seq for w in lineage_writes(driver.trace, "done") or []] == [
        next(i for i, e in enumerate(driver.trace) if e.node == n and e.event == "node.completed")
        for n in ("one", "two", "three")
    ]


def test_staged_gathers_bring_each_branch_in_through_the_gather_that_merged_it() -> None:
    driver = Driver(STAGED)
    driver.run_actions()
    assert driver.result == {"log": ["a", "b", "d", "c"]}
    assert seen(driver, "done") == [
        ("a", "log", '["a"]', "gather `ab` (slot a)"),
        ("b", "log", '["b"]', "gather `ab` (slot b)"),
        ("d", "log", '["d"]', "gather `dc` (slot d)"),
        ("c", "log", '["c"]', "gather `dc` (slot c)"),
    ]
    # A branch sees its own writes only, never a sibling's.
    assert seen(driver, "c") == [("c", "log", '["c"]', None)]
    assert seen(driver, "d") == [
        ("a", "log", '["a"]', "gather `ab` (slot a)"),
        ("b", "log", '["b"]', "gather `ab` (slot b)"),
        ("d", "log", '["d"]', None),
    ]


def test_a_foreach_merges_finished_items_in_item_order_and_drops_failed_ones() -> None:
    document = flow(
        [START, {"id": "each", "type": "foreach", "items": "input.items", "as": "item",
                 "concurrency": 3, "on_item_failure": "skip"},
         {"id": "bad", "type": "if", "condition": "item == 2"},
         {"id": "boom", "type": "fail", "error": "two is bad"},
         append("keep", "log", "[item]"), append("after", "log", "['after']"), END],
        [edge("start", "each"), edge("each", "bad", outcome="item"),
         edge("bad", "boom", outcome="true"), edge("bad", "keep", outcome="false"),
         edge("keep", "each"), edge("each", "after", outcome="done"), edge("after", "done")],
        {"log": "append"},
    )  # fmt: skip
    driver = Driver(document, {"items": [1, 2, 3]})
    assert driver.result == {"log": [1, 3, "after"]}
    assert seen(driver, "after") == [
        ("keep", "log", "[1]", "foreach `each` item 1"),
        ("keep", "log", "[3]", "foreach `each` item 3"),
        ("after", "log", '["after"]', None),
    ]
    # Inside the body an item sees its own writes, not another item's.
    assert seen(driver, "keep", "root:1:each:3") == [("keep", "log", "[3]", None)]


def test_a_loop_iteration_sees_the_iterations_before_it() -> None:
    document = flow(
        [START, {"id": "rounds", "type": "loop", "while": "size(state.log) < 3",
                 "max_iterations": 5},
         append("add", "log", "[size(state.log)]"), END],
        [edge("start", "rounds"), edge("rounds", "add", outcome="body"), edge("add", "rounds"),
         edge("rounds", "done", outcome="done")],
        {"log": "append"},
    )  # fmt: skip
    driver = Driver(document)
    assert driver.result == {"log": [0, 1, 2]}
    assert seen(driver, "add", "root:1:rounds:3") == [
        ("add", "log", "[0]", "loop `rounds` iteration 1"),
        ("add", "log", "[1]", "loop `rounds` iteration 2"),
        ("add", "log", "[2]", None),
    ]
    assert [via for *_, via in seen(driver, "done")] == [
        "loop `rounds` iteration 1", "loop `rounds` iteration 2", "loop `rounds` iteration 3",
    ]  # fmt: skip


def test_a_race_keeps_the_winners_writes_and_never_the_losers() -> None:
    document = flow(
        [START, {"id": "race", "type": "race", "branches": ["fast", "slow"]},
         append("quick", "log", "['fast']"),
         {"id": "wait", "type": "task", "action": "noop", "params": {"value": ["slow"]},
          "output": "log"},
         append("after", "log", "['after']"), END],
        [edge("start", "race"), edge("race", "quick", branch="fast"),
         edge("race", "wait", branch="slow"), edge("quick", "race"), edge("wait", "race"),
         edge("race", "after"), edge("after", "done")],
        {"log": "append"},
    )  # fmt: skip
    driver = Driver(document)
    assert driver.result == {"log": ["fast", "after"]}
    assert seen(driver, "after") == [
        ("quick", "log", '["fast"]', "race `race` won by `fast`"),
        ("after", "log", '["after"]', None),
    ]


def test_a_subflow_sees_none_of_the_parents_writes_and_returns_its_output_as_a_write() -> None:
    child = flow(
        [START, {"id": "inner", "type": "set", "values": {"total": "input.n * 2"}}, END],
        [edge("start", "inner"), edge("inner", "done")],
        {"total": "overwrite"},
    )  # fmt: skip
    child["input"] = {"type": "object", "properties": {"n": {"type": "integer"}}}
    parent = flow(
        [START, {"id": "first", "type": "set", "values": {"n": "21"}},
         {"id": "call", "type": "subflow", "flow": "child", "input": {"n": "state.n"},
          "output": {"doubled": "total"}}, END],
        [edge("start", "first"), edge("first", "call"), edge("call", "done")],
        {"n": "overwrite", "doubled": "overwrite"},
    )  # fmt: skip
    driver = Driver(parent, subflows={"child@latest": child})
    assert driver.result == {"n": 21, "doubled": 42}
    assert seen(driver, "call/inner") == [("call/inner", "total", 42, None)]
    assert seen(driver, "done") == [("first", "n", 21, None), ("call", "doubled", 42, None)]


def test_a_node_no_event_names_has_no_answer() -> None:
    driver = Driver(flow([START, END], [edge("start", "done")]))
    assert lineage_writes(driver.trace, "nowhere") is None
    assert lineage_writes(driver.trace, "done", "root:9") is None
    assert seen(driver, "done") == []
