"""Generated flows end the same on the durable path as in the pure scheduler."""

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine import durable
from engine.core.graph import Graph
from tests.core.harness import Driver
from tests.core.test_scheduler__order import generated_flows
from tests.django.durable_driver import drain


@pytest.mark.django_db
@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(generated_flows(), st.integers(1, 2))
def test_a_generated_flow_ends_the_same_on_the_durable_path(
    document: dict, deliveries: int
) -> None:  # type: ignore[type-arg]
    data = {"items": [1, 2, 3]}
    pure = Driver(document, data)
    pure.settle(random.Random(0))
    run = durable.create_run({"main": Graph.from_json(document)}, "generated", data)
    run = drain(run, deliveries)
    rows = {r.node: (r.status, r.execution_id, r.result, r.attempt) for r in run.node_rows.all()}
    assert (run.status, run.state) == (pure.status, pure.result)
    assert rows == pure.row_table()
