"""Generated flows end the same on the durable path as in the pure scheduler, also when
each step lands on one of several worker processes, each with its own cached states."""

import random
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.core.graph import Graph
from engine.runtime import runs, state_cache
from tests.core.harness import Driver
from tests.core.test_scheduler__order import generated_flows
from tests.django.durable_driver import Processes, drain


@pytest.mark.django_db
@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(generated_flows(), st.integers(1, 2))
def test_a_generated_flow_ends_the_same_on_the_durable_path(
    document: dict[str, Any], deliveries: int
) -> None:
    data = {"items": [1, 2, 3]}
    pure = Driver(document, data)
    pure.settle(random.Random(0))
    run = runs.create_run({"main": Graph.from_json(document)}, "generated", data)
    run = drain(run, deliveries)
    rows = {r.node: (r.status, r.execution_id, r.result, r.attempt) for r in run.node_rows.all()}
    assert (run.status, run.state) == (pure.status, pure.result)
    assert rows == pure.row_table()


@pytest.mark.django_db(transaction=True)
@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(generated_flows(), st.integers(0, 2**32 - 1))
def test_a_generated_flow_ends_the_same_with_its_steps_on_several_workers(
    monkeypatch: pytest.MonkeyPatch, document: dict[str, Any], seed: int
) -> None:
    data = {"items": [1, 2, 3, 4]}
    pure = Driver(document, data)
    pure.settle(random.Random(0))
    monkeypatch.setattr(state_cache, "_STATES", Processes(3, random.Random(seed)))
    run = runs.create_run({"main": Graph.from_json(document)}, "generated", data)
    run = drain(run)
    rows = {r.node: (r.status, r.execution_id, r.result, r.attempt) for r in run.node_rows.all()}
    assert (run.status, run.state) == (pure.status, pure.result)
    assert rows == pure.row_table()
