"""Bounded work in both runtimes: the step budget and the value limit end a run alike."""

import itertools
from collections.abc import Iterator
from typing import Any

import pytest

from engine.core import expression_limits
from engine.models import NodeState, Run
from engine.runtime import runs
from runs import services
from tests.django.durable_driver import drain

START, END = {"id": "start", "type": "start"}, {"id": "done", "type": "end"}


@pytest.fixture
def small_limits() -> Iterator[None]:
    """A step budget of 6 nodes and a value limit of 1,000 bytes, restored after."""
    previous = expression_limits.limits()
    expression_limits.configure(max_run_steps=6, max_value_bytes=1_000)
    yield
    expression_limits.configure(
        max_run_steps=previous.max_run_steps, max_value_bytes=previous.max_value_bytes
    )


def chain(tasks: int, output: str | None = None) -> dict[str, Any]:
    """Return start -> `tasks` noop tasks (each returning input.value into `output`) -> end."""
    extra = {"params": {"value": "${input.value}"}, "output": output} if output else {}
    nodes = [{"id": f"t{i}", "type": "task", "action": "noop", **extra} for i in range(tasks)]
    ids = ["start", *(n["id"] for n in nodes), "done"]
    return {
        "format": "braid.graph/1",
        "state": {output: {"reducer": "overwrite"}} if output else {},
        "nodes": [START, *nodes, END],
        "edges": [{"source": a, "target": b} for a, b in itertools.pairwise(ids)],
    }


def rows(run_id: str) -> dict[str, tuple[str, Any]]:
    """Return node -> (status, result)."""
    return {r.node: (r.status, r.result) for r in NodeState.objects.filter(run_id=run_id)}


def both(document: dict[str, Any], input_value: Any) -> tuple[Run, Run]:
    """Run a flow in-process and durably; return both runs as stored."""
    in_process = services.start_run(document, "flow", input_value)
    durable_run = drain(runs.create_run(services.resolve_graphs(document), "flow", input_value))
    return Run.objects.get(pk=in_process.run_id), durable_run


@pytest.mark.django_db
def test_both_runtimes_fail_a_run_past_its_step_budget_alike(small_limits: None) -> None:
    in_process, durable_run = both(chain(10), {})
    error = "the run executed 6 nodes, its budget (BRAID_RUN_MAX_STEPS); node `t5` was next"
    assert (in_process.status, in_process.error) == ("failed", error)
    assert (durable_run.status, durable_run.error) == ("failed", error)
    assert rows(str(in_process.pk)) == rows(str(durable_run.pk))
    assert sorted(rows(str(durable_run.pk))) == ["start", "t0", "t1", "t2", "t3", "t4"]


@pytest.mark.django_db
def test_both_runtimes_fail_a_task_whose_params_pass_the_value_limit_alike(
    small_limits: None,
) -> None:
    in_process, durable_run = both(chain(1, output="got"), {"value": "v" * 990})
    error = "node `t0`: params is 1,002 bytes of JSON; the limit is 1,000 (BRAID_VALUE_MAX_BYTES)"
    assert (in_process.status, in_process.error) == ("failed", error)
    assert (durable_run.status, durable_run.error) == ("failed", error)
    assert rows(str(in_process.pk)) == rows(str(durable_run.pk))
