"""What a durable start costs the database: the run's row and its Start event, nothing read."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from engine.core.graph import Graph
from engine.models import PendingEvent, Run
from engine.runtime import runs

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
    statements = [q["sql"].split()[0].upper() for q in queries.captured_queries]
    work = [s for s in statements if s not in ("SAVEPOINT", "RELEASE", "BEGIN", "COMMIT")]
    assert work == ["INSERT", "INSERT"]
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
