"""Temporal's workflows and activities; `python -m bench.durable_peers.temporal_app ADDR NAME`
runs one worker process.

Self-contained (standard library and temporalio only): Temporal's sandbox imports this module
again for every workflow run. Activities are async no-ops; the workflows use Temporal's two
idioms: activities (each a task on the server's queue) and local activities (run in the
workflow's worker, recorded when the workflow task completes).
"""

from __future__ import annotations

import asyncio
import sys
from datetime import timedelta

from temporalio import activity, workflow

QUEUE = "peers"
LIMIT = timedelta(seconds=120)
SLEEPY_LIMIT = timedelta(seconds=5)  # the kill -9 test's activities: retried after this


@activity.defn
async def noop() -> None:
    """Do nothing: one step."""


@activity.defn
async def sleepy() -> None:
    """Sleep 0.1 s: one step of the kill -9 test."""
    await asyncio.sleep(0.1)


@workflow.defn
class Chain:
    """W1 and W3: n activities one after another."""

    @workflow.run
    async def run(self, n: int) -> int:
        for _ in range(n):
            await workflow.execute_activity(noop, start_to_close_timeout=LIMIT)
        return n


@workflow.defn
class Fan:
    """W2: n concurrent activities, then one more (the join)."""

    @workflow.run
    async def run(self, n: int) -> int:
        steps = [workflow.execute_activity(noop, start_to_close_timeout=LIMIT) for _ in range(n)]
        await asyncio.gather(*steps)
        await workflow.execute_activity(noop, start_to_close_timeout=LIMIT)
        return n


@workflow.defn
class LocalChain:
    """W1 as local activities."""

    @workflow.run
    async def run(self, n: int) -> int:
        for _ in range(n):
            await workflow.execute_local_activity(noop, start_to_close_timeout=LIMIT)
        return n


@workflow.defn
class LocalFan:
    """W2 as local activities."""

    @workflow.run
    async def run(self, n: int) -> int:
        steps = [
            workflow.execute_local_activity(noop, start_to_close_timeout=LIMIT) for _ in range(n)
        ]
        await asyncio.gather(*steps)
        await workflow.execute_local_activity(noop, start_to_close_timeout=LIMIT)
        return n


@workflow.defn
class SleepyChain:
    """The kill -9 test: n activities of 0.1 s."""

    @workflow.run
    async def run(self, n: int) -> int:
        for _ in range(n):
            await workflow.execute_activity(sleepy, start_to_close_timeout=SLEEPY_LIMIT)
        return n


@workflow.defn
class Approval:
    """W4: wait for a signal, then one activity."""

    def __init__(self) -> None:
        self.approved = False

    @workflow.signal
    def approve(self) -> None:
        self.approved = True

    @workflow.query
    def waiting(self) -> bool:
        return not self.approved

    @workflow.run
    async def run(self) -> int:
        await workflow.wait_condition(lambda: self.approved)
        await workflow.execute_activity(noop, start_to_close_timeout=LIMIT)
        return 1


WORKFLOWS = [Chain, Fan, LocalChain, LocalFan, SleepyChain, Approval]


async def serve(address: str, name: str) -> None:
    """Run one worker on the queue, with the SDK's default concurrency."""
    from temporalio.client import Client
    from temporalio.worker import Worker

    client = await Client.connect(address)
    worker = Worker(client, task_queue=QUEUE, workflows=WORKFLOWS, activities=[noop, sleepy],
                    identity=name)  # fmt: skip
    print("worker ready.", flush=True)
    await worker.run()


if __name__ == "__main__":
    asyncio.run(serve(sys.argv[1], sys.argv[2]))
