"""The peers benchmark runs Braid's workers (and the raw Celery floor's) as the Procfile does,
and kills what the Procfile's pool has: a pool process only under prefork."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from bench.durable_peers.common import ProcfileWorker, procfile_workers
from bench.durable_peers.kill import kill_cases, worker_of
from braid.supervise import pool_of, worker_flags
from chaos.driver import parse

PROCFILE = Path(__file__).resolve().parents[2] / "Procfile"


def test_the_procfile_runs_thread_pool_workers_unless_braid_worker_pool_says() -> None:
    for environment, pool in (({}, "threads"), ({"BRAID_WORKER_POOL": "prefork"}, "prefork")):
        assert worker_flags(PROCFILE, environment) == [
            [f"--hostname=worker{n}@%h", f"--pool={pool}", "--concurrency=4", "--loglevel=INFO"]
            for n in (1, 2)
        ]


def test_the_bench_takes_the_procfiles_flags_as_shipped_whatever_this_shell_sets(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("BRAID_WORKER_POOL", "prefork")  # an operator's setting, not the product's
    procfile_workers.cache_clear()
    shipped = ProcfileWorker(("--pool=threads", "--concurrency=4"), "threads")
    assert procfile_workers() == (shipped, shipped)
    assert kill_cases() == ["none", "worker"]
    assert worker_of(12345) == 12345  # a thread pool's task runs in the worker process itself


def test_chaos_runs_the_procfiles_pool_unless_told_otherwise() -> None:
    assert parse(["--seed", "1"]).pool == pool_of(worker_flags(PROCFILE, {})[0]) == "threads"
    assert parse(["--seed", "1", "--pool", "prefork"]).pool == "prefork"


def test_a_worker_without_a_pool_flag_is_celerys_prefork() -> None:
    assert pool_of(["--concurrency=4"]) == "prefork"
    assert pool_of(["--pool=prefork", "--pool=threads"]) == "threads"


def test_reading_the_procfile_leaves_the_runs_environment_to_its_drivers_as_it_was() -> None:
    """The run's process hands its environment to every driver: importing `braid` there set
    DJANGO_SETTINGS_MODULE, and a driver's first Celery app (not Braid's) became the default."""
    script = (
        "import os; from bench.durable_peers.report import machine; machine(); "
        "print(os.environ.get('DJANGO_SETTINGS_MODULE'))"
    )
    environment = {k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"}
    found = subprocess.run([sys.executable, "-c", script], cwd=PROCFILE.parent, text=True,
                           env=environment, capture_output=True, check=True).stdout  # fmt: skip
    assert found.strip() == "None"
