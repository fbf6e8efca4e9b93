"""DBOS on PostgreSQL `<prefix>dbos`, two worker processes: W1-W4 for one round.

  python -m bench.durable_peers.dbos_subject --round N --plan quick --out rows.jsonl

Starts two `dbos_app` workers (executor ids w1 and w2), enqueues runs with DBOSClient (how a
process outside the app starts DBOS workflows), and sees completion by polling
`dbos.workflow_status` every POLL_S, one query for all the runs still open, as Braid's
client polls its Run rows. W4 is DBOS's send/recv.
"""

from __future__ import annotations

import os
import sys
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import psycopg

from bench.durable import Processes
from bench.durable_peers.common import (
    SETTLE_S,
    START_CALLERS,
    W1_STEPS,
    W2_WIDTH,
    W3_RUNS,
    W3_STEPS,
    Options,
    Recorder,
    log,
    options,
    scratch,
    watch,
)
from bench.durable_peers.dbos_app import URL, VERSION

APP = "bench.durable_peers.dbos_app"
SUCCEEDED, FAILED = "SUCCESS", ("ERROR", "CANCELLED", "MAX_RECOVERY_ATTEMPTS_EXCEEDED")


def start_dbos(procs: Processes) -> dict[str, Any]:
    """Start the two executors; return them by executor id."""
    started = {f"w{i}": procs.start(f"w{i}", [sys.executable, "-m", APP, f"w{i}"]) for i in (1, 2)}
    for name, process in started.items():
        procs.wait_ready(name, process)
    return started


class Dbos:
    """The client: enqueues workflows, reads their status rows, sends messages."""

    def __init__(self) -> None:
        from dbos import DBOSClient

        self.client = DBOSClient(system_database_url=URL)
        self.db = psycopg.connect(URL, autocommit=True)

    def close(self) -> None:
        self.db.close()
        self.client.destroy()

    def enqueue(self, name: str, *arg: Any) -> str:
        """Enqueue one workflow on the `peers` queue; return its id."""
        workflow_id = f"{name}-{uuid.uuid4()}"
        options = {"queue_name": "peers", "workflow_name": name, "workflow_id": workflow_id,
                   "app_version": VERSION}  # fmt: skip
        self.client.enqueue(options, *arg)  # type: ignore[arg-type]  # a TypedDict, built here
        return workflow_id

    def finished(self, ids: list[str]) -> dict[str, bool]:
        """Return which workflows have ended, and whether each succeeded."""
        rows = self.db.execute(
            "SELECT workflow_uuid, status FROM dbos.workflow_status"
            " WHERE workflow_uuid = ANY(%s) AND status = ANY(%s)",
            (ids, [SUCCEEDED, *FAILED]),
        ).fetchall()
        return {row[0]: row[1] == SUCCEEDED for row in rows}

    def one(self, name: str, n: int) -> float:
        """Return the seconds from the enqueue call until the workflow is seen succeeded."""
        began = time.perf_counter()
        workflow_id = self.enqueue(name, n)
        return watch({workflow_id: began}, self.finished)[0] - began

    def start_timed(self, _: int) -> tuple[str, float]:
        """Enqueue one W3 chain; return its id and when its call began."""
        began = time.perf_counter()
        return self.enqueue("chain", W3_STEPS), began

    def many(self, n: int) -> tuple[float, float, list[float]]:
        """Enqueue n W3 chains from START_CALLERS threads; as Braid.many."""
        began = time.perf_counter()
        with ThreadPoolExecutor(START_CALLERS) as pool:
            started = dict(pool.map(self.start_timed, range(n)))
        calls_done = time.perf_counter()
        seen, latencies = watch(started, self.finished)
        return seen - began, calls_done - began, latencies

    def decision(self) -> float:
        """Return the seconds from send() until the workflow is seen succeeded."""
        workflow_id = self.enqueue("approval")
        self.client.get_event(workflow_id, "waiting", timeout_seconds=60)
        time.sleep(SETTLE_S)
        began = time.perf_counter()
        self.client.send(workflow_id, "yes", topic="approve")
        return watch({workflow_id: began}, self.finished)[0] - began


def warm_up(dbos: Dbos, only: frozenset[str]) -> None:
    """One untimed, smaller instance of each workload and idiom."""
    began = time.perf_counter()
    if "W1" in only:
        dbos.one("chain", 10)
    if "W2" in only:
        dbos.one("fan", W2_WIDTH // 10)
        dbos.one("fan_gather", W2_WIDTH // 10)
    if "W3" in only:
        dbos.many(20)
    if "W4" in only:
        dbos.decision()
    log(f"dbos: warm-up {time.perf_counter() - began:.1f} s")


def measure(dbos: Dbos, opts: Options, record: Recorder) -> None:
    """Each workload the plan's number of times; W2 in both idioms."""
    plan = opts.plan
    if "W1" in opts.only:
        record.add("W1", [dbos.one("chain", W1_STEPS) for _ in range(plan.w1_runs)])
    if "W2" in opts.only:
        values = [dbos.one("fan", W2_WIDTH) for _ in range(plan.w2_runs)]
        record.add("W2", values, variant="child workflows on a queue")
        values = [dbos.one("fan_gather", W2_WIDTH) for _ in range(plan.w2_runs)]
        record.add("W2alt", values, variant="asyncio.gather in one workflow")
    if "W3" in opts.only:
        for _ in range(plan.w3_runs):
            elapsed, calls, latencies = dbos.many(W3_RUNS)
            record.add("W3", [W3_RUNS / elapsed], "runs/s", latencies=tuple(latencies),
                       start_phase_s=calls)  # fmt: skip
    if "W4" in opts.only:
        record.add("W4", [dbos.decision() for _ in range(plan.w4_runs)])


def main(argv: list[str] | None = None) -> int:
    opts = options(argv)
    logs = scratch() / "logs" / f"dbos-r{opts.round}"
    logs.mkdir(parents=True, exist_ok=True)
    procs = Processes(dict(os.environ), logs)
    try:
        start_dbos(procs)
        dbos = Dbos()
        try:
            warm_up(dbos, opts.only)
            measure(dbos, opts, Recorder("dbos", opts.round, opts.out))
        finally:
            dbos.close()
    finally:
        procs.stop_all()
    return 0


if __name__ == "__main__":
    sys.exit(main())
