"""The lists people open every day read a page through an index, whatever the number of
runs and requests behind it.

Measured on PostgreSQL with 300,000 runs and 300,000 closed requests of the finance group:
the admin's runs list read its page in 110 ms sorting every run (1 ms through
`run_created`); the approvals archive in 258 ms (`approval_closed_newest`); an approver's
runs list did not answer in twelve minutes, because `started_by = me OR id IN (requests of
my groups)` made PostgreSQL test the subquery run by run once its rows outgrew work_mem
(80 ms as one IN over a union). The plans below are asked with sequential scans and sorts
turned off, so they name what the planner can use, not what it picks on a small table.
"""

import importlib
import json
from collections.abc import Iterator
from typing import Any

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from approvals.models import ApprovalRequest, ApprovalStatus
from approvals.services import open_count
from engine.models import Run
from tests.django.durable_driver import drain
from tests.django.fixture_types import ClientFor, DemoUsers

pytestmark = pytest.mark.django_db


def start(client: Client, flow: str, input_value: dict[str, Any]) -> str:
    """POST a run, drive it until it waits or ends, and return its id."""
    body = json.dumps({"flow": flow, "input": input_value})
    response = client.post("/api/runs/", body, content_type="application/json")
    assert response.status_code == 201, response.content
    run_id: str = response.json()["id"]
    drain(Run.objects.get(pk=run_id))
    return run_id


@pytest.fixture
def runs(demo: DemoUsers, client_for: ClientFor) -> Iterator[dict[str, str]]:
    """A run asking finance, a run asking nobody, and a run the analyst started."""
    admin = client_for("admin")
    invoice = {"invoice": {"id": "I-1", "amount": 5, "vendor": "V"}}
    yield {
        "asking finance": start(admin, "invoice-sign-off", invoice),
        "asking nobody": start(admin, "b-and-d-or-e", {"urgent": True}),
        "the analyst's": start(client_for("analyst"), "b-and-d-or-e", {"urgent": False}),
    }


def page_reads(client: Client, url: str, table: str) -> list[str]:
    """GET a list and return the statements it sent that count or page `table`'s rows."""
    with CaptureQueriesContext(connection) as queries:
        response = client.get(url)
    assert response.status_code == 200, response.content
    return [q["sql"] for q in queries.captured_queries if f'FROM "{table}"' in q["sql"]
            and ("ORDER BY" in q["sql"] or "COUNT(*)" in q["sql"])]  # fmt: skip


def plan(sql: str) -> str:
    """EXPLAIN a statement as the page sent it, with sequential scans and sorts off."""
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute("SET LOCAL enable_sort = off")
        cursor.execute(f"EXPLAIN {sql}")
        return "\n".join(row[0] for row in cursor.fetchall())


def postgresql_only() -> None:
    if connection.vendor != "postgresql":
        pytest.skip("a PostgreSQL plan: the PostgreSQL pass")


def test_an_approver_lists_the_runs_asking_their_groups_and_their_own_only(
    runs: dict[str, str], client_for: ClientFor
) -> None:
    finance = client_for("finance").get("/api/runs/").json()
    assert [r["id"] for r in finance["results"]] == [runs["asking finance"]]
    analyst = client_for("analyst").get("/api/runs/").json()
    assert [r["id"] for r in analyst["results"]] == [runs["the analyst's"]]
    admin = client_for("admin").get("/api/runs/").json()
    assert [r["id"] for r in admin["results"]] == [
        runs["the analyst's"],
        runs["asking nobody"],
        runs["asking finance"],
    ]


def test_an_approvers_runs_list_reads_no_subquery_run_by_run(
    runs: dict[str, str], client_for: ClientFor
) -> None:
    postgresql_only()
    reads = page_reads(client_for("finance"), "/api/runs/?limit=50", "engine_run")
    assert len(reads) == 2  # the count and the page
    for sql in reads:
        assert "SubPlan" not in plan(sql), plan(sql)


def test_the_runs_list_reads_its_page_newest_first_through_an_index(
    runs: dict[str, str], client_for: ClientFor
) -> None:
    postgresql_only()
    count, page = page_reads(client_for("admin"), "/api/runs/?limit=50", "engine_run")
    assert "COUNT(*)" in count
    assert "Index Scan Backward using run_created on engine_run" in plan(page), plan(page)


def test_the_approvals_archive_reads_its_page_through_an_index(
    runs: dict[str, str], client_for: ClientFor
) -> None:
    postgresql_only()
    ApprovalRequest.objects.update(status=ApprovalStatus.CLOSED, closed_at=timezone.now())
    url = "/api/approvals/?status=closed&limit=50"
    count, page = page_reads(client_for("finance"), url, "approvals_approvalrequest")
    assert "COUNT(*)" in count
    assert "approval_closed_newest" in plan(page), plan(page)


def test_the_inbox_and_its_count_read_no_subquery_request_by_request(
    runs: dict[str, str], client_for: ClientFor, demo: DemoUsers
) -> None:
    """Whether the reader started a request's run is a column of the request: a user who
    had started 300,000 runs and had 1,000 requests open waited 14-19 s for the count."""
    postgresql_only()
    reads = page_reads(client_for("finance"), "/api/approvals/", "approvals_approvalrequest")
    with CaptureQueriesContext(connection) as queries:
        open_count(demo["finance"])  # the navigation bar's count, on every page
    counts = [q["sql"] for q in queries.captured_queries if "approvals_approvalrequest" in q["sql"]]
    assert len(reads) == 2 and len(counts) == 1
    for sql in [*reads, *counts]:
        assert "SubPlan" not in plan(sql), plan(sql)
        if "COUNT(*)" in sql:  # the page joins each request's run, to show it
            assert "engine_run" not in sql, sql


def test_a_request_carries_its_runs_starter_and_the_migration_copies_it(
    runs: dict[str, str], demo: DemoUsers
) -> None:
    from django.apps import apps

    copy_starters = importlib.import_module(
        "approvals.migrations.0003_request_starter"
    ).copy_starters
    asking = ApprovalRequest.objects.filter(run_id=runs["asking finance"])
    assert list(asking.values_list("starter_id", flat=True)) == [demo["admin"].pk] * 2
    ApprovalRequest.objects.update(starter=None)
    copy_starters(apps, None)
    assert list(asking.values_list("starter_id", flat=True)) == [demo["admin"].pk] * 2


def test_storing_requests_copies_the_starter_inside_the_insert(
    runs: dict[str, str], demo: DemoUsers
) -> None:
    """No read of the run before the insert: the step that opens requests pays nothing more."""
    from approvals.hooks import ApprovalsObserver
    from engine.core.events import RequestApproval

    run_id = runs["the analyst's"]
    asked = [RequestApproval(key=f"{run_id}|ask|{n}", node="ask",
                             execution_id="root:1", groups=("finance",), policy="any",
                             title=f"Ask {n}", instructions="")
             for n in range(3)]  # fmt: skip
    with CaptureQueriesContext(connection) as queries:
        ApprovalsObserver().approvals_requested(run_id, asked)
    assert [q["sql"] for q in queries.captured_queries if 'FROM "engine_run"' in q["sql"]
            and not q["sql"].startswith("INSERT")] == []  # fmt: skip
    stored = ApprovalRequest.objects.filter(key__in=[a.key for a in asked])
    assert list(stored.values_list("starter_id", flat=True)) == [demo["analyst"].pk] * 3
