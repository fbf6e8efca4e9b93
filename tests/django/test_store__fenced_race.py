"""Concurrent writers race old and new iterations and duplicates; rows converge to the newest."""

import random
import subprocess
import sys
import threading

import pytest
from django.db import connection, connections

from engine.core.events import RowStatus, WriteRow
from engine.models import NodeState, Run
from engine.runtime.store import write_rows
from tests.processes import ROOT, base_env

ITERATIONS = 30


def shuffled_writes(rng: random.Random) -> list[WriteRow]:
    """Every iteration's running and completed write for two nodes, duplicated, shuffled."""
    writes = [
        WriteRow(node=node, status=status, execution_id=f"root:1:poll:{n}:{branch}:1", attempt=1)
        for n in range(1, ITERATIONS + 1)
        for node, branch in (("check", "split.a"), ("count", "split.b"))
        for status in (RowStatus.RUNNING, RowStatus.COMPLETED)
    ] * 2
    rng.shuffle(writes)
    return writes


def newest() -> dict[str, tuple[str, str]]:
    """Return what every race must end with."""
    return {
        "check": ("completed", f"root:1:poll:{ITERATIONS}:split.a:1"),
        "count": ("completed", f"root:1:poll:{ITERATIONS}:split.b:1"),
    }


def rows(run: Run) -> dict[str, tuple[str, str]]:
    """Return the stored rows as (status, execution id)."""
    return {r.node: (r.status, r.execution_id) for r in NodeState.objects.filter(run=run)}


@pytest.fixture
def run(transactional_db: None) -> Run:
    """A committed run for writers to race on."""
    return Run.objects.create(label="race", graphs={}, status="running")


def test_threads_racing_every_iteration_twice_leave_the_newest_rows(run: Run) -> None:
    errors: list[BaseException] = []

    def writer(seed: int) -> None:
        try:
            for write in shuffled_writes(random.Random(seed)):
                write_rows(str(run.pk), [write])
        except BaseException as error:  # surfaced below: a thread's failure fails the test
            errors.append(error)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=writer, args=(seed,)) for seed in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert rows(run) == newest()


def test_processes_racing_every_iteration_twice_leave_the_newest_rows(run: Run) -> None:
    if connection.vendor != "postgresql":
        pytest.skip("separate processes need a shared database: runs in the PostgreSQL pass")
    db = connection.settings_dict
    env = base_env(DATABASE_URL=f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}")
    command = [sys.executable, "-m", "tests.django.fence_writer", str(run.pk)]
    writers = [subprocess.Popen([*command, str(seed)], cwd=ROOT, env=env) for seed in range(4)]
    assert [writer.wait(timeout=120) for writer in writers] == [0, 0, 0, 0]
    assert rows(run) == newest()


def test_a_late_write_of_an_older_iteration_after_the_newest_changes_nothing(run: Run) -> None:
    write_rows(str(run.pk), [WriteRow(node="check", status=RowStatus.COMPLETED,
                                      execution_id="root:1:poll:10:split.a:1")])  # fmt: skip
    write_rows(str(run.pk), [WriteRow(node="check", status=RowStatus.RUNNING,
                                      execution_id="root:1:poll:9:split.a:1")])  # fmt: skip
    assert rows(run) == {"check": ("completed", "root:1:poll:10:split.a:1")}
