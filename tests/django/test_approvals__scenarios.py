"""Approvals in the shapes people meet: parallel branches, a batch of line items, a race
against a deadline, many approvers at once, and every refusal leaving nothing behind."""

import copy
import io
import json
import random
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import Group, User
from django.core.management import call_command
from django.db import connection, connections
from django.db.backends.sqlite3.base import DatabaseWrapper as SQLiteWrapper
from django.test import Client

from approvals import audit
from approvals.models import ApprovalEvent, ApprovalRequest
from designer.demo import DEMO_DIR
from engine.models import PendingEvent, Run
from engine.runtime import sweep
from tests.django.approval_helpers import (
    INVOICE,
    decide,
    footprint,
    post,
    publish,
    request_id,
    start,
)
from tests.django.durable_driver import drain, stopped_clock
from tests.django.fixture_types import ClientFor, DemoUsers


def demo_flow(name: str) -> dict[str, Any]:
    """Return a demo flow's document."""
    document: dict[str, Any] = json.loads((DEMO_DIR / f"{name}.json").read_text())
    return document


@pytest.mark.django_db
@pytest.mark.parametrize("order", [("fin", "leg"), ("leg", "fin")])
def test_parallel_approvals_in_fork_branches_complete_in_either_order(
    demo: DemoUsers, client_for: ClientFor, order: tuple[str, str]
) -> None:
    run = start(client_for("analyst"), "invoice-sign-off", INVOICE)
    deciders = {"fin": client_for("finance"), "leg": client_for("legal")}
    for node in order:
        assert decide(deciders[node], request_id(run, node), "approve").status_code == 202
        run = drain(run)
    assert (run.status, run.state["log"]) == ("completed", ["finance approved", "legal approved"])
    assert audit.verify().ok


@pytest.mark.django_db
def test_a_batch_of_50_lines_pauses_the_12_over_the_limit_and_completes_in_any_order(
    demo: DemoUsers, client_for: ClientFor
) -> None:
    graph = demo_flow("batch-line-approval")
    graph["nodes"][1]["concurrency"] = 50
    analyst, finance = client_for("analyst"), client_for("finance")
    publish(analyst, "batch-50", graph)
    big = set(random.Random(14).sample(range(50), 12))
    lines = [{"id": f"L{i:02d}", "amount": 20000 + i if i in big else 100 + i} for i in range(50)]
    run = start(analyst, "batch-50", {"lines": lines})
    listed = finance.get("/api/approvals/?limit=500").json()
    assert listed["count"] == 12
    assert finance.get("/api/approvals/count/").json()["open"] == 12
    ids = {r["execution_id"]: r["id"] for r in listed["results"]}
    order = sorted(ids, key=lambda _: random.random())
    rejected = set(order[:3])
    for eid in order[:3]:
        assert decide(finance, ids[eid], "reject").status_code == 202
    bulk = post(finance, "/api/approvals/decide/",
                {"ids": [ids[e] for e in order[3:8]], "decision": "approve"})  # fmt: skip
    assert (bulk.status_code, bulk.json()["done"]) == (200, 5)
    run = drain(run)
    assert run.status == "waiting"
    for eid in order[8:]:
        assert decide(finance, ids[eid], "approve").status_code == 202
    run = drain(run)
    approved = [lines[i]["id"] for i in sorted(big) if f"root:1:lines:{i + 1}" not in rejected]
    small = [lines[i]["id"] for i in range(50) if i not in big]
    assert (run.status, run.state) == (
        "completed",
        {"approved": approved, "auto": small, "errors": []},
    )
    assert finance.get("/api/approvals/count/").json()["open"] == 0
    assert ApprovalEvent.objects.filter(run_id=run.pk, kind="decided").count() == 12


@pytest.mark.django_db
def test_an_approval_raced_by_a_one_second_wait_is_cancelled_when_the_timer_wins(
    demo: DemoUsers, client_for: ClientFor
) -> None:
    graph = copy.deepcopy(demo_flow("approval-or-timeout"))
    timer = next(n for n in graph["nodes"] if n["id"] == "timer")
    timer["seconds"] = 1
    publish(client_for("analyst"), "quick-deadline", graph)
    with stopped_clock() as runtime_clock:
        run = start(client_for("analyst"), "quick-deadline", {"item": "desk", "hours": 0})
        pk = request_id(run, "approve")
        runtime_clock.sleep(0.9)
        assert sweep.sweep()["timers"] == 0  # not due yet
        runtime_clock.sleep(0.2)
        assert sweep.sweep()["timers"] == 1
        run = drain(run)
    assert (run.status, run.state["outcome"]) == ("completed", "escalated: no decision in time")
    request = ApprovalRequest.objects.get(pk=pk)
    assert (request.status, request.outcome) == ("closed", "race deadline won by timer")
    cancelled = ApprovalEvent.objects.get(request_id=pk, kind="cancelled")
    assert cancelled.detail == {"reason": "race deadline won by timer"}
    late = decide(client_for("finance"), pk, "approve")
    assert (late.status_code, late.json()["code"]) == (409, "approval.closed")


