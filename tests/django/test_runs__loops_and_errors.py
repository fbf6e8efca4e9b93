"""Loops out of iterations and missing fields: `braid run --json` and a durable run agree."""

import io
import json
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command

from engine.models import NodeState, Run
from engine.runtime import runs
from runs import services
from tests.django.durable_driver import drain

START, END = {"id": "start", "type": "start"}, {"id": "done", "type": "end"}


def loop(exhausted: bool) -> dict[str, Any]:
    """A loop whose condition never turns false within max_iterations 2."""
    nodes = [
        START,
        {"id": "rounds", "type": "loop", "while": "state.n < 10", "max_iterations": 2},
        {"id": "bump", "type": "set", "values": {"n": "state.n + 1"}},
        {"id": "ok", "type": "set", "values": {"gave_up": "false"}},
        END,
    ]
    edges = [
        {"source": "start", "target": "rounds"},
        {"source": "rounds", "outcome": "body", "target": "bump"},
        {"source": "bump", "target": "rounds"},
        {"source": "rounds", "outcome": "done", "target": "ok"},
        {"source": "ok", "target": "done"},
    ]
    if exhausted:
        nodes.append({"id": "mark", "type": "set", "values": {"gave_up": "true"}})
        edges += [{"source": "rounds", "outcome": "exhausted", "target": "mark"},
                  {"source": "mark", "target": "done"}]  # fmt: skip
    return {
        "format": "braid.graph/1",
        "state": {"n": {"reducer": "overwrite", "default": 0}, "gave_up": {"reducer": "overwrite"}},
        "nodes": nodes,
        "edges": edges,
    }


MISSING = {
    "format": "braid.graph/1",
    "state": {"total": {"reducer": "sum", "default": 0}},
    "nodes": [
        START,
        {"id": "check", "type": "set", "values": {"total": "input.invoice.amount"}},
        END,
    ],
    "edges": [{"source": "start", "target": "check"}, {"source": "check", "target": "done"}],
}
LOOP_FAILED = (
    "loop rounds reached max_iterations (2) while its condition `state.n < 10` still held, "
    "and has no `exhausted` edge"
)
MISSING_FAILED = (
    "node `check` values.total: `input.invoice.amount` reads `input.invoice`, which is "
    "missing; the input held `amount`, `vendor`"
)
CASES = {
    "exhausted": (loop(True), {}, "completed", "", {"n": 2, "gave_up": True}),
    # A failed activation's lineages are abandoned, never merged: the run's state keeps n = 0.
    "no-exhausted-edge": (loop(False), {}, "failed", LOOP_FAILED, {"n": 0, "gave_up": None}),
    "missing-field": (
        MISSING,
        {"vendor": "Acme", "amount": 3},
        "failed",
        MISSING_FAILED,
        {"total": 0},
    ),
}


def rows(run_id: str) -> dict[str, tuple[str, str, Any]]:
    """Return node -> (status, execution id, result)."""
    return {r.node: (r.status, r.execution_id, r.result)
            for r in NodeState.objects.filter(run_id=run_id)}  # fmt: skip


@pytest.mark.django_db
@pytest.mark.parametrize("case", sorted(CASES))
def test_braid_run_and_a_durable_run_end_alike(case: str, tmp_path: Path) -> None:
    document, input_value, status, error, state = CASES[case]
    path = tmp_path / "flow.json"
    path.write_text(json.dumps(document))
    out = io.StringIO()
    call_command("braid", "run", str(path), "--input", json.dumps(input_value), "--json",
                 stdout=out)  # fmt: skip
    report = json.loads(out.getvalue())
    in_process = Run.objects.get(pk=report["run"])

    started = runs.create_run(services.resolve_graphs(document), "flow", input_value)
    done = drain(started)

    assert (report["status"], in_process.error, report["state"]) == (status, error, state)
    assert (done.status, done.error, done.state) == (status, error, state)
    assert rows(report["run"]) == rows(str(done.pk))
    if case == "exhausted":
        assert rows(str(done.pk))["rounds"] == (
            "completed",
            "root:1",
            {"iterations": 2, "outcome": "exhausted"},
        )
        assert report["colors"]["ok"] == "skipped"
