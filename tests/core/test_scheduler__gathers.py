"""Fork and gather: staged, repeated, alternative and crossed gathers (the fork/gather ADR)."""

import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.core.harness import Driver, append, edge, flow

START, END = {"id": "start", "type": "start"}, {"id": "done", "type": "end"}


def task(node_id: str, value: str) -> dict[str, Any]:
    """A noop task whose output is appended to `log` (so completion order can vary)."""
    return {
        "id": node_id,
        "type": "task",
        "action": "noop",
        "params": {"value": [value]},
        "output": "log",
    }


STAGED = flow(
    [
        START,
        {"id": "split", "type": "fork", "branches": ["a", "b", "c"]},
        task("a", "a"),
        task("b", "b"),
        task("c", "c"),
        {"id": "ab", "type": "gather", "slots": ["a", "b"]},
        append("d", "log", "['d']"),
        {"id": "dc", "type": "gather", "slots": ["d", "c"]},
        END,
    ],
    [
        edge("start", "split"),
        edge("split", "a", branch="a"),
        edge("split", "b", branch="b"),
        edge("split", "c", branch="c"),
        edge("a", "ab", slot="a"),
        edge("b", "ab", slot="b"),
        edge("ab", "d"),
        edge("d", "dc", slot="d"),
        edge("c", "dc", slot="c"),
        edge("dc", "done"),
    ],
    {"log": "append"},
)


@pytest.mark.parametrize("order", [["a", "b", "c"], ["c", "b", "a"], ["b", "c", "a"]])
def test_a_plus_b_gives_d_then_d_plus_c_in_declared_slot_order(order: list[str]) -> None:
    driver = Driver(STAGED)
    for name in order:
        driver.complete(next(k for k in driver.actions if f"|{name}|" in k))
    assert driver.status == "completed"
    assert driver.result == {"log": ["a", "b", "d", "c"]}
    assert driver.row_table()["ab"] == (
        "completed",
        "root:1",
        '["root:1:split.a:1", "root:1:split.b:1"]',
        1,
    )
    assert driver.row_table()["d"][1] == "root:1"
    merges = [e.detail for e in driver.trace if e.event == "gather.merged"]
    assert merges == [
        {"inputs": [["a", "root:1:split.a:1"], ["b", "root:1:split.b:1"]], "order": ["a", "b"]},
        {"inputs": [["d", "root:1"], ["c", "root:1:split.c:1"]], "order": ["d", "c"]},
    ]


LOOPED = flow(
    [
        START,
        {"id": "rounds", "type": "loop", "while": "size(state.log) < 6", "max_iterations": 5},
        {"id": "split", "type": "fork", "branches": ["a", "b"]},
        {
            "id": "a",
            "type": "task",
            "action": "noop",
            "params": {"value": ["a${string(size(state.log) / 2 + 1)}"]},
            "output": "log",
        },
        {
            "id": "b",
            "type": "task",
            "action": "noop",
            "params": {"value": ["b${string(size(state.log) / 2 + 1)}"]},
            "output": "log",
        },
        {"id": "join", "type": "gather", "slots": ["a", "b"]},
        END,
    ],
    [
        edge("start", "rounds"),
        edge("rounds", "split", outcome="body"),
        edge("split", "a", branch="a"),
        edge("split", "b", branch="b"),
        edge("a", "join", slot="a"),
        edge("b", "join", slot="b"),
        edge("join", "rounds"),
        edge("rounds", "done", outcome="done"),
    ],
    {"log": "append"},
)


def test_gathers_inside_a_loop_combine_a1_with_b1_and_never_with_b2() -> None:
    driver = Driver(LOOPED)
    driver.run_actions(random.Random(7))
    assert driver.status == "completed"
    assert driver.result == {"log": ["a1", "b1", "a2", "b2", "a3", "b3"]}
    merges = [e.detail["inputs"] for e in driver.trace if e.event == "gather.merged"]
    assert merges == [
        [["a", f"root:1:rounds:{n}:split.a:1"], ["b", f"root:1:rounds:{n}:split.b:1"]]
        for n in (1, 2, 3)
    ]
    assert driver.row_table()["join"][:2] == ("completed", "root:1:rounds:3")
    assert driver.row_table()["rounds"] == ("completed", "root:1", {"iterations": 3}, 1)


