"""Celery tasks: thin edges that load, call the engine, save and publish; and the Celery
transport the runtime sends its messages by (registered by engine.apps)."""

from collections.abc import Sequence

from celery import Celery, shared_task

from engine.runtime import results, timers
from engine.runtime import sweep as sweeping


@shared_task(name="braid.advance_run")
def advance_run(run_id: str) -> int:
    """Apply a run's pending events under its lock (duplicates find nothing to do), and
    run the first action they open here (results.advance_and_run)."""
    return results.advance_and_run(run_id)


@shared_task(name="braid.run_actions")
def run_actions(dispatch_ids: list[int]) -> int:
    """Run dispatched actions and record their results (duplicates find them done)."""
    return results.run_actions(dispatch_ids)


@shared_task(name="braid.run_action")
def run_action(dispatch_id: int) -> int:
    """Run one dispatched action (the message of earlier releases, still honoured)."""
    return run_actions([dispatch_id])


@shared_task(name="braid.fire_timer")
def fire_timer(run_id: str, key: str) -> bool:
    """Fire a timer that should be due now."""
    return timers.fire(run_id, key)


@shared_task(name="braid.sweep")
def sweep() -> dict[str, int]:
    """Periodic safety net: due timers, lost messages, runs with unapplied events."""
    return sweeping.sweep()


class CeleryTransport:
    """The runtime's messages as Celery tasks (engine.runtime.transport.Transport), sent
    through one app: Braid's.

    Not through the shared tasks above: each of them is the task of the app *current in
    the calling thread*, and a thread that nobody made Braid's app current in (a client's
    pool of threads, a web server's) gets Celery's default app, which in a process that
    also uses another Celery app is that app, with its broker and its queue. The peers
    benchmark's client, which imports one, sent its runs' starts from 8 threads to the
    other app's queue, where no worker of Braid's listens; each run waited for the sweeper.
    """

    def __init__(self, app: Celery) -> None:
        self.app = app

    def send_advance(self, run_id: str) -> None:
        self.app.tasks["braid.advance_run"].delay(run_id)

    def send_actions(self, dispatch_ids: Sequence[int]) -> None:
        self.app.tasks["braid.run_actions"].delay(list(dispatch_ids))

    def send_timer(self, run_id: str, key: str, countdown: float) -> None:
        self.app.tasks["braid.fire_timer"].apply_async((run_id, key), countdown=countdown)
