"""DBOS's workflows and steps; `python -m bench.durable_peers.dbos_app EXECUTOR_ID` runs one
worker process on the system database `<prefix>dbos`.

Queues, polled every DBOS_QUEUE_POLL_S (DBOS's default is 1 s; tuned down in its favour):
`peers`, where the client enqueues runs, and `peers_fan`, where W2's parent enqueues its
1,000 steps (each runs as a child workflow). `fan_gather` is W2's other idiom: the steps as
an asyncio.gather inside one workflow.
"""

from __future__ import annotations

import asyncio
import signal
import sys
import threading
import time

from dbos import DBOS, DBOSConfig

from bench.durable_peers.common import PG, database

URL = f"{PG.replace('postgres://', 'postgresql://')}/{database('dbos')}"
VERSION = "peers-1"
QUEUE_POLL_S = 0.01
RESULT_POLL_S = 0.005  # W2's parent waits on each child's handle this often (default 1 s)


@DBOS.step()
def noop() -> None:
    """Do nothing: one step, its output checkpointed."""


@DBOS.step()
async def noop_async() -> None:
    """Do nothing, as a coroutine: one step of the gather idiom."""


@DBOS.step()
def sleepy() -> None:
    """Sleep 0.1 s: one step of the kill -9 test."""
    time.sleep(0.1)


@DBOS.workflow()
def chain(n: int) -> int:
    """W1 and W3: n steps one after another."""
    for _ in range(n):
        noop()
    return n


@DBOS.workflow()
def fan(n: int) -> int:
    """W2 the queue way: n steps enqueued as child workflows, awaited, then the join."""
    queue = DBOS.retrieve_queue("peers_fan")
    if queue is None:
        raise RuntimeError("the queue peers_fan is not registered")
    handles = [queue.enqueue(noop) for _ in range(n)]
    for handle in handles:
        handle.get_result(polling_interval_sec=RESULT_POLL_S)
    noop()
    return n


@DBOS.workflow()
async def fan_gather(n: int) -> int:
    """W2 in one workflow: n concurrent async steps, then the join."""
    await asyncio.gather(*[noop_async() for _ in range(n)])
    await noop_async()
    return n


@DBOS.workflow()
def sleepy_chain(n: int) -> int:
    """The kill -9 test: n steps of 0.1 s."""
    for _ in range(n):
        sleepy()
    return n


@DBOS.workflow()
def approval() -> int:
    """W4: say it is waiting, wait for a message, then one step."""
    DBOS.set_event("waiting", True)
    DBOS.recv("approve", timeout_seconds=300)
    noop()
    return 1


def serve(executor_id: str) -> None:
    """Launch DBOS as one executor, register the queues, and run until SIGTERM."""
    config: DBOSConfig = {"name": "braid-peers", "system_database_url": URL,
                          "executor_id": executor_id, "application_version": VERSION,
                          "log_level": "WARNING"}  # fmt: skip
    DBOS(config=config)
    DBOS.launch()
    for name in ("peers", "peers_fan"):
        DBOS.register_queue(name, polling_interval_sec=QUEUE_POLL_S, on_conflict="always_update")
    print("worker ready.", flush=True)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    stop.wait()
    DBOS.destroy()


if __name__ == "__main__":
    serve(sys.argv[1])