ALTERNATIVES = flow(
    [
        START,
        {"id": "split", "type": "fork", "branches": ["left", "right"]},
        append("b", "log", "['b']"),
        {"id": "check", "type": "if", "condition": "input.urgent"},
        append("d", "log", "['d']"),
        append("e", "log", "['e']"),
        {"id": "join", "type": "gather", "slots": ["b", "d_or_e"]},
        END,
    ],
    [
        edge("start", "split"),
        edge("split", "b", branch="left"),
        edge("split", "check", branch="right"),
        edge("check", "d", outcome="true"),
        edge("check", "e", outcome="false"),
        edge("b", "join", slot="b"),
        edge("d", "join", slot="d_or_e"),
        edge("e", "join", slot="d_or_e"),
        edge("join", "done"),
    ],
    {"log": "append"},
)


@pytest.mark.parametrize(("urgent", "log"), [(True, ["b", "d"]), (False, ["b", "e"])])
def test_b_and_d_or_e_fires_with_either_alternative(urgent: bool, log: list[str]) -> None:
    driver = Driver(ALTERNATIVES, {"urgent": urgent})
    assert (driver.status, driver.result) == ("completed", {"log": log})
    assert ("e" if urgent else "d") not in driver.rows


CROSSED = flow(
    [
        START,
        {"id": "top", "type": "fork", "branches": ["left", "right"]},
        {"id": "lf", "type": "fork", "branches": ["b", "c"]},
        {"id": "rf", "type": "fork", "branches": ["e", "f"]},
        task("b", "b"),
        task("c", "c"),
        task("e", "e"),
        task("f", "f"),
        {"id": "be", "type": "gather", "slots": ["b", "e"]},
        {"id": "cf", "type": "gather", "slots": ["c", "f"]},
        append("after_be", "log", "['be']"),
        append("after_cf", "log", "['cf']"),
        {"id": "all", "type": "gather", "slots": ["be", "cf"]},
        END,
    ],
    [
        edge("start", "top"),
        edge("top", "lf", branch="left"),
        edge("top", "rf", branch="right"),
        edge("lf", "b", branch="b"),
        edge("lf", "c", branch="c"),
        edge("rf", "e", branch="e"),
        edge("rf", "f", branch="f"),
        edge("b", "be", slot="b"),
        edge("e", "be", slot="e"),
        edge("c", "cf", slot="c"),
        edge("f", "cf", slot="f"),
        edge("be", "after_be"),
        edge("cf", "after_cf"),
        edge("after_be", "all", slot="be"),
        edge("after_cf", "all", slot="cf"),
        edge("all", "done"),
    ],
    {"log": "append"},
)


@settings(max_examples=40, deadline=None)
@given(st.randoms(use_true_random=False), st.randoms(use_true_random=False))
def test_cross_merges_give_the_same_result_under_every_scheduler_order(
    ready_order: random.Random, completion_order: random.Random
) -> None:
    driver = Driver(CROSSED, pick=lambda ready: ready_order.randrange(len(ready)))
    driver.run_actions(completion_order)
    assert driver.status == "completed"
    assert driver.result == {"log": ["b", "e", "be", "c", "f", "cf"]}
    assert driver.row_table()["be"][1] == "root:1"
    assert driver.row_table()["after_cf"][1] == "root:1"


DOUBLE = flow(
    [
        START,
        {"id": "split", "type": "fork", "branches": ["x", "y", "z"]},
        append("x", "log", "['x']"),
        append("y", "log", "['y']"),
        append("z", "log", "['z']"),
        {"id": "join", "type": "gather", "slots": ["one", "two"]},
        END,
    ],
    [
        edge("start", "split"),
        edge("split", "x", branch="x"),
        edge("split", "y", branch="y"),
        edge("split", "z", branch="z"),
        edge("x", "join", slot="one"),
        edge("y", "join", slot="one"),
        edge("z", "join", slot="two"),
        edge("join", "done"),
    ],
    {"log": "append"},
)


