"""The embedded Celery worker: a thread of the serving process on the in-memory broker.

`make run` needs no broker server: tasks published in this process land in kombu's
in-memory transport, and this thread consumes them. In scaled mode (REDIS_URL set) it is
never started; separate `celery -A braid worker` processes do the work instead.
"""

import logging
import socket
import threading

from celery.worker import WorkController
from django.conf import settings

from braid.celery import app as celery_app
from engine.runtime import leases

_lock = threading.Lock()
_worker: WorkController | None = None
_thread: threading.Thread | None = None
_sweeper: tuple[threading.Thread, threading.Event] | None = None
logger = logging.getLogger(__name__)


def sweep_forever(interval_s: float, stop: threading.Event) -> None:
    """Run the sweeper (due timers, lost messages) until stopped: beat's job, as a thread.

    Celery's embedded beat would fork the serving process, which holds threads. Each
    sweeper has its own stop event, so a restart never revives one that was told to stop.
    """
    from django.db import close_old_connections

    from engine.runtime.sweep import sweep

    while not stop.wait(interval_s):
        try:
            sweep()
        except Exception:  # one failed sweep must not end sweeping; the next one retries
            logger.exception("the sweep failed")
        try:
            close_old_connections()
        except Exception:  # the database that failed the sweep may fail this too
            logger.warning("closing the sweeper's connections failed", exc_info=True)


def build_worker(concurrency: int) -> WorkController:
    """Return a thread-pool worker controller on this process's Celery app."""
    # WorkController, not app.Worker: the latter installs signal handlers, which only the
    # main thread may do; Daphne keeps Ctrl-C for itself and the thread is a daemon.
    return celery_app.WorkController(
        pool_cls="threads",
        concurrency=concurrency,
        hostname=f"embedded@{socket.gethostname()}",
        without_mingle=True,
        without_gossip=True,
        without_heartbeat=True,
        loglevel="WARNING",
    )


def start_embedded_worker(concurrency: int = 4) -> WorkController:
    """Start the worker thread once per process and return its controller."""
    global _worker, _thread, _sweeper
    with _lock:
        if _worker is not None:
            return _worker
        built = threading.Event()
        holder: list[WorkController] = []

        def run() -> None:
            # Built inside its own thread: Celery's Django fix-up closes the database
            # connections of the thread that builds a worker, which must not be the caller's.
            try:
                holder.append(build_worker(concurrency))
            finally:
                built.set()
            holder[0].start()

        _thread = threading.Thread(target=run, name="braid-worker", daemon=True)
        _thread.start()
        interval = float(getattr(settings, "BRAID_SWEEP_INTERVAL_S", 5))
        stop = threading.Event()
        sweeper = threading.Thread(
            target=sweep_forever, args=(interval, stop), name="braid-sweeper", daemon=True
        )
        sweeper.start()
        _sweeper = (sweeper, stop)
        built.wait()
        if not holder:
            raise RuntimeError("the embedded Celery worker could not be built; see the log")
        _worker = holder[0]
        return _worker


def stop_embedded_worker() -> None:
    """Stop the worker thread, waiting for it to finish its current tasks."""
    global _worker, _thread, _sweeper
    with _lock:
        if _worker is None or _thread is None:
            return
        if _sweeper is not None:
            sweeper, stop = _sweeper
            stop.set()
            sweeper.join(timeout=10)  # a sweep under way finishes first
        _worker.stop(in_sighandler=False)
        _thread.join(timeout=10)
        _worker, _thread, _sweeper = None, None, None
        leases.stop_beating()


def embedded_worker_state() -> str:
    """Describe the embedded worker; raise when it is not running."""
    if _thread is None or not _thread.is_alive():
        raise RuntimeError("the embedded worker thread is not running")
    threads = _worker.concurrency if _worker else 0  # type: ignore[attr-defined]  # celery-types leaves it out
    return f"embedded worker thread ({threads} threads)"
