"""The two color walks agree: root → leaves over the whole run, leaf → root per node.

Runs are generated: the demo flows and generated fork/gather flows, driven by random
choices (complete an action, fail one, fire a timer, decide an approval, cancel the run),
and the walks are compared after every step, so runs are caught in every state.
"""

import json
import random
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.core.colors import Color, explain, explain_node
from engine.core.events import ActionFailed, Cancel
from tests.core.harness import Driver
from tests.core.test_scheduler__order import generated_flows

DEMO = Path(__file__).resolve().parents[2] / "designer" / "demo_flows"


def demo(name: str) -> dict[str, Any]:
    document: dict[str, Any] = json.loads((DEMO / f"{name}.json").read_text())
    return document


LINES = [{"sku": f"s{i}", "amount": amount} for i, amount in enumerate([50, 1500, 20, 9000])]
DEMOS: list[tuple[str, dict[str, Any]]] = [
    ("b-and-d-or-e", {"urgent": True}),
    ("b-and-d-or-e", {}),
    ("approval-or-timeout", {"item": "desk", "hours": 1}),
    ("invoice-sign-off", {"invoice": {"id": "I-1", "amount": 900, "vendor": "ACME"}}),
    ("staged-gathers", {}),
    ("batch-line-approval", {"lines": LINES}),
    ("vendor-payment", {"amount": 20000, "new_vendor": True, "vendor": "ACME"}),
    ("vendor-payment", {"amount": 100, "new_vendor": False, "vendor": "ACME"}),
]


def driver_for(name: str, data: dict[str, Any]) -> Driver:
    subflows = {"a-risk-score@latest": demo("a-risk-score")} if name == "vendor-payment" else {}
    return Driver(demo(name), data, subflows=subflows)


# How each color's reason opens, in people's words.
OPENINGS = {
    Color.COMPLETED: ("Completed", "Approved", "Rejected"),
    Color.RUNNING: ("Running",),
    Color.WAITING: ("Waiting",),
    Color.FAILED: ("Failed",),
    Color.SKIPPED: ("Skipped", "Not taken"),
    Color.CANCELLED: ("Cancelled",),
    Color.PENDING: ("Pending",),
}


def assert_walks_agree(driver: Driver) -> None:
    status = driver.state.status
    ended = driver.state.error or ""
    whole = explain(driver.graphs, driver.rows, status, ended)
    assert whole, "the root → leaves walk colored nothing"
    for path, verdict in whole.items():
        assert explain_node(driver.graphs, driver.rows, status, path, ended) == verdict, path
        assert verdict.reason.startswith(OPENINGS[verdict.color]), (path, verdict)


def step_randomly(driver: Driver, rng: random.Random) -> bool:
    """Take one random step the run allows; return False when nothing is left to do."""
    if driver.state.status.finished:
        return False
    moves: list[str] = []
    if driver.actions:
        moves += ["complete", "complete", "complete", "fail"]
    if driver.timers:
        moves.append("fire")
    if driver.approvals:
        moves += ["approve", "approve", "reject"]
    moves.append("cancel")
    move = rng.choice(moves)
    if move == "complete":
        driver.complete(rng.choice(sorted(driver.actions)))
    elif move == "fail":
        key = rng.choice(sorted(driver.actions))
        driver.actions.pop(key)
        driver.send(ActionFailed(at=driver.now(), key=key, error="boom"))
    elif move == "fire":
        driver.fire(rng.choice(sorted(driver.timers)))
    elif move in ("approve", "reject"):
        request = driver.approvals[rng.choice(sorted(driver.approvals))]
        decision = move
        driver.decide(request.node, "u", tuple(request.groups), decision, request.execution_id)
    else:
        driver.send(Cancel(at=driver.now(), by="admin", reason="test"))
    return True


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(DEMOS), st.integers(0, 2**32 - 1), st.integers(3, 40))
def test_both_walks_agree_on_every_node_of_demo_runs(
    case: tuple[str, dict[str, Any]], seed: int, steps: int
) -> None:
    rng = random.Random(seed)
    driver = driver_for(*case)
    assert_walks_agree(driver)
    for _ in range(steps):
        if not step_randomly(driver, rng):
            break
        assert_walks_agree(driver)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(generated_flows(), st.integers(0, 2**32 - 1))
def test_both_walks_agree_on_every_node_of_generated_runs(
    document: dict[str, Any], seed: int
) -> None:
    rng = random.Random(seed)
    driver = Driver(document, {"items": [1, 2, 3]})
    assert_walks_agree(driver)
    for _ in range(30):
        if not step_randomly(driver, rng):
            break
        assert_walks_agree(driver)
