"""The peers benchmark's Braid client observes runs as DBOS's does: one statement, the ids
as one array, answering which have finished and whether each completed."""

import pytest
from django.db import connection

from bench.durable_peers.braid_subject import Braid
from engine.models import Run
from engine.runtime.runs import create_run
from runs.services import resolve_graphs
from tests.django.test_durable__dispatch import fork_of

pytestmark = pytest.mark.django_db


def test_the_client_sees_finished_runs_and_only_those() -> None:
    if connection.vendor != "postgresql":
        pytest.skip("the client's look is PostgreSQL's (uuid[] and ANY); run with DATABASE_URL")
    graphs = resolve_graphs(fork_of(1))
    ids = [str(create_run(graphs, "look", {}).pk) for _ in range(4)]
    for run_id, status in zip(ids, ["completed", "failed", "cancelled"], strict=False):
        Run.objects.filter(pk=run_id).update(status=status)
    client = Braid.__new__(Braid)  # its look needs no graphs, user or HTTP connection
    assert client.finished(ids) == {ids[0]: True, ids[1]: False, ids[2]: False}
    assert client.finished(ids[3:]) == {}
