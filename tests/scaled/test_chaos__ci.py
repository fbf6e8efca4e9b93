"""The CI form of `make chaos`: 50 runs under 8 faults hold the same zeros, under each of
Celery's pools a worker may run (the Procfile's thread pool, and prefork).

It runs the chaos driver (`python -m chaos`, docs/reliability.md) as a process: Daphne and
3 Celery workers over a fresh PostgreSQL database and a Redis of its own (or, without the
redis-server binary, database 8 of the test Redis, then without Redis restarts).
"""

import json
import os
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from tests.processes import ROOT, free_port
from tests.servers import require_postgres, require_redis

pytestmark = [pytest.mark.redis, pytest.mark.postgres]

RUNS = 50


# Each pool a seed of its own (its database is braid_chaos_<seed>).
@pytest.mark.parametrize(("pool", "seed"), [("threads", 1718), ("prefork", 1717)])
def test_fifty_runs_under_faults_lose_nothing_and_match_the_oracle(
    tmp_path: Path, pool: str, seed: int
) -> None:
    postgres = require_postgres()
    redis = urlsplit(require_redis())
    where = (["--redis-port", str(free_port())] if os.access("/usr/bin/redis-server", os.X_OK)
             else ["--redis-url", f"redis://{redis.hostname}:{redis.port}/8"])  # fmt: skip
    summary_path = tmp_path / "summary.json"
    command = [sys.executable, "-m", "chaos", "--seed", str(seed), "--runs", str(RUNS),
               "--pool", pool,
               "--postgres-url", postgres, "--drain-timeout", "150", "--json",
               str(summary_path), *where]  # fmt: skip
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=480)
    assert summary_path.exists(), result.stdout[-4000:] + result.stderr[-4000:]
    summary = json.loads(summary_path.read_text())
    report = result.stdout[-3000:]
    assert summary["invariants"] == {
        "lost runs": 0,
        "stuck runs": 0,
        "running without a live lease": 0,
        "duplicate completions": 0,
        "oracle mismatches": 0,
        "row regressions seen live": 0,
        "row regressions in the trace": 0,
        "runs started twice": 0,
        "events unapplied longer than one sweep interval": 0,
    }, report
    # Every run's start is an inbox event, and the sampler measured each event's wait.
    assert summary["unapplied"]["measured"] >= RUNS and summary["unapplied"]["limit_s"] == 1.0
    assert summary["drained"], report
    assert summary["pool"] == pool
    injected = summary["fault_counts"]
    assert injected["kill-child"] + injected["kill-main"] >= 2, report
    if pool == "threads":  # a thread pool has no pool process to kill: its workers are
        assert injected["kill-child"] == 0 and injected["kill-main"] >= 2, report
    assert injected["pg-restart"] == 1 and injected["crash-after-commit"] == 1, report
    assert sum(injected.values()) >= 5, report
    assert sum(summary["statuses"].values()) >= RUNS, report
    assert result.returncode == 0, report
