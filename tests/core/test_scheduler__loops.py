"""A loop that runs out of iterations leaves by `exhausted`, or fails; never by `done`."""

from typing import Any

from engine.core.validation import validate
from tests.core.harness import ACTION_CATALOG, Driver, edge, flow

START, END = {"id": "start", "type": "start"}, {"id": "done", "type": "end"}


def loop_flow(condition: str, limit: int, *, exhausted: bool) -> dict[str, Any]:
    """start -> loop (body: bump n) -> done; optionally exhausted -> mark -> done."""
    nodes: list[dict[str, Any]] = [
        START,
        {"id": "rounds", "type": "loop", "while": condition, "max_iterations": limit},
        {"id": "bump", "type": "set", "values": {"n": "state.n + 1"}},
        END,
    ]
    edges = [
        edge("start", "rounds"),
        edge("rounds", "bump", outcome="body"),
        edge("bump", "rounds"),
        edge("rounds", "done", outcome="done"),
    ]
    if exhausted:
        nodes.append({"id": "mark", "type": "set", "values": {"gave_up": "true"}})
        edges += [edge("rounds", "mark", outcome="exhausted"), edge("mark", "done")]
    document = flow(nodes, edges, {"n": "overwrite", "gave_up": "overwrite"})
    document["state"]["n"]["default"] = 0
    return document


def test_the_validator_accepts_an_exhausted_edge_on_a_loop() -> None:
    report = validate(loop_flow("true", 3, exhausted=True), ACTION_CATALOG)
    assert [p.to_json() for p in report.errors] == []


def test_a_loop_out_of_iterations_leaves_by_exhausted_where_it_is_drawn() -> None:
    driver = Driver(loop_flow("state.n < 10", 3, exhausted=True))

    assert driver.status == "completed"
    assert driver.result == {"n": 3, "gave_up": True}
    assert driver.rows["rounds"].result == {"iterations": 3, "outcome": "exhausted"}
    assert driver.rows["rounds"].status.value == "completed"
    assert "mark" in driver.rows


def test_a_loop_whose_condition_turns_false_at_the_limit_leaves_by_done() -> None:
    driver = Driver(loop_flow("state.n < 3", 3, exhausted=True))

    assert driver.status == "completed"
    assert driver.result == {"n": 3, "gave_up": None}
    assert driver.rows["rounds"].result == {"iterations": 3}
    assert "mark" not in driver.rows


def test_a_loop_out_of_iterations_without_an_exhausted_edge_fails_naming_loop_and_limit() -> None:
    driver = Driver(loop_flow("state.n < 10", 2, exhausted=False))

    assert driver.status == "failed"
    message = (
        "loop rounds reached max_iterations (2) while its condition `state.n < 10` still "
        "held, and has no `exhausted` edge"
    )
    assert driver.state.error == message
    assert driver.rows["rounds"].status.value == "failed"
    assert driver.rows["rounds"].result == message
    assert driver.rows["bump"].execution_id == "root:1:rounds:2"
    assert "done" not in driver.rows


def test_a_loop_never_started_beyond_its_limit_by_round_trips() -> None:
    driver = Driver(loop_flow("true", 4, exhausted=True), round_trip=True)

    assert driver.status == "completed"
    assert driver.result == {"n": 4, "gave_up": True}
