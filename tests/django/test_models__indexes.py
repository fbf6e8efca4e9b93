"""The schema the migrations build: it matches the models, and a step's tables carry only
the indexes a query needs.

Every index on a table a step writes is written again at every insert, and at every update
that is not HOT: the trace, the inbox and the outbox take several rows a step. A W3 round
(220 runs of 5 steps) wrote 8.6 MB of WAL with the indexes Django adds by default (a
foreign key's own index beside a unique one that leads with it, a pattern-matching copy of
every indexed or unique text column, `applied_at` and `completed_at` indexed whole), and
7.6 MB without them.
"""

import io

import pytest
from django.core.management import call_command
from django.db import connection

pytestmark = pytest.mark.django_db

STEP_TABLES = {
    "engine_run": [
        "engine_run_flow_version_id_191a88e6",
        "engine_run_pkey",
        "engine_run_started_by_id_241caecc",
        "run_created",
        "run_idempotency_key",
        "run_status",
    ],
    "engine_nodestate": ["engine_nodestate_pkey", "node_row_unique"],
    "engine_runpart": ["engine_runpart_pkey", "run_part_unique"],
    "engine_partchange": ["engine_partchange_pkey", "part_change_unique"],
    "engine_traceevent": ["engine_traceevent_pkey", "trace_run_failed", "trace_seq_unique"],
    "engine_pendingevent": ["engine_pendingevent_pkey", "event_key_unique", "event_unapplied"],
    "engine_dispatch": [
        "dispatch_key_unique",
        "dispatch_open",
        "engine_dispatch_pkey",
        "engine_dispatch_run_id_7b07ec5c",
    ],
}


def test_the_migrations_build_what_the_models_say() -> None:
    out = io.StringIO()
    try:
        call_command("makemigrations", "--check", "--dry-run", stdout=out, stderr=out)
    except SystemExit:
        pytest.fail(f"a model change has no migration:\n{out.getvalue()}")


def test_the_tables_a_step_writes_carry_only_the_indexes_a_query_needs() -> None:
    if connection.vendor != "postgresql":
        pytest.skip("index names and Django's extra copies are PostgreSQL's: the PostgreSQL pass")
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT tablename, indexname FROM pg_indexes WHERE tablename = ANY(%s) "
            "ORDER BY tablename, indexname", [list(STEP_TABLES)],
        )  # fmt: skip
        found: dict[str, list[str]] = {}
        for table, index in cursor.fetchall():
            found.setdefault(table, []).append(index)
    assert found == STEP_TABLES


def test_the_sweeper_finds_open_work_through_the_partial_indexes() -> None:
    """The sweeper's two reads of open work use the indexes of open rows alone, whatever
    the planner's statistics (sequential scans turned off makes it say what it can use)."""
    if connection.vendor != "postgresql":
        pytest.skip("a PostgreSQL plan: the PostgreSQL pass")
    from django.utils import timezone

    from engine.models import Dispatch, PendingEvent

    reads = {
        "event_unapplied": PendingEvent.objects.filter(
            applied_at=None, created_at__lte=timezone.now()
        ).values_list("run_id", flat=True)[:500],
        "dispatch_open": Dispatch.objects.filter(completed_at=None).values_list("pk", flat=True),
    }
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
        for index, read in reads.items():
            sql, params = read.query.sql_with_params()
            cursor.execute(f"EXPLAIN {sql}", params)
            plan = "\n".join(row[0] for row in cursor.fetchall())
            assert f"using {index} on" in plan, plan
