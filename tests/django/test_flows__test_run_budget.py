"""A test run is played in a worker process, under a step budget and a wall time, and never
sleeps on a timer: the attacks of issue 29 §3 on `POST /api/flows/<slug>/test-run/`."""

import itertools
import json
import os
import time
from typing import Any

import pytest
from django.test import Client
from pytest_django import Settings

from runs import test_runs
from tests.django.fixture_types import ClientFor, DemoUsers, TestResponse

START, END = {"id": "start", "type": "start"}, {"id": "done", "type": "end"}


def post(client: Client, graph: dict[str, Any], body: dict[str, Any] | None = None) -> TestResponse:
    return client.post("/api/flows/b-and-d-or-e/test-run/",
                       json.dumps({"graph": graph, **(body or {})}),
                       content_type="application/json")  # fmt: skip


def looped(
    body: dict[str, Any], rounds: int, state: dict[str, Any] | None = None
) -> dict[str, Any]:
    """Return start -> loop(rounds) over one body node -> end (by `exhausted`)."""
    return {
        "format": "braid.graph/1",
        "state": state or {},
        "nodes": [START, {"id": "again", "type": "loop", "while": "true",
                          "max_iterations": rounds}, body, END],
        "edges": [{"source": "start", "target": "again"},
                  {"source": "again", "outcome": "body", "target": body["id"]},
                  {"source": body["id"], "target": "again"},
                  {"source": "again", "outcome": "exhausted", "target": "done"}],
    }  # fmt: skip


def chain(*nodes: dict[str, Any], state: dict[str, Any] | None = None) -> dict[str, Any]:
    """Return start -> nodes -> end."""
    ids = ["start", *(n["id"] for n in nodes), "done"]
    return {
        "format": "braid.graph/1",
        "state": state or {},
        "nodes": [START, *nodes, END],
        "edges": [{"source": a, "target": b} for a, b in itertools.pairwise(ids)],
    }


TICK = {"id": "tick", "type": "set", "values": {"n": "state.n + 1"}}
COUNTER = {"n": {"reducer": "overwrite", "default": 0}}


@pytest.mark.django_db
def test_a_loop_of_200000_iterations_is_refused_before_it_runs(
    demo: DemoUsers, client_for: ClientFor
) -> None:
    started = time.monotonic()
    response = post(client_for("analyst"), looped(TICK, 200_000, COUNTER))
    assert time.monotonic() - started < 5
    assert response.status_code == 400
    assert [(e["code"], e["node"]) for e in response.json()["errors"]] == [
        ("loop.max_iterations_over_limit", "again")
    ]


@pytest.mark.django_db
def test_a_test_run_stops_at_its_step_budget(
    demo: DemoUsers, client_for: ClientFor, settings: Settings
) -> None:
    settings.BRAID_TEST_RUN_MAX_STEPS = 500
    response = post(client_for("analyst"), looped(TICK, 10_000, COUNTER))
    assert response.status_code == 200, response.content
    body = response.json()
    # start and the loop, then 498 ticks: the 501st node would be the 499th tick.
    assert (body["status"], body["error"], body["state"]) == (
        "failed",
        "the run executed 500 nodes, its budget (BRAID_TEST_RUN_MAX_STEPS); node `tick` was next",
        {"n": 0},  # a failed activation's lineages are never merged
    )
    assert body["nodes"]["tick"]["execution_id"] == "root:1:again:498"


@pytest.mark.django_db
def test_twenty_one_second_waits_in_a_loop_answer_at_once_saying_what_was_skipped(
    demo: DemoUsers, client_for: ClientFor
) -> None:
    started = time.monotonic()
    response = post(
        client_for("analyst"), looped({"id": "pause", "type": "wait", "seconds": 1}, 20)
    )
    elapsed = time.monotonic() - started
    assert response.status_code == 200, response.content
    body = response.json()
    assert (body["status"], body["error"], body["time_skipped_s"]) == ("completed", None, 20.0)
    assert body["nodes"]["pause"]["execution_id"] == "root:1:again:20"
    assert elapsed < 10  # it slept on none of the 20 s (a worker may have to start first)


@pytest.mark.django_db
def test_a_test_run_past_its_wall_time_stops_between_actions(
    demo: DemoUsers, client_for: ClientFor, settings: Settings
) -> None:
    settings.BRAID_TEST_RUN_TIMEOUT_S = 1
    naps = [{"id": f"nap{i}", "type": "task", "action": "sleep", "params": {"seconds": 0.6}}
            for i in range(4)]  # fmt: skip
    body = post(client_for("analyst"), chain(*naps)).json()
    assert (body["status"], body["error"]) == (
        "failed",
        "the test run ran past its wall time of 1 s (BRAID_TEST_RUN_TIMEOUT_S)",
    )
    assert {path: row["status"] for path, row in body["nodes"].items()} == {
        "start": "completed",
        "nap0": "completed",
        "nap1": "running",
    }  # fmt: skip  (nap1's result came past the deadline: the run stopped before taking it)


@pytest.mark.django_db
def test_a_worker_silent_past_the_wall_time_is_killed_and_the_run_reported_stopped(
    demo: DemoUsers, client_for: ClientFor, settings: Settings
) -> None:
    settings.BRAID_TEST_RUN_TIMEOUT_S = 1
    nap = {"id": "nap", "type": "task", "action": "sleep", "params": {"seconds": 30}}
    started = time.monotonic()
    body = post(client_for("analyst"), chain(nap)).json()
    assert time.monotonic() - started < 10
    assert (body["status"], body["error"], body["nodes"]) == (
        "failed",
        "the test run ran past its wall time of 1 s and was stopped (BRAID_TEST_RUN_TIMEOUT_S)",
        {},
    )
    assert test_runs.pool().idle == []  # the killed worker is not handed out again


@pytest.mark.django_db
def test_a_test_run_executes_in_a_worker_process_not_the_web_process(
    demo: DemoUsers, client_for: ClientFor, settings: Settings
) -> None:
    settings.BRAID_PYTHON_ACTIONS = ["os.getpid"]
    pid = {"id": "pid", "type": "task", "action": "python", "params": {"path": "os.getpid"},
           "output": "pid"}  # fmt: skip
    body = post(client_for("analyst"), chain(pid, state={"pid": {"reducer": "overwrite"}})).json()
    assert body["status"] == "completed", body
    assert isinstance(body["state"]["pid"], int)
    assert body["state"]["pid"] != os.getpid()
    assert body["state"]["pid"] in {w.process.pid for w in test_runs.pool().idle}


@pytest.mark.django_db
def test_a_test_run_waiting_for_a_busy_pool_is_refused_with_503(
    demo: DemoUsers, client_for: ClientFor, settings: Settings
) -> None:
    settings.BRAID_TEST_RUN_TIMEOUT_S = 0.5
    slots = test_runs.pool().slots
    held = [slots.acquire(timeout=5) for _ in range(test_runs.pool().size)]
    try:
        response = post(client_for("analyst"), chain(TICK, state=COUNTER))
    finally:
        for _ in held:
            slots.release()
    assert response.status_code == 503
    assert response.json() == {
        "code": "test_run.busy",
        "detail": "2 test runs are under way (BRAID_TEST_RUN_WORKERS); try again",
    }
