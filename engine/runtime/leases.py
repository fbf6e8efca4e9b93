"""Worker leases: every process that runs actions says it is alive every few seconds.

An action's dispatch row names the process that claimed it. The sweeper re-sends the
actions of a process whose lease stopped beating (killed, or stopped), within seconds,
and leaves alone those of live processes, however long their actions take.
"""

import datetime as dt
import logging
import os
import queue
import socket
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.db import close_old_connections, connections
from django.db.models import QuerySet
from django.utils import timezone

from engine.models import WorkerLease

logger = logging.getLogger(__name__)
_lock = threading.Lock()
_name: str = ""
_pid: int | None = None
_stop = threading.Event()
_amends: list[Callable[[], object]] = []  # writes failed tasks left for the next beat
_amends_lock = threading.Lock()  # not _lock: start_beating beats while holding that
_soon: "queue.SimpleQueue[tuple[Callable[[], object], threading.Event]]" = queue.SimpleQueue()
_soon_pid: int | None = None
_soon_lock = threading.Lock()
_capacity: tuple[str, int] = ("", 1)  # this process's Celery worker, and its concurrency
_slots_cache: tuple[float, int] = (-1e9, 0)  # (when read, live slots), per process


def start_beating() -> str:
    """Start this process's heartbeat thread (once per process); return its lease name."""
    global _name, _pid
    with _lock:
        if _pid != os.getpid():
            _pid = os.getpid()
            _name = f"{socket.gethostname()}:{_pid}:{uuid.uuid4().hex[:8]}"
            _stop.clear()
            beat(_name)
            threading.Thread(
                target=beat_forever, args=(_name,), name="braid-lease", daemon=True
            ).start()
    return _name


def stop_beating() -> None:
    """Stop this process's heartbeat (the embedded worker stopped); forget its lease name."""
    global _name, _pid
    with _lock:
        _stop.set()
        _name, _pid = "", None


def current() -> str:
    """Return this process's lease name, or "" where nothing beats (tests, the CLI)."""
    return _name if _pid == os.getpid() else ""


def set_capacity(worker: str, slots: int) -> None:
    """Note the Celery worker this process runs tasks for, and how many tasks that worker
    runs at once; every lease of the process says so from its next beat on.

    Set by the worker_init signal, before a prefork worker forks its pool processes, so
    that each of them inherits it.
    """
    global _capacity
    _capacity = (worker, max(1, slots))


def beat(name: str) -> None:
    """Say that the process is alive now, then carry out the amends left to the beat."""
    worker, slots = _capacity
    WorkerLease.objects.update_or_create(
        name=name, defaults={"beat_at": timezone.now(), "worker": worker, "slots": slots}
    )
    amend()


def live_slots(fresh: bool = False) -> int:
    """Return how many tasks the live workers run at once, 0 when none beats; read at
    most once per BRAID_LEASE_BEAT_S per process, unless `fresh`.

    A worker counts once, with its concurrency, as soon as any one of its processes beats
    (a prefork pool process beats from its first task on). A lease that names no worker
    counts as one slot.
    """
    global _slots_cache
    read_at, slots = _slots_cache
    if not fresh and time.monotonic() - read_at < settings.BRAID_LEASE_BEAT_S:
        return slots
    since = timezone.now() - dt.timedelta(seconds=settings.BRAID_LEASE_DEAD_S)
    workers: dict[str, int] = {}
    unnamed = 0
    for worker, count in WorkerLease.objects.filter(beat_at__gte=since).values_list(
        "worker", "slots"
    ):
        if worker:
            workers[worker] = max(workers.get(worker, 0), count)
        else:
            unnamed += count
    slots = sum(workers.values()) + unnamed
    _slots_cache = (time.monotonic(), slots)
    return slots


def amend_later(fix: Callable[[], object]) -> None:
    """Leave a database write for the next beat: one a failing task could not do, maybe
    because the database is away (the beat retries it until it succeeds)."""
    with _amends_lock:
        _amends.append(fix)


def amend_soon(fix: Callable[[], object]) -> threading.Event:
    """Carry out a database write now on a thread of this process, without holding up the
    caller: one that may wait on a row lock. Returns an event set once it was tried; if it
    failed, the next beat retries it (amend_later)."""
    global _soon, _soon_pid
    done = threading.Event()
    with _soon_lock:
        if _soon_pid != os.getpid():  # a forked worker process starts its own thread
            _soon_pid, _soon = os.getpid(), queue.SimpleQueue()
            threading.Thread(target=amend_soon_forever, args=(_soon,), name="braid-amend",
                             daemon=True).start()  # fmt: skip
        _soon.put((fix, done))
    return done


def amend_soon_forever(
    fixes: "queue.SimpleQueue[tuple[Callable[[], object], threading.Event]]",
) -> None:
    """Carry out the writes given to amend_soon, one at a time, as they come; a second
    without any closes the thread's database connection."""
    while True:
        try:
            fix, done = fixes.get(timeout=1.0)
        except queue.Empty:
            connections.close_all()  # this thread's only
            continue
        try:
            fix()
        except Exception:
            logger.warning("a write is left to the next beat", exc_info=True)
            amend_later(fix)
        finally:
            close_old_connections()
            done.set()


def amend() -> int:
    """Carry out the writes left by amend_later, in order; return how many were done.

    The first that raises stops the rest; they are tried again at the next beat.
    """
    with _amends_lock:
        pending = list(_amends)
    for fix in pending:
        fix()
        with _amends_lock:
            _amends.remove(fix)
    return len(pending)


def beat_forever(name: str) -> None:
    """Beat every BRAID_LEASE_BEAT_S while the lease is this process's (not stopped or forked)."""
    while not _stop.wait(settings.BRAID_LEASE_BEAT_S) and current() == name:
        try:
            beat(name)
        except Exception:  # a missed beat must not end beating; the next one retries
            logger.exception("the worker lease could not beat")
        finally:
            close_old_connections()


def alive_names() -> QuerySet[WorkerLease, Any]:
    """Return a subquery of the leases that beat recently enough to count as alive."""
    since = timezone.now() - dt.timedelta(seconds=settings.BRAID_LEASE_DEAD_S)
    return WorkerLease.objects.filter(beat_at__gte=since).values("name")


def forget_dead(older_than_s: float = 3600) -> int:
    """Delete leases silent for an hour; return how many."""
    since = timezone.now() - dt.timedelta(seconds=older_than_s)
    return WorkerLease.objects.filter(beat_at__lt=since).delete()[0]
