"""Celery tasks: thin edges that load, call the engine, save and publish; and the Celery
transport the runtime sends its messages by (registered by engine.apps)."""

from collections.abc import Sequence

from celery import shared_task

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
    """The runtime's messages as Celery tasks (engine.runtime.transport.Transport)."""

    def send_advance(self, run_id: str) -> None:
        advance_run.delay(run_id)

    def send_actions(self, dispatch_ids: Sequence[int]) -> None:
        run_actions.delay(list(dispatch_ids))

    def send_timer(self, run_id: str, key: str, countdown: float) -> None:
        fire_timer.apply_async((run_id, key), countdown=countdown)
