"""Reducers: one write in a lineage, and replaying concurrent lineages' writes in order."""

import pytest

from engine.core.reducers import REDUCERS, MergeConflict, WriteRejected
from engine.core.values import JSON


def test_every_contract_reducer_is_registered_with_its_initial_value() -> None:
    assert {name: r.initial() for name, r in REDUCERS.items()} == {
        "overwrite": None, "append": [], "sum": 0, "min": None, "max": None,
        "merge": {}, "union": [],
    }  # fmt: skip


@pytest.mark.parametrize(
    ("name", "current", "value", "expected"),
    [
        ("overwrite", 1, 2, 2),
        ("append", ["a"], ["b", "c"], ["a", "b", "c"]),
        ("sum", 2, 3.5, 5.5),
        ("min", None, 4, 4),
        ("min", 3, 4, 3),
        ("max", 3, 4, 4),
        ("merge", {"a": 1}, {"b": 2, "a": 3}, {"a": 3, "b": 2}),
        ("union", [1, "x"], ["x", 2, 1.0], [1, "x", 2]),
    ],
)
def test_one_write_applies_in_a_lineage(
    name: str, current: JSON, value: JSON, expected: JSON
) -> None:
    assert REDUCERS[name].apply(current, value) == expected


def test_append_replays_contributions_in_the_given_order() -> None:
    contributions: list[list[JSON]] = [[["b1"], ["b2"]], [], [["a"]]]
    assert REDUCERS["append"].merge(["base"], contributions) == [
        "base", "b1", "b2", "a",
    ]  # fmt: skip


def test_two_different_concurrent_overwrites_conflict_but_equal_ones_do_not() -> None:
    with pytest.raises(MergeConflict):
        REDUCERS["overwrite"].merge(None, [["x"], ["y"]])
    assert REDUCERS["overwrite"].merge(None, [["x", "y"], ["y"], []]) == "y"
    assert REDUCERS["overwrite"].merge("kept", [[], []]) == "kept"


def test_merge_conflicts_on_one_key_with_two_values_and_unions_the_rest() -> None:
    assert REDUCERS["merge"].merge({"k": 0}, [[{"a": 1}], [{"b": 2}, {"a": 1}]]) == {
        "k": 0, "a": 1, "b": 2,
    }  # fmt: skip
    with pytest.raises(MergeConflict):
        REDUCERS["merge"].merge({}, [[{"a": 1}], [{"a": 2}]])


def test_sum_min_max_and_union_combine_concurrent_writes() -> None:
    assert REDUCERS["sum"].merge(1, [[2, 3], [4]]) == 10
    assert REDUCERS["min"].merge(None, [[5], [2, 9]]) == 2
    assert REDUCERS["max"].merge(7, [[5], [2, 9]]) == 9
    assert REDUCERS["union"].merge(["a"], [[["b", "a"]], [["c", "b"]]]) == ["a", "b", "c"]


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("append", "x"),
        ("union", {"a": 1}),
        ("sum", "1"),
        ("sum", True),
        ("max", None),
        ("merge", [1]),
    ],
)
def test_a_value_of_the_wrong_kind_is_rejected_with_the_reducer_named(
    name: str, value: JSON
) -> None:
    with pytest.raises(WriteRejected, match=name):
        REDUCERS[name].apply(REDUCERS[name].initial() if name != "max" else 1, value)


def test_merging_ten_thousand_contributions_keeps_every_item_in_order() -> None:
    contributions: list[list[JSON]] = [[[i]] for i in range(10_000)]
    assert REDUCERS["append"].merge([], contributions) == list(range(10_000))
    assert REDUCERS["union"].merge([], contributions) == list(range(10_000))
