"""Live push: after a step commits, tell the monitor's sockets that a run's rows changed.

The engine's hot path only marks the run dirty (a set insert under a lock). A publisher
thread per process sends one "changed" message per dirty run every FLUSH_S seconds to the
run's group, so a burst of 10,000 foreach steps costs the channel layer a handful of
messages, and only to groups a socket joined (joined_groups). The runs list's group gets
one message naming every run changed since the last one, at most once per LIST_FLUSH_S
slot of the wall clock: a list is live within a second, and each message costs a serving
process about 2.4 ms of CPU to receive, more than the runs did when every process sent
one per flush (bench/MONITOR.md). Sharing the slots, the processes of a busy machine tell
the list together, so a serving process refreshes the list once per slot. The inbox's notices
(approvals/live.py) go the same way. The consumers (monitor/consumers.py) compute what
to send: the engine never builds a browser's message.

With the in-memory channel layer (`make run`), the layer lives in the serving process and
its queues belong to Daphne's event loop, so messages are handed to that loop. With
channels-redis (scaled mode), a worker process sends through Redis from its own loop.
"""

from __future__ import annotations

import asyncio
import logging
import math
import os
import threading
import time
from collections.abc import Callable
from typing import Any

from channels.layers import InMemoryChannelLayer, get_channel_layer
from channels_redis.core import RedisChannelLayer
from django.conf import settings
from django.db import transaction

FLUSH_S = 0.05
LIST_FLUSH_S = 1.0
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
        self.listed: set[str] = set()  # changed runs the runs list has not been told of
        self.listed_slot = -1  # the LIST_FLUSH_S slot of the wall clock it was last told in
        self.notices: set[tuple[str, str]] = set()  # (group, message type), e.g. the inbox's
        self.wake = threading.Event()
        self.pid = 0
        self.thread: threading.Thread | None = None
        self.serving_loop: asyncio.AbstractEventLoop | None = None

    def mark(self, run_id: str) -> None:
        """Remember that a run changed; start the thread on first use in this process."""
        self.add(lambda: self.dirty.add(run_id))

    def notify(self, groups: set[str], kind: str) -> None:
        """Remember to send a bare `{"type": kind}` to each group (coalesced like runs)."""
        self.add(lambda: self.notices.update((group, kind) for group in groups))

    def add(self, remember: Callable[[], None]) -> None:
        """Record something to send under the lock; start the thread if this process has none."""
        with self.lock:
            remember()
            if self.pid != os.getpid() or self.thread is None or not self.thread.is_alive():
                self.pid = os.getpid()  # a forked worker child starts its own thread
                self.thread = threading.Thread(target=self.loop, name="braid-live", daemon=True)
                self.thread.start()
        self.wake.set()

    def take(self, now: float) -> list[tuple[str, dict[str, Any]]]:
        """Return and forget what is to be sent at `now` (time.time()), as (group, message)
        pairs: the runs list is told once per slot of LIST_FLUSH_S seconds at most."""
        slot = math.floor(now / LIST_FLUSH_S)
        with self.lock:
            runs, self.dirty = sorted(self.dirty), set()
            notices, self.notices = sorted(self.notices), set()
            self.listed.update(runs)
            listed: list[str] = []
            if self.listed and slot != self.listed_slot:
                listed, self.listed, self.listed_slot = sorted(self.listed), set(), slot
        messages: list[tuple[str, dict[str, Any]]] = [
            (run_group(r), {"type": "run.changed", "run": r}) for r in runs
        ]
        if listed:
            messages.append((RUNS_GROUP, {"type": "runs.changed", "runs": listed}))
        return messages + [(group, {"type": kind}) for group, kind in notices]

    def list_due_in(self, now: float) -> float | None:
        """Return the seconds until the runs list's held changes are due (the start of the
        next slot when this slot has been told already); None if none are held."""
        with self.lock:
            if not self.listed:
                return None
            if math.floor(now / LIST_FLUSH_S) != self.listed_slot:
                return 0.0
            return max(0.0, (self.listed_slot + 1) * LIST_FLUSH_S - now)

    def loop(self) -> None:
        """Flush forever: wait for a change (or for the runs list's held changes to be due),
        let a burst gather, send one message per run.

        The thread blocks on a plain Event (no executor threads, which would keep the
        interpreter from exiting) and keeps one event loop of its own for the sends.
        """
        sending = asyncio.new_event_loop()
        while True:
            self.wake.wait(self.list_due_in(time.time()))
            self.wake.clear()
            time.sleep(FLUSH_S)
            try:
                sending.run_until_complete(self.send(self.take(time.time())))
            except Exception:  # a lost notice only delays a browser; the next change resyncs
                logger.exception("publishing run changes failed")

    async def send(self, messages: list[tuple[str, dict[str, Any]]]) -> None:
        """Send each message to its group: on Daphne's loop for the in-memory layer."""
        layer = get_channel_layer()
        if not messages or layer is None:
            return
        if isinstance(layer, InMemoryChannelLayer):
            loop = self.serving_loop
            if loop is None or not loop.is_running():
                # No socket has connected in this process, or the loop that served them
                # stopped (between tests): nobody to tell, and a send scheduled on a
                # stopped loop would reach whoever joins the group when it runs again.
                return
            for group, message in messages:
                asyncio.run_coroutine_threadsafe(layer.group_send(group, message), loop)
            return
        joined = await joined_groups(layer, {group for group, _ in messages})
        for group, message in messages:
            if group in joined:
                await layer.group_send(group, message)


async def joined_groups(layer: Any, groups: set[str]) -> set[str]:
    """Return the groups some socket may have joined: with channels-redis, those whose key
    exists, asked in one pipelined round trip per Redis host; with any other layer, all.

    Most runs have nobody watching them, and a group_send costs two round trips even to an
    empty group, each a few hundred microseconds of a worker's CPU on a busy machine. A
    group's key exists from its first member's group_add (which a socket makes before
    reading its snapshot) until group_expiry after the last, so a group with a member is
    never skipped; a stale one costs only a send. tests/django/test_monitor__publisher.py
    checks the key against channels-redis itself.
    """
    if not isinstance(layer, RedisChannelLayer):
        return groups
    by_host: dict[int, list[str]] = {}
    for group in sorted(groups):
        by_host.setdefault(layer.consistent_hash(group), []).append(group)
    joined: set[str] = set()
    for index, names in by_host.items():
        pipe = layer.connection(index).pipeline(transaction=False)
        for name in names:
            pipe.exists(layer._group_key(name))
        found = await pipe.execute()
        joined.update(name for name, exists in zip(names, found, strict=True) if exists)
    return joined


PUBLISHER = Publisher()


def changed(run_id: str) -> None:
    """Mark a run changed once the current transaction commits (now if there is none)."""
    if getattr(settings, "BRAID_LIVE", True):
        transaction.on_commit(lambda: PUBLISHER.mark(run_id))


def notify_after_commit(groups: set[str], kind: str) -> None:
    """Send `{"type": kind}` to the groups once the current transaction commits."""
    if groups:
        transaction.on_commit(lambda: PUBLISHER.notify(groups, kind))


def attach_serving_loop() -> None:
    """Called by consumers: the in-memory layer's messages go to this (Daphne's) loop."""
    PUBLISHER.serving_loop = asyncio.get_running_loop()
