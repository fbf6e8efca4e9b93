"""The durable runtime against the oracle: demo flows run durably (Celery's tasks called in
this process), driven at random (decide, cancel, advance); after every step the colors
the monitor's tree serves (monitor/reading.py, over the stored rows) are the oracle's,
computed from the stored trace and the graphs alone."""

import os
import random
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine import durable
from engine.models import Run
from monitor import reading
from tests.core.test_colors__walks import DEMOS
from tests.django.durable_driver import drain
from tests.django.test_monitor__deltas import start_demo, step
from tests.oracle.model import Model

pytestmark = pytest.mark.django_db
EXAMPLES = max(10, int(os.environ.get("BRAID_ORACLE_EXAMPLES", "50")) // 2)
LINES = [{"id": f"l{i}", "amount": a} for i, a in enumerate([50, 15000, 20, 90000])]
CASES = [
    (name, {"lines": LINES} if name == "batch-line-approval" else data) for name, data in DEMOS
]


def oracle_of(run: Run) -> dict[str, str]:
    """Return the oracle's colors of a stored run, from its stored trace and graphs."""
    run.refresh_from_db()
    trace, _ = reading.trace_since(str(run.pk), 0)
    model = Model(durable.run_graphs(str(run.pk), run.graphs), trace)
    return {path: color.value for path, color in model.colors().items()}


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.sampled_from(CASES), st.integers(0, 2**32 - 1))
def test_the_served_colors_of_durable_runs_are_the_oracles(
    demo: dict[str, Any], case: tuple[str, dict[str, Any]], seed: int
) -> None:
    run = start_demo(*case)
    drain(run)  # its first step (an unstarted run has no trace for the oracle to read)
    rng = random.Random(seed)
    for _ in range(8):
        run.refresh_from_db()
        served = {path: str(color) for path, color in reading.run_tree(run)["colors"].items()}
        assert served == oracle_of(run)
        if not step(run, rng):
            break