@pytest.fixture
def invoice_run(demo: DemoUsers, client_for: ClientFor) -> Run:
    """An invoice run started by the analyst, waiting on finance and legal."""
    return start(client_for("analyst"), "invoice-sign-off", INVOICE)


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("case", "status", "code"),
    [
        ("non-member", 404, "not_found"),  # not theirs to see (docs/security.md)
        ("admin outside its groups", 403, "approval.not_an_approver"),
        ("starter", 403, "approval.starter"),
        ("double decision", 409, "approval.already_decided"),
        ("stale execution id", 409, "approval.stale"),
        ("cancelled request", 409, "approval.closed"),
        ("delegated away", 403, "approval.delegated"),
        ("no CSRF token", 403, "permission_denied"),
    ],
)
def test_each_refused_decision_has_its_status_and_changes_no_row(
    demo: DemoUsers, client_for: ClientFor, case: str, status: int, code: str
) -> None:
    finance = client_for("finance")
    starter = "finance" if case == "starter" else "analyst"
    run = start(client_for(starter), "invoice-sign-off", INVOICE)
    fin = request_id(run, "fin")
    body: dict[str, str] = {"decision": "approve"}
    caller = finance
    if case == "non-member":
        caller = client_for("legal")
    elif case == "admin outside its groups":
        caller = client_for("admin")
    elif case == "double decision":
        assert decide(finance, fin, "approve").status_code == 202
    elif case == "stale execution id":
        body["execution_id"] = "root:1:split.finance:2"
    elif case == "cancelled request":
        assert (
            post(client_for("admin"), f"/api/runs/{run.pk}/cancel/", {"reason": "x"}).status_code
            == 202
        )
        run = drain(run)
    elif case == "delegated away":
        other = User.objects.create_user("controller")
        other.groups.add(Group.objects.get(name="finance"))
        assert (
            post(finance, f"/api/approvals/{fin}/delegate/", {"to": "controller"}).status_code
            == 200
        )
    elif case == "no CSRF token":
        caller = Client(enforce_csrf_checks=True)
        caller.force_login(demo["finance"])
    before = footprint(run)
    audit_before = ApprovalEvent.objects.count()
    refused = post(caller, f"/api/approvals/{fin}/decide/", body)
    assert (refused.status_code, refused.json()["code"]) == (status, code)
    assert footprint(run) == before  # nothing recorded: no inbox event, row or trace
    assert ApprovalEvent.objects.count() == audit_before


@pytest.mark.django_db
def test_fifty_decisions_in_turn_on_one_any_request_have_one_winner(
    demo: DemoUsers, client_for: ClientFor
) -> None:
    finance_group = Group.objects.get(name="finance")
    clients = []
    for i in range(50):
        user = User.objects.create_user(f"approver{i:02d}")
        user.groups.add(finance_group)
        client = Client()
        client.force_login(user)
        clients.append(client)
    run = start(
        client_for("analyst"), "batch-line-approval", {"lines": [{"id": "X", "amount": 99999}]}
    )
    pk = request_id(run, "review")
    statuses = [decide(c, pk, "approve").status_code for c in clients]
    assert (statuses.count(202), statuses.count(409)) == (1, 49)
    run = drain(run)
    assert (run.status, run.state["approved"]) == ("completed", ["X"])
    assert (
        PendingEvent.objects.filter(
            run=run, key__startswith=ApprovalRequest.objects.get(pk=pk).key
        ).count()
        == 1
    )


@pytest.mark.django_db(transaction=True)
def test_fifty_concurrent_decisions_on_one_any_request_have_exactly_one_winner(
    demo: DemoUsers, client_for: ClientFor
) -> None:
    database = connections["default"]  # the wrapper itself: `connection` is only its proxy
    if isinstance(database, SQLiteWrapper) and database.is_in_memory_db():
        pytest.skip("50 threads need a database file or PostgreSQL, not in-memory SQLite")
    finance_group = Group.objects.get(name="finance")
    users = []
    for i in range(50):
        user = User.objects.create_user(f"racer{i:02d}")
        user.groups.add(finance_group)
        users.append(user)
    run = start(
        client_for("analyst"), "batch-line-approval", {"lines": [{"id": "X", "amount": 99999}]}
    )
    pk = request_id(run, "review")
    barrier, statuses = threading.Barrier(50), []
    lock = threading.Lock()

    def race(user: User) -> None:
        try:
            client = Client()
            client.force_login(user)
            barrier.wait()
            status = decide(client, pk, "approve").status_code
            with lock:
                statuses.append(status)
        finally:
            connection.close()

    threads = [threading.Thread(target=race, args=(u,)) for u in users]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert (statuses.count(202), statuses.count(409)) == (1, 49)
    run = drain(run)
    assert (run.status, run.state["approved"]) == ("completed", ["X"])
    assert ApprovalEvent.objects.filter(request_id=pk, kind="decided").count() == 1
    assert audit.verify().ok


