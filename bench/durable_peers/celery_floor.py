"""The floor: raw Celery with Braid's own Celery settings and no workflow state. W1-W3.

  python -m bench.durable_peers.celery_floor --round N --plan quick --out rows.jsonl

This module is also the workers' app (`celery -A bench.durable_peers.celery_floor worker`).
Every `CELERY_*` setting comes from braid/settings.py, copied into a dict as Braid's app
copies them (braid/celery.py: each lookup a message makes is a dict's, on both sides), and
read as Braid's workers read it (acks late, reject on worker lost, prefetch 1 and no
prefetch over Redis, results ignored, the same visibility timeout and polling); only the
broker (PEERS_REDIS_FLOOR) differs, and a result backend on the same Redis, which a chord
needs for its header's results. Two workers with the pool and concurrency of Braid's (the
Procfile's worker lines). The last task of each run adds the run's id to a Redis set; the
client polls that set every POLL_S. W4 does not apply: Celery has no pause.
"""

from __future__ import annotations

import importlib
import math
import os
import sys
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from celery import Celery, chain, chord

from bench.durable import Processes, start_workers
from bench.durable_peers.common import (
    BIN,
    ROOT,
    START_CALLERS,
    W1_STEPS,
    W2_WIDTH,
    W3_RUNS,
    W3_STEPS,
    Options,
    Recorder,
    log,
    options,
    procfile_workers,
    redis_url,
    scratch,
)

QUEUE = "peers-floor"
DONE = "peers:floor:done:"
CURRENT = "peers:floor:current"  # the pid running the kill test's current task
SLOTS = 8  # two workers of four task slots (the Procfile's concurrency), as Braid's
# As Braid's dispatch cuts a wide fan-out (braid/settings.py): two chunks per task slot,
# at most BRAID_DISPATCH_STREAMS (32) messages.
CHUNKS = min(32, 2 * SLOTS)

app = Celery("peers_floor", set_as_current=False)
BRAID_SETTINGS = importlib.import_module("braid.settings")
app.config_from_object(
    {name: value for name, value in vars(BRAID_SETTINGS).items() if name.startswith("CELERY_")},
    namespace="CELERY",
)
app.conf.update(
    broker_url=redis_url("floor"),
    result_backend=redis_url("floor"),
    task_default_queue=QUEUE,
    beat_schedule={},
    result_expires=600,
)


def redis_client() -> Any:
    """Return the Redis client of the result backend (the done sets live beside the results)."""
    backend: Any = app.backend
    return backend.client


@app.task(name="peers.noop")
def noop() -> None:
    """Do nothing: one step of a chain."""


@app.task(name="peers.noop_kept", ignore_result=False)
def noop_kept() -> None:
    """Do nothing, keeping a result: one task of a chord's header (the chord counts them)."""


@app.task(name="peers.sleepy")
def sleepy() -> None:
    """Sleep 0.1 s, saying which process runs it: one step of the kill -9 test."""
    redis_client().set(CURRENT, os.getpid())
    time.sleep(0.1)


@app.task(name="peers.final")
def final(*_: object, batch: str, member: str) -> None:
    """The run's last step: say it is done, where the client looks."""
    redis_client().sadd(DONE + batch, member)


def floor_env() -> dict[str, str]:
    """Return the workers' environment: Braid's settings module readable, no Django set up."""
    kept = {k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"}
    return kept | {"REDIS_URL": redis_url("floor"), "PYTHONPATH": str(ROOT),
                   "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}  # fmt: skip


def start_floor(procs: Processes) -> None:
    """Start the two workers and wait until they are ready."""
    extra = [[*worker.flags, "-Q", QUEUE] for worker in procfile_workers()]
    names = [f"floor{i}" for i in range(1, len(extra) + 1)]
    start_workers(procs, "bench.durable_peers.celery_floor", names, extra)
    time.sleep(1)


class Floor:
    """The client: sends chains and chords, watches the done set."""

    def __init__(self) -> None:
        self.redis = redis_client()

    def done(self, batch: str) -> set[str]:
        """Return the members of a batch's done set."""
        return {m.decode() for m in self.redis.smembers(DONE + batch)}

    def wait(self, batch: str, started: dict[str, float]) -> tuple[float, list[float]]:
        """Poll the done set; return the last sighting and each run's latency."""
        from bench.durable_peers.common import watch

        def finished(ids: list[str]) -> dict[str, bool]:
            return dict.fromkeys(self.done(batch) & set(ids), True)

        return watch(started, finished)

    def chain(self, steps: int) -> float:
        """W1: one chain of `steps` tasks (the last one says done)."""
        batch, began = str(uuid.uuid4()), time.perf_counter()
        chain(*[noop.si() for _ in range(steps - 1)], final.si(batch=batch, member="1")).delay()
        return self.wait(batch, {"1": began})[0] - began

    def chord(self, width: int, chunks: int = 0) -> float:
        """W2: a chord of `width` tasks and one join; in `chunks` messages when given."""
        batch, began = str(uuid.uuid4()), time.perf_counter()
        header: Any = [noop_kept.si() for _ in range(width)]
        if chunks:
            header = noop_kept.chunks([()] * width, math.ceil(width / chunks)).group()
        chord(header)(final.s(batch=batch, member="1"))
        return self.wait(batch, {"1": began})[0] - began

    def many(self, n: int) -> tuple[float, float, list[float]]:
        """W3: n chains of W3_STEPS from START_CALLERS threads."""
        batch, began = str(uuid.uuid4()), time.perf_counter()

        def send(i: int) -> tuple[str, float]:
            sent = time.perf_counter()
            steps = [noop.si() for _ in range(W3_STEPS - 1)]
            chain(*steps, final.si(batch=batch, member=str(i))).delay()
            return str(i), sent

        with ThreadPoolExecutor(START_CALLERS) as pool:
            started = dict(pool.map(send, range(n)))
        calls_done = time.perf_counter()
        seen, latencies = self.wait(batch, started)
        return seen - began, calls_done - began, latencies


def measure(floor: Floor, opts: Options, record: Recorder) -> None:
    """Warm up with smaller instances, then each workload the plan's number of times."""
    began = time.perf_counter()
    floor.chain(10), floor.chord(100), floor.chord(100, CHUNKS), floor.many(20)
    log(f"celery floor: warm-up {time.perf_counter() - began:.1f} s")
    plan = opts.plan
    if "W1" in opts.only:
        record.add("W1", [floor.chain(W1_STEPS) for _ in range(plan.w1_runs)])
    if "W2" in opts.only:
        record.add("W2", [floor.chord(W2_WIDTH) for _ in range(plan.w2_runs)],
                   variant="one message per task")  # fmt: skip
        batched = [floor.chord(W2_WIDTH, CHUNKS) for _ in range(plan.w2_runs)]
        record.add("W2alt", batched, variant=f"chunks: {CHUNKS} messages")
    if "W3" in opts.only:
        for _ in range(plan.w3_runs):
            elapsed, calls, latencies = floor.many(W3_RUNS)
            record.add("W3", [W3_RUNS / elapsed], "runs/s", latencies=tuple(latencies),
                       start_phase_s=calls)  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    opts = options(argv)
    logs = scratch() / "logs" / f"celery-r{opts.round}"
    logs.mkdir(parents=True, exist_ok=True)
    procs = Processes(floor_env(), logs)
    try:
        start_floor(procs)
        measure(Floor(), opts, Recorder("celery", opts.round, opts.out))
    finally:
        procs.stop_all()
    return 0


if __name__ == "__main__":
    sys.exit(main())
