"""What a durable start costs the database: the run's row and its Start event, nothing read."""

import uuid
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import IntegrityError, connection, transaction
from django.test.utils import CaptureQueriesContext

from engine.core.graph import Graph
from engine.models import PendingEvent, Run, Runtime
from engine.runtime import runs
from engine.runtime.backends.portable import PortableBackend
from engine.runtime.store import DjangoStore
from tests.django.fixture_types import DemoUsers

pytestmark = pytest.mark.django_db

FLOW = {
    "format": "braid.graph/1",
    "nodes": [{"id": "start", "type": "start"}, {"id": "done", "type": "end"}],
    "edges": [{"source": "start", "target": "done"}],
}


def test_a_start_inserts_the_run_and_its_start_event_and_reads_nothing() -> None:
    graphs = {"main": Graph.from_json(FLOW)}
    with CaptureQueriesContext(connection) as queries:
        run = runs.create_run(graphs, "tiny v1", {"n": 1})
    # A statement bound on the server is logged as "QUERY = '<text>' - PARAMS = ...".
    texts = [q["sql"].removeprefix("QUERY = '") for q in queries.captured_queries]
    statements = [text.split()[0].upper() for text in texts]
    work = [s for s in statements if s not in ("SAVEPOINT", "RELEASE", "BEGIN", "COMMIT")]
    # PostgreSQL inserts both rows in one statement (backends.postgresql.start_run).
    assert work == (["WITH"] if connection.vendor == "postgresql" else ["INSERT", "INSERT"])
    stored = Run.objects.get(pk=run.pk)
    assert (run.pk, run.status, run.label, run.input) == (
        stored.pk,
        stored.status,
        stored.label,
        stored.input,
    )
    assert type(run.pk) is type(stored.pk)
    assert (run.created_at, run.graphs_digest) == (stored.created_at, stored.graphs_digest)
    assert list(PendingEvent.objects.filter(run=run).values_list("key", flat=True)) == ["start"]


def test_a_start_stores_what_the_orm_would_store(demo_users: DemoUsers) -> None:
    """The one-statement insert prepares every column as the ORM's insert does: defaults,
    the time stamps, a text choice, JSON, the starter's key and the idempotency pair."""
    graphs = {"main": Graph.from_json(FLOW)}
    admin = User.objects.get(username="admin")
    fast = runs.create_run(graphs, "tiny v1", {"n": [1, "two", None]}, None, admin, ("k", "d"))
    by_orm = DjangoStore(None, admin, Runtime.DURABLE, ("k2", "d")).new_run(
        str(uuid.uuid4()), "tiny v1", {"n": [1, "two", None]},
        {key: g.to_json() for key, g in graphs.items()},
    )  # fmt: skip
    PortableBackend().start_run(by_orm, "start", {"kind": "start", "input": {"n": 1}})

    def stored(run: Run) -> dict[str, Any]:
        row = Run.objects.filter(pk=run.pk).values().get()
        return {k: v for k, v in row.items() if k not in ("id", "created_at", "updated_at")}

    assert stored(fast) == {**stored(by_orm), "idempotency_key": "k"}
    assert stored(fast)["runtime"] == "durable" and stored(fast)["started_by_id"] == admin.pk
    row = Run.objects.get(pk=fast.pk)
    assert (row.created_at, row.updated_at) == (fast.created_at, fast.updated_at)
    (event,) = PendingEvent.objects.filter(run=fast)
    assert (event.key, event.event["kind"], event.event["input"], event.applied_at) == (
        "start", "start", {"n": [1, "two", None]}, None,
    )  # fmt: skip
    assert abs((event.created_at - row.created_at).total_seconds()) < 1


def test_a_refused_key_inside_a_transaction_leaves_it_usable(demo_users: DemoUsers) -> None:
    graphs = {"main": Graph.from_json(FLOW)}
    admin = User.objects.get(username="admin")
    first = runs.create_run(graphs, "tiny v1", {}, None, admin, ("same", "d"))
    with transaction.atomic():
        with pytest.raises(IntegrityError):
            runs.create_run(graphs, "tiny v1", {}, None, admin, ("same", "d"))
        assert list(Run.objects.values_list("pk", flat=True)) == [first.pk]
    assert PendingEvent.objects.count() == 1
