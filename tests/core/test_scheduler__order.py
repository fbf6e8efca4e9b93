"""Scheduler-order independence and snapshot round trips over generated flows."""

import random
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.core.harness import Driver, edge, flow

START, END = {"id": "start", "type": "start"}, {"id": "done", "type": "end"}


@st.composite
def generated_flows(draw: st.DrawFn) -> dict[str, Any]:
    """A fork of 1-4 branches of tasks, sets and IFs into one gather, maybe in a foreach."""
    branches = draw(st.integers(1, 4))
    nodes: list[dict[str, Any]] = [
        START,
        {"id": "split", "type": "fork", "branches": [f"b{i}" for i in range(branches)]},
    ]
    edges = []
    for index in range(branches):
        steps = draw(st.lists(st.sampled_from(["task", "set", "if"]), min_size=1, max_size=3))
        previous = None
        for position, kind in enumerate(steps):
            node_id = f"n{index}_{position}" + ("_if" if kind == "if" else "")
            nodes.append(step_node(node_id, kind, index))
            edges.extend(link(previous, node_id, index))
            previous = node_id
        edges.extend(link(previous, "join", index, slot=f"b{index}"))
    nodes.append({"id": "join", "type": "gather", "slots": [f"b{i}" for i in range(branches)]})
    nodes.append(END)
    edges.append(edge("join", "done"))
    state = {"log": "append", "total": "sum", "seen": "union", "best": "max"}
    if draw(st.booleans()):
        return wrap_in_foreach(nodes, edges, state, draw(st.integers(1, 3)))
    edges.insert(0, edge("start", "split"))
    return flow(nodes, edges, state)


def link(previous: str | None, target: str, branch: int, **slot: str) -> list[dict[str, str]]:
    """Edges from the previous step: a branch edge, a plain edge, or an IF's two outcomes.

    An IF's `false` outcome skips the rest of the branch into its gather slot, so each
    slot is fed by alternatives (OR) and every path reaches the gather.
    """
    if previous is None:
        return [edge("split", target, branch=f"b{branch}", **slot)]
    if not previous.endswith("_if"):
        return [edge(previous, target, **slot)]
    skip = edge(previous, "join", outcome="false", slot=f"b{branch}")
    return [edge(previous, target, outcome="true", **slot), skip]


def step_node(node_id: str, kind: str, branch: int) -> dict[str, Any]:
    """One generated step: a noop task appending, a set of several reducers, or an IF."""
    if kind == "task":
        return {
            "id": node_id,
            "type": "task",
            "action": "noop",
            "params": {"value": [f"{node_id}"]},
            "output": "log",
        }
    if kind == "set":
        return {
            "id": node_id,
            "type": "set",
            "values": {
                "total": f"{branch + 1}",
                "seen": f"['{node_id}', 'shared']",
                "best": f"{branch}",
                "log": f"['{node_id}']",
            },
        }
    return {"id": node_id, "type": "if", "condition": f"size(state.log) % 2 == {branch % 2}"}


def wrap_in_foreach(
    nodes: list[dict[str, Any]],
    edges: list[dict[str, Any]],
    state: dict[str, Any],
    concurrency: int,
) -> dict[str, Any]:
    """Run the generated fork once per input item."""
    nodes.insert(
        1,
        {
            "id": "each",
            "type": "foreach",
            "items": "input.items",
            "as": "item",
            "concurrency": concurrency,
        },
    )
    edges = [
        edge("start", "each"),
        edge("each", "split", outcome="item"),
        *[e for e in edges if e["target"] != "done"],
        edge("join", "each"),
        edge("each", "done", outcome="done"),
    ]
    return flow(nodes, edges, state)


def outcome_of(driver: Driver) -> tuple[Any, ...]:
    """Everything that must not depend on scheduling: state, rows, per-execution traces."""
    return driver.status, driver.result, driver.row_table(), driver.trace_by_execution()


def run(
    document: dict[str, Any],
    pick: random.Random | None,
    done: random.Random | None,
    round_trip: bool = False,
) -> Driver:
    """Run a generated flow to the end with the given orders."""
    chooser = (lambda ready: pick.randrange(len(ready))) if pick else None
    driver = Driver(document, {"items": [1, 2, 3]}, pick=chooser, round_trip=round_trip)
    driver.settle(done)
    return driver


@settings(max_examples=60, deadline=None)
@given(generated_flows(), st.randoms(use_true_random=False), st.randoms(use_true_random=False))
def test_shuffled_ready_queues_and_completions_give_identical_results(
    document: dict[str, Any], pick: random.Random, done: random.Random
) -> None:
    baseline = run(document, None, None)
    assert baseline.status == "completed"
    assert outcome_of(run(document, pick, done)) == outcome_of(baseline)


@settings(max_examples=40, deadline=None)
@given(generated_flows(), st.randoms(use_true_random=False))
def test_resuming_from_a_json_snapshot_at_every_step_ends_identically(
    document: dict[str, Any], done: random.Random
) -> None:
    seed = done.random()
    straight = run(document, None, random.Random(seed))
    resumed = run(document, None, random.Random(seed), round_trip=True)
    assert outcome_of(resumed) == outcome_of(straight)
