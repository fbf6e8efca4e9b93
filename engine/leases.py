"""Worker leases: every process that runs actions says it is alive every few seconds.

An action's dispatch row names the process that claimed it. The sweeper re-sends the
actions of a process whose lease stopped beating (killed, or stopped), within seconds,
and leaves alone those of live processes, however long their actions take.
"""

import datetime as dt
import logging
import os
import socket
import threading
import uuid
from collections.abc import Callable

from django.conf import settings
from django.db import close_old_connections
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


def beat(name: str) -> None:
    """Say that the process is alive now, then carry out the amends left to the beat."""
    WorkerLease.objects.update_or_create(name=name, defaults={"beat_at": timezone.now()})
    amend()


def amend_later(fix: Callable[[], object]) -> None:
    """Leave a database write for the next beat: one a failing task could not do, maybe
    because the database is away (the beat retries it until it succeeds)."""
    with _amends_lock:
        _amends.append(fix)


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


def alive_names() -> QuerySet[WorkerLease]:
    """Return a subquery of the leases that beat recently enough to count as alive."""
    since = timezone.now() - dt.timedelta(seconds=settings.BRAID_LEASE_DEAD_S)
    return WorkerLease.objects.filter(beat_at__gte=since).values("name")


def forget_dead(older_than_s: float = 3600) -> int:
    """Delete leases silent for an hour; return how many."""
    since = timezone.now() - dt.timedelta(seconds=older_than_s)
    return WorkerLease.objects.filter(beat_at__lt=since).delete()[0]