def test_a_second_token_for_one_slot_fails_the_activation() -> None:
    driver = Driver(DOUBLE)
    assert driver.status == "failed"
    assert driver.state.error == "gather join: slot 'one' already has a token in root:1"
    assert "done" not in driver.rows
    assert [b.buckets for b in driver.state.gathers.values()] == [{}]
    assert driver.finished is not None and driver.finished.error == driver.state.error


def conflicting(first: str, second: str) -> dict[str, Any]:
    """Two branches overwriting one field, then a gather."""
    return flow(
        [
            START,
            {"id": "split", "type": "fork", "branches": ["p", "q"]},
            {"id": "p", "type": "set", "values": {"owner": first}},
            {"id": "q", "type": "set", "values": {"owner": second}},
            {"id": "join", "type": "gather", "slots": ["p", "q"], "conflicts": "error"},
            END,
        ],
        [
            edge("start", "split"),
            edge("split", "p", branch="p"),
            edge("split", "q", branch="q"),
            edge("p", "join", slot="p"),
            edge("q", "join", slot="q"),
            edge("join", "done"),
        ],
        {"owner": "overwrite"},
    )


def test_a_conflict_on_overwrite_fails_closed() -> None:
    driver = Driver(conflicting("'ann'", "'bob'"))
    assert driver.status == "failed"
    assert driver.state.error == (
        "gather join: state field 'owner': different concurrent values: 'ann' and others"
    )
    assert driver.row_table()["join"][:2] == ("failed", "root:1")
    assert "done" not in driver.rows


def test_equal_concurrent_overwrites_are_not_a_conflict() -> None:
    driver = Driver(conflicting("'ann'", "'ann'"))
    assert (driver.status, driver.result) == ("completed", {"owner": "ann"})


@pytest.mark.parametrize("order", [["a", "b", "c"], ["c", "a", "b"], ["b", "c", "a"]])
def test_append_replays_in_declared_slot_order_whatever_the_arrival_order(order: list[str]) -> None:
    document = flow(
        [
            START,
            {"id": "split", "type": "fork", "branches": ["a", "b", "c"]},
            task("a", "a"),
            task("b", "b"),
            task("c", "c"),
            {"id": "join", "type": "gather", "slots": ["c", "a", "b"]},
            END,
        ],
        [
            edge("start", "split"),
            edge("split", "a", branch="a"),
            edge("split", "b", branch="b"),
            edge("split", "c", branch="c"),
            edge("a", "join", slot="a"),
            edge("b", "join", slot="b"),
            edge("c", "join", slot="c"),
            edge("join", "done"),
        ],
        {"log": "append"},
    )
    driver = Driver(document)
    for name in order:
        driver.complete(next(k for k in driver.actions if f"|{name}|" in k))
    assert driver.result == {"log": ["c", "a", "b"]}


@pytest.mark.parametrize("round_trip", [False, True])
def test_merged_lineages_are_released_and_their_parts_dropped(round_trip: bool) -> None:
    driver = Driver(STAGED, round_trip=round_trip)
    assert sorted(driver.state.lineages.all) == [1, 2, 3, 4]  # the root and three branches
    for name in ["a", "b"]:
        driver.complete(next(k for k in driver.actions if f"|{name}|" in k))
    # a and b merged at `ab` into lineage 5 under the root; d runs on, c still waits.
    assert sorted(driver.state.lineages.all) == [1, 4, 5]
    assert driver.state.lineages.children == {1: 2}
    driver.complete(next(k for k in driver.actions if "|c|" in k))
    assert driver.status == "completed"
    assert driver.result == {"log": ["a", "b", "d", "c"]}
    assert sorted(driver.state.lineages.all) == [1, 6]
    assert driver.state.lineages.children == {1: 1}
    if round_trip:  # the store holds the released lineages' parts no more
        assert not [k for k in driver.parts if k.startswith(("lineage:2", "lineage:3"))]
