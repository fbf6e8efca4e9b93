"""Random runs through the in-process harness, compared with the oracle after every step.

Flows are generated (tests/oracle/flows.py) or the demo flows; after every step a random
intervention the run allows is made: complete an action, fail one, fire a timer, approve,
reject, cancel the run, or retry a run an action's failure ended. BRAID_ORACLE_EXAMPLES
sets how many runs each test draws (`make oracle` draws 2,000).

`compare` in tests/oracle/driving.py says what is checked after every step (both walks,
the oracle, the execution tree and every execution's own view); the durable runtime and
the pushed deltas are checked in tests/django/test_monitor__oracle_durable.py.
"""

from __future__ import annotations

import json
import os
import random
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.core.test_colors__walks import DEMOS
from tests.oracle.driving import (
    RetryingDriver,
    compare,
    demo,
    make_move,
    moves_of,
    oracle_colors,
)
from tests.oracle.flows import INPUTS, SUBFLOWS, flows

EXAMPLES = int(os.environ.get("BRAID_ORACLE_EXAMPLES", "50"))
STEPS = 40
# CI draws the same examples every time (`make oracle` draws many more, at random).
RUNS = settings(
    max_examples=EXAMPLES,
    derandomize=os.environ.get("BRAID_ORACLE_RANDOM") != "1",
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
BIG_LINES = [{"id": f"l{i}", "amount": a} for i, a in enumerate([5, 20000, 30000, 70])]
ALL_DEMOS = [*DEMOS, ("batch-line-approval", {"lines": BIG_LINES})]
FINISHED_COLORS = {"completed", "failed", "cancelled", "skipped"}


def demo_driver(name: str, data: dict[str, Any]) -> RetryingDriver:
    """Return a driver for a demo flow (vendor-payment calls a-risk-score)."""
    subflows = {"a-risk-score@latest": demo("a-risk-score")} if name == "vendor-payment" else {}
    return RetryingDriver(demo(name), data, subflows=subflows)


def drive(driver: RetryingDriver, seed: int) -> list[str]:
    """Make random moves, comparing after each; return the moves and what differed."""
    rng = random.Random(seed)
    moves: list[str] = []
    for _ in range(STEPS):
        differences = compare(driver)
        assert differences == [], (moves, differences, json.dumps(driver.document))
        allowed = moves_of(driver)
        if not allowed:
            break
        moves.append(make_move(driver, rng.choice(allowed), rng))
    return moves


def drive_oracle_only(driver: RetryingDriver, seed: int) -> None:
    """Make random moves; after each, the oracle colors every node and a finished run
    shows nothing pending, running or waiting."""
    rng = random.Random(seed)
    for _ in range(STEPS):
        colors = oracle_colors(driver)
        assert set(colors) >= {n.id for n in driver.graphs["main"].nodes}
        if driver.state.status.finished:
            assert set(colors.values()) <= FINISHED_COLORS, colors
        allowed = moves_of(driver)
        if not allowed:
            break
        make_move(driver, rng.choice(allowed), rng)


@RUNS
@given(flows(), INPUTS, st.integers(0, 2**32 - 1))
def test_the_oracle_colors_every_node_and_a_finished_run_shows_nothing_live(
    document: dict[str, Any], data: dict[str, Any], seed: int
) -> None:
    drive_oracle_only(RetryingDriver(document, data, subflows=SUBFLOWS), seed)


@RUNS
@given(flows(), INPUTS, st.integers(0, 2**32 - 1))
def test_both_walks_agree_with_the_oracle_on_generated_runs(
    document: dict[str, Any], data: dict[str, Any], seed: int
) -> None:
    drive(RetryingDriver(document, data, subflows=SUBFLOWS), seed)


@RUNS
@given(st.sampled_from(ALL_DEMOS), st.integers(0, 2**32 - 1))
def test_both_walks_agree_with_the_oracle_on_demo_runs(
    case: tuple[str, dict[str, Any]], seed: int
) -> None:
    drive(demo_driver(*case), seed)
