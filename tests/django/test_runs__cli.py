"""`braid run`, `braid show` and `braid decide` store runs and print rows and colors."""

import io
import json
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command

from approvals.models import ApprovalRequest
from engine.models import NodeState, Run, TraceEvent
from tests.django.fixture_types import ClientFor, DemoUsers

EXAMPLES = Path(__file__).resolve().parents[1] / "fixtures" / "examples"
DEMO = Path(__file__).resolve().parents[2] / "designer" / "demo_flows"
LINES = {"lines": [{"id": "L1", "amount": 50}, {"id": "L2", "amount": 20000}]}


def braid(*args: str) -> tuple[int, str]:
    """Run `manage.py braid ARGS`; return the exit status and the output."""
    out = io.StringIO()
    try:
        call_command("braid", *args, stdout=out)
    except SystemExit as exit_info:
        return int(exit_info.code or 0), out.getvalue()
    return 0, out.getvalue()


def run_json(*args: str) -> dict[str, Any]:
    """Run a braid command with --json and decode its output."""
    status, output = braid(*args, "--json")
    assert status == 0, output
    decoded: dict[str, Any] = json.loads(output)
    return decoded


@pytest.mark.django_db
def test_the_batch_example_waits_on_line_two_and_completes_after_finance_approves(
    demo_users: DemoUsers,
) -> None:
    waiting = run_json("run", str(DEMO / "batch-line-approval.json"), "--input", json.dumps(LINES))
    assert waiting["status"] == "waiting"
    assert waiting["nodes"]["review"] == {
        "status": "waiting",
        "execution_id": "root:1:lines:2",
        "result": None,
    }
    assert waiting["colors"] == {
        "start": "completed",
        "lines": "running",
        "big": "completed",
        "small": "completed",
        "review": "waiting",
        "ok": "pending",
        "done": "pending",
    }
    run_id = waiting["run"]
    status, output = braid("decide", run_id, "review", "--user", "legal", "approve")
    assert (status, output) == (1, "legal is in none of the groups ['finance']\n")
    done = run_json("decide", run_id, "review", "--user", "finance", "approve")
    assert done["status"] == "completed"
    assert done["state"] == {"approved": ["L2"], "auto": ["L1"], "errors": []}
    assert set(done["colors"].values()) == {"completed"}
    assert run_json("show", run_id) == done
    run = Run.objects.get(pk=run_id)
    assert (run.status, run.label, run.runtime) == (
        "completed",
        "batch-line-approval.json",
        "in_process",
    )
    assert NodeState.objects.filter(run=run).count() == 7
    assert TraceEvent.objects.filter(run=run, event="node.completed", node="review").count() == 1


@pytest.mark.django_db
def test_a_flow_slug_runs_its_latest_version_and_its_subflow_paths_nest(
    demo_users: DemoUsers,
) -> None:
    call_command("braid", "demo", stdout=io.StringIO())
    report = run_json(
        "run",
        "vendor-payment",
        "--input",
        json.dumps({"vendor": "Acme", "amount": 2000, "new_vendor": False}),
    )
    assert report["status"] == "completed"
    assert report["state"] == {"risk": 20, "log": ["paid Acme"]}
    assert report["nodes"]["assess/score"] == {
        "status": "completed",
        "execution_id": "root:1:assess:1",
        "result": '{"score": 20}',
    }
    assert report["colors"]["review"] == "skipped"
    assert report["colors"]["refused"] == "skipped"
    assert report["colors"]["assess/done"] == "completed"
    version = Run.objects.get(pk=report["run"]).flow_version
    assert version is not None and version.flow.slug == "vendor-payment"


@pytest.mark.django_db
def test_the_staged_gathers_demo_completes_with_slot_ordered_writes(demo_users: DemoUsers) -> None:
    report = run_json("run", str(DEMO / "staged-gathers.json"))
    assert (report["status"], report["state"]) == (
        "completed",
        {"log": ["a", "b", "d after 2", "c"], "count": 3},
    )
    assert report["nodes"]["dc"]["execution_id"] == "root:1"


@pytest.mark.django_db
def test_an_invalid_file_is_refused_with_its_errors_and_stores_no_run(tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({"format": "braid.graph/1", "nodes": [], "edges": []}))
    status, output = braid("run", str(path))
    assert status == 1
    assert json.loads(output.splitlines()[0])["code"] == "graph.start_count"
    assert Run.objects.count() == 0


