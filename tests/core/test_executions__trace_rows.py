"""The trace replays into the rows the store keeps: every node's status and execution id,
and the result of every node whose result the monitor's walk reads (decisions, a race's
winner, a loop's iteration), on demo and generated runs caught after every step."""

import random
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.core import graph as g
from engine.core.executions import trace_rows
from tests.core.harness import Driver
from tests.core.test_colors__walks import DEMOS, driver_for, step_randomly
from tests.core.test_scheduler__order import generated_flows

READ_RESULT = (g.IfNode, g.SwitchNode, g.ApprovalNode, g.RaceNode, g.LoopNode)


def node_of(driver: Driver, path: str) -> g.Node:
    """Return the graph node of a path (a subflow's child through its caller)."""
    graph = driver.graphs["main"]
    *callers, last = path.split("/")
    for caller in callers:
        node = graph.node(caller)
        assert isinstance(node, g.SubflowNode)
        graph = driver.graphs[f"{node.flow}@{node.version or 'latest'}"]
    return graph.node(last)


def assert_trace_gives_the_rows(driver: Driver) -> None:
    replayed = trace_rows(driver.trace)
    assert sorted(replayed) == sorted(driver.rows)
    for path, row in driver.rows.items():
        again = replayed[path]
        assert (again.status, again.execution_id, again.attempt) == (
            row.status, row.execution_id, row.attempt,
        ), path  # fmt: skip
        if isinstance(node_of(driver, path), READ_RESULT) and row.status.value == "completed":
            assert again.result == row.result, path


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(DEMOS), st.integers(0, 2**32 - 1), st.integers(3, 40))
def test_the_trace_replays_into_the_rows_of_demo_runs(
    case: tuple[str, dict[str, Any]], seed: int, steps: int
) -> None:
    rng = random.Random(seed)
    driver = driver_for(*case)
    assert_trace_gives_the_rows(driver)
    for _ in range(steps):
        if not step_randomly(driver, rng):
            break
        assert_trace_gives_the_rows(driver)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(generated_flows(), st.integers(0, 2**32 - 1))
def test_the_trace_replays_into_the_rows_of_generated_runs(
    document: dict[str, Any], seed: int
) -> None:
    rng = random.Random(seed)
    driver = Driver(document, {"items": [1, 2, 3]})
    assert_trace_gives_the_rows(driver)
    for _ in range(30):
        if not step_randomly(driver, rng):
            break
        assert_trace_gives_the_rows(driver)
