"""bench.durable's flatness section on PostgreSQL: a level leaves that many requests open
and parks the rest, parked requests are unparked by the next level that needs them, and a
sample's decisions complete their runs."""

import dataclasses

import pytest
from django.db import connection
from django.test import Client

from approvals.models import ApprovalRequest, ApprovalStatus
from bench.durable import QUICK, decider, flat_sample, open_flat_runs, set_level

pytestmark = pytest.mark.django_db(transaction=True)


def open_runs() -> set[str]:
    found = ApprovalRequest.objects.filter(status=ApprovalStatus.OPEN)
    return {str(run) for run in found.values_list("run_id", flat=True)}


def test_a_level_leaves_as_many_requests_open_spread_over_the_population() -> None:
    if connection.vendor != "postgresql":
        pytest.skip("the bench builds its population with PostgreSQL's unsynced commits")
    population = open_flat_runs(8)
    opened, _ = set_level(population, 2)
    assert opened == [population[2], population[6]]
    assert open_runs() == set(opened)
    opened, _ = set_level(population, 8)
    assert opened == population
    assert open_runs() == set(population)


def test_a_sample_decides_spread_requests_and_their_runs_complete() -> None:
    if connection.vendor != "postgresql":
        pytest.skip("the bench builds its population with PostgreSQL's unsynced commits")
    population = open_flat_runs(6)
    opened, _ = set_level(population, 4)
    client = Client(HTTP_HOST="127.0.0.1")
    client.force_login(decider())
    sample = flat_sample(client, opened, dataclasses.replace(QUICK, flat_decisions=2))
    assert sample["decided"] == [opened[1], opened[3]]
    assert len(sample["decide_ms"]) == 1 and len(sample["inbox_ms"]) == 1
    assert open_runs() == {opened[0], opened[2]}