@pytest.mark.django_db
def test_a_quorum_of_two_closes_on_the_second_approval_and_refuses_the_third(
    demo: DemoUsers, client_for: ClientFor
) -> None:
    from tests.django.approval_helpers import approval_graph

    finance_group = Group.objects.get(name="finance")
    clients = {}
    for name in ("ann", "bob", "cy"):
        user = User.objects.create_user(name)
        user.groups.add(finance_group)
        clients[name] = Client()
        clients[name].force_login(user)
    publish(client_for("analyst"), "two-of-three", approval_graph(policy={"quorum": 2}))
    run = start(client_for("analyst"), "two-of-three", {"amount": 10})
    pk = request_id(run, "ask")
    assert decide(clients["ann"], pk, "approve").status_code == 202
    run = drain(run)
    assert (run.status, ApprovalRequest.objects.get(pk=pk).status) == ("waiting", "open")
    assert decide(clients["bob"], pk, "approve").status_code == 202
    late = decide(clients["cy"], pk, "approve")  # recorded decisions already meet the quorum
    assert (late.status_code, late.json()) == (
        409,
        {
            "code": "approval.closed",
            "detail": "the approval at ask is already decided by ann, bob; the run is applying it",
        },
    )
    run = drain(run)
    assert (run.status, run.state["decision"]) == ("completed", "approved")
    reassign = post(client_for("admin"), f"/api/approvals/{pk}/reassign/", {"to": "cy"})
    assert (reassign.status_code, reassign.json()["code"]) == (409, "approval.closed")


@pytest.mark.django_db
def test_a_quorum_cannot_be_reassigned_to_one_person(
    demo: DemoUsers, client_for: ClientFor
) -> None:
    from tests.django.approval_helpers import approval_graph

    publish(client_for("analyst"), "two-needed", approval_graph(policy={"quorum": 2}))
    run = start(client_for("analyst"), "two-needed", {"amount": 10})
    before = footprint(run)
    refused = post(
        client_for("admin"), f"/api/approvals/{request_id(run, 'ask')}/reassign/", {"to": "legal"}
    )
    assert (refused.status_code, refused.json()) == (
        409,
        {
            "code": "approval.needs_people",
            "detail": 'the approval at ask still needs 2 people (policy {"quorum": 2} over '
            "finance): one person cannot decide it; delegate parts instead",
        },
    )
    assert footprint(run) == before


def quick_deadline_file(tmp_path: Any, seconds: float) -> str:
    """Write the demo deadline flow with a short timer; return its path."""
    graph = copy.deepcopy(demo_flow("approval-or-timeout"))
    next(n for n in graph["nodes"] if n["id"] == "timer")["seconds"] = seconds
    path = tmp_path / "quick-deadline.json"
    path.write_text(json.dumps(graph))
    return str(path)


@pytest.mark.django_db
def test_braid_run_waits_out_a_one_second_wait_racing_an_approval(
    demo: DemoUsers, tmp_path: Path
) -> None:
    out = io.StringIO()
    started = time.monotonic()
    call_command("braid", "run", quick_deadline_file(tmp_path, 1), "--input",
                 '{"item": "desk", "hours": 0}', "--json", stdout=out)  # fmt: skip
    assert 0.9 < time.monotonic() - started < 10
    report = json.loads(out.getvalue())
    assert (report["status"], report["state"]["outcome"]) == (
        "completed",
        "escalated: no decision in time",
    )
    request = ApprovalRequest.objects.get(run_id=report["run"])
    assert (request.status, request.outcome) == ("closed", "race deadline won by timer")
    assert ApprovalEvent.objects.get(request_id=request.pk, kind="cancelled").detail == {
        "reason": "race deadline won by timer"
    }


@pytest.mark.django_db
def test_braid_run_leaves_a_longer_wait_racing_an_approval_to_the_approver(
    demo: DemoUsers, tmp_path: Path
) -> None:
    out = io.StringIO()
    call_command("braid", "run", quick_deadline_file(tmp_path, 30), "--max-wait", "0.5",
                 "--input", '{"item": "desk", "hours": 0}', "--json", stdout=out)  # fmt: skip
    report = json.loads(out.getvalue())
    assert report["status"] == "waiting"
    assert ApprovalRequest.objects.get(run_id=report["run"]).status == "open"
