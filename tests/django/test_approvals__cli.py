"""`braid decide` on durable runs: drive them here without a worker, or wait for one."""

import json

import pytest
from django.test import Client
from pytest_django import Settings

from approvals.models import ApprovalRequest
from engine.models import PendingEvent, Run
from tests.django.durable_driver import drain
from tests.django.fixture_types import ClientFor, DemoUsers
from tests.django.test_approvals__api import LINES
from tests.django.test_runs__cli import braid, run_json

INVOICE = {"invoice": {"id": "I-9", "amount": 300, "vendor": "Acme"}}


def start_durable(client: Client, flow: str, input_value: object) -> str:
    """Start a run through the API, advance it to its first pause; return its id."""
    body = {"flow": flow, "input": input_value}
    response = client.post("/api/runs/", json.dumps(body), content_type="application/json")
    assert response.status_code == 201, response.content
    run = drain(Run.objects.get(pk=response.json()["id"]))
    assert (run.runtime, run.status) == ("durable", "waiting")
    return str(run.pk)


def outcomes(run_id: str) -> dict[str, tuple[str, str]]:
    """Return the run's requests as execution id -> (status, outcome)."""
    return {
        r.execution_id: (r.status, r.outcome) for r in ApprovalRequest.objects.filter(run_id=run_id)
    }


@pytest.mark.django_db
def test_braid_decide_drives_a_durable_run_here_when_no_worker_runs_beside_it(
    demo: DemoUsers, client_for: ClientFor
) -> None:
    run_id = start_durable(client_for("analyst"), "invoice-sign-off", INVOICE)
    assert braid("decide", run_id, "fin", "--user", "legal", "approve") == (
        1,
        "legal is in none of the groups ['finance']\n",
    )
    waiting = run_json("decide", run_id, "leg", "--user", "legal", "approve")
    assert (waiting["status"], waiting["colors"]["leg"], waiting["colors"]["fin"]) == (
        "waiting",
        "completed",
        "waiting",
    )
    assert braid("decide", run_id, "leg", "--user", "legal", "approve") == (
        1,
        "no open approval at 'leg'\n",
    )
    done = run_json("decide", run_id, "fin", "--user", "finance", "approve", "--comment", "ok")
    assert (done["status"], done["state"]) == (
        "completed",
        {
            "invoice": INVOICE["invoice"],
            "total": 300,
            "log": ["finance approved", "legal approved"],
        },
    )
    skipped = {"fin_no", "leg_no"}
    assert done["colors"] == {
        node: "skipped" if node in skipped else "completed"
        for node in ("start", "record", "split", "fin", "leg", "fin_ok", "leg_ok", "both",
                     "fin_no", "leg_no", "done")
    }  # fmt: skip
    assert outcomes(run_id) == {
        "root:1:split.finance:1": ("closed", "approved"),
        "root:1:split.legal:1": ("closed", "approved"),
    }
    assert PendingEvent.objects.filter(run_id=run_id, applied_at=None).count() == 0


@pytest.mark.django_db
def test_braid_decide_needs_an_execution_when_several_items_wait_at_one_node(
    demo: DemoUsers, client_for: ClientFor
) -> None:
    run_id = start_durable(client_for("analyst"), "batch-line-approval", LINES)
    assert braid("decide", run_id, "review", "--user", "finance", "approve") == (
        1,
        "2 approvals are open at 'review'; name one by its execution id: "
        "root:1:lines:1, root:1:lines:3 (braid decide --execution EID)\n",
    )
    assert braid("decide", run_id, "review", "--user", "finance", "approve", "--execution",
                 "root:1:lines:2") == (
        1,
        "no open approval at 'review' has the execution id 'root:1:lines:2'; "
        "open there: root:1:lines:1, root:1:lines:3\n",
    )  # fmt: skip
    args = ("decide", run_id, "review", "--user", "finance")
    assert run_json(*args, "approve", "--execution", "root:1:lines:3")["status"] == "waiting"
    done = run_json(*args, "reject")  # the only one left
    assert (done["status"], done["state"]) == (
        "completed",
        {"approved": ["C"], "auto": ["B"], "errors": []},
    )
    assert outcomes(run_id) == {
        "root:1:lines:1": ("closed", "rejected"),
        "root:1:lines:3": ("closed", "approved"),
    }


@pytest.mark.django_db
def test_with_workers_braid_decide_records_once_and_waits_for_them(
    demo: DemoUsers, client_for: ClientFor, settings: Settings
) -> None:
    settings.BRAID_EMBEDDED_WORKER, settings.BRAID_DECIDE_WAIT_S = False, 0.2
    run_id = start_durable(client_for("analyst"), "invoice-sign-off", INVOICE)
    status, output = braid("decide", run_id, "leg", "--user", "legal", "approve")
    assert (status, output.splitlines()[:2]) == (
        0,
        ["recorded; no worker applied it within 0.2 s, so the run may not show it",
         f"run     {run_id}"],
    )  # fmt: skip
    assert braid("decide", run_id, "leg", "--user", "legal", "reject") == (
        1,
        "legal has already decided the approval at leg\n",
    )
    assert list(PendingEvent.objects.filter(run_id=run_id, applied_at=None).values_list(
        "event__decision", "event__user")) == [("approve", "legal")]  # fmt: skip
    drain(Run.objects.get(pk=run_id))  # the workers' part
    assert outcomes(run_id) == {
        "root:1:split.finance:1": ("open", ""),
        "root:1:split.legal:1": ("closed", "approved"),
    }
    assert Run.objects.get(pk=run_id).status == "waiting"
