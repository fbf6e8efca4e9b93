"""Live push: after a step commits, tell the monitor's sockets that a run's rows changed.

The engine's hot path only marks the run dirty (a set insert under a lock). A publisher
thread per process sends one "changed" message per dirty run every FLUSH_S seconds, to
the run's group and to the runs list's group, so a burst of 10,000 foreach steps costs
the channel layer a handful of messages. The consumers (monitor/consumers.py) compute
what to send: the engine never builds a browser's message.

With the in-memory channel layer (`make run`), the layer lives in the serving process and
its queues belong to Daphne's event loop, so messages are handed to that loop. With
channels-redis (scaled mode), a worker process sends through Redis from its own loop.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
import time

from channels.layers import InMemoryChannelLayer, get_channel_layer
from django.conf import settings
from django.db import transaction

FLUSH_S = 0.05
RUNS_GROUP = "runs"
logger = logging.getLogger(__name__)


def run_group(run_id: str) -> str:
    """Return the channel group of one run: from its UUID only, never from labels."""
    return f"run.{run_id.replace('-', '')}"


class Publisher:
    """Collects dirty run ids and flushes them from a thread of this process."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.dirty: set[str] = set()
        self.wake = threading.Event()
        self.pid = 0
        self.thread: threading.Thread | None = None
        self.serving_loop: asyncio.AbstractEventLoop | None = None

    def mark(self, run_id: str) -> None:
        """Remember that a run changed; start the thread on first use in this process."""
        with self.lock:
            self.dirty.add(run_id)
            if self.pid != os.getpid() or self.thread is None or not self.thread.is_alive():
                self.pid = os.getpid()  # a forked worker child starts its own thread
                self.thread = threading.Thread(target=self.loop, name="braid-live", daemon=True)
                self.thread.start()
        self.wake.set()

    def take(self) -> list[str]:
        """Return and forget the dirty run ids."""
        with self.lock:
            taken, self.dirty = sorted(self.dirty), set()
        return taken

    def loop(self) -> None:
        """Flush forever: wait for a change, let a burst gather, send one message per run.

        The thread blocks on a plain Event (no executor threads, which would keep the
        interpreter from exiting) and keeps one event loop of its own for the sends.
        """
        sending = asyncio.new_event_loop()
        while True:
            self.wake.wait()
            self.wake.clear()
            time.sleep(FLUSH_S)
            try:
                sending.run_until_complete(self.send(self.take()))
            except Exception:  # a lost notice only delays a browser; the next change resyncs
                logger.exception("publishing run changes failed")

    async def send(self, run_ids: list[str]) -> None:
        """Send one "changed" message per run, and one to the runs list."""
        if not run_ids:
            return
        layer = get_channel_layer()
        if layer is None:
            return
        messages = [(run_group(r), {"type": "run.changed", "run": r}) for r in run_ids]
        messages.append((RUNS_GROUP, {"type": "runs.changed", "runs": run_ids}))
        if isinstance(layer, InMemoryChannelLayer):
            loop = self.serving_loop
            if loop is None or loop.is_closed():
                return  # no socket has connected in this process: nobody to tell
            for group, message in messages:
                asyncio.run_coroutine_threadsafe(layer.group_send(group, message), loop)
            return
        for group, message in messages:
            await layer.group_send(group, message)


PUBLISHER = Publisher()


def changed(run_id: str) -> None:
    """Mark a run changed once the current transaction commits (now if there is none)."""
    if getattr(settings, "BRAID_LIVE", True):
        transaction.on_commit(lambda: PUBLISHER.mark(run_id))


def attach_serving_loop() -> None:
    """Called by consumers: the in-memory layer's messages go to this (Daphne's) loop."""
    PUBLISHER.serving_loop = asyncio.get_running_loop()