@pytest.mark.django_db
def test_unknown_runs_slugs_and_bad_input_get_clear_errors() -> None:
    assert braid("show", "not-a-run") == (1, "no run has the id 'not-a-run'\n")
    assert braid("run", "no-such-flow") == (1, "no flow has the slug 'no-such-flow'\n")
    status, output = braid("run", "x", "--input", "{nope")
    assert status == 2 and output.startswith("--input is not valid JSON")
    assert braid("run", "x", "--input", '{"rate": NaN}') == (
        2, "--input is not valid JSON: NaN is not a JSON number\n"
    )  # fmt: skip
    assert braid("run", "x", "--input", '{"rate": 1e999}') == (
        2, "--input is not valid JSON: the number 1e999 is out of range\n"
    )  # fmt: skip


@pytest.mark.django_db
def test_the_poll_loop_example_writes_each_iteration_under_its_own_execution_id(
    demo_users: DemoUsers, tmp_path: Path
) -> None:
    document = json.loads((EXAMPLES / "poll-loop.json").read_text())
    document["nodes"] = [n for n in document["nodes"] if n["id"] != "pause"]
    document["edges"] = [
        {"source": "count", "target": "poll"} if e["source"] == "count" else e
        for e in document["edges"]
        if e["source"] != "pause"
    ]
    for node in document["nodes"]:
        if node["id"] == "check":
            node.update({"action": "noop", "params": {"value": "waiting"}, "retry": None})
            node.pop("retry")
    path = tmp_path / "poll.json"
    path.write_text(json.dumps(document))
    report = run_json("run", str(path))
    # CONTRACT: a loop at max_iterations whose condition still holds, without an
    # `exhausted` edge, fails; it never leaves by `done`.
    assert report["status"] == "failed"
    assert report["nodes"]["check"]["execution_id"] == "root:1:poll:5"
    assert report["nodes"]["count"]["execution_id"] == "root:1:poll:5"
    assert report["nodes"]["poll"]["status"] == "failed"
    assert report["colors"]["done"] == "skipped"


@pytest.mark.django_db
def test_a_command_line_run_is_listed_to_admins_and_hidden_from_others(
    client_for: ClientFor,
) -> None:
    report = run_json("run", str(DEMO / "staged-gathers.json"))
    admin = client_for("admin").get("/api/runs/").json()
    assert [r["id"] for r in admin["results"]] == [report["run"]]
    assert client_for("analyst").get("/api/runs/").json()["results"] == []


def requests_of(run_id: str) -> list[tuple[str, str, str, list[str], str, str, str]]:
    """Return a run's approval requests as tuples of their fields, in the order they opened."""
    return [
        (r.node, r.execution_id, r.title, r.groups, r.status, r.outcome, r.instructions)
        for r in ApprovalRequest.objects.filter(run_id=run_id).order_by("id")
    ]


@pytest.mark.django_db
def test_an_in_process_run_stores_its_approval_requests_and_closes_each_when_decided(
    demo_users: DemoUsers,
) -> None:
    invoice = {"invoice": {"id": "I-7", "amount": 300, "vendor": "Acme"}}
    waiting = run_json("run", str(DEMO / "invoice-sign-off.json"), "--input", json.dumps(invoice))
    run_id = waiting["run"]
    fin = ("fin", "root:1:split.finance:1", "Finance sign-off for I-7", ["finance"])
    leg = ("leg", "root:1:split.legal:1", "Legal sign-off for I-7", ["legal"])
    fin_text, leg_text = (
        "Check the amount of 300 against the budget.",
        "Check the contract terms of Acme.",
    )
    assert requests_of(run_id) == [(*fin, "open", "", fin_text), (*leg, "open", "", leg_text)]
    assert run_json("decide", run_id, "leg", "--user", "legal", "approve")["status"] == "waiting"
    assert requests_of(run_id) == [
        (*fin, "open", "", fin_text),
        (*leg, "closed", "approved", leg_text),
    ]
    done = run_json("decide", run_id, "fin", "--user", "finance", "approve")
    assert (done["status"], done["state"]["log"]) == (
        "completed",
        ["finance approved", "legal approved"],
    )
    assert requests_of(run_id) == [
        (*fin, "closed", "approved", fin_text),
        (*leg, "closed", "approved", leg_text),
    ]
    assert ApprovalRequest.objects.filter(run_id=run_id).exclude(closed_at=None).count() == 2
