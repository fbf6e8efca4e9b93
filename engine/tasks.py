"""Celery tasks: thin edges that load, call the engine, save and publish."""

from celery import shared_task

from engine import durable


@shared_task(name="braid.advance_run")
def advance_run(run_id: str) -> int:
    """Apply a run's pending events under its lock (duplicates find nothing to do)."""
    return durable.advance(run_id)


@shared_task(name="braid.run_actions")
def run_actions(dispatch_ids: list[int]) -> int:
    """Run dispatched actions and record their results (duplicates find them done)."""
    return durable.run_actions(dispatch_ids)


@shared_task(name="braid.run_action")
def run_action(dispatch_id: int) -> int:
    """Run one dispatched action (the message of earlier releases, still honoured)."""
    return run_actions([dispatch_id])


@shared_task(name="braid.fire_timer")
def fire_timer(run_id: str, key: str) -> bool:
    """Fire a timer that should be due now."""
    return durable.fire(run_id, key)


@shared_task(name="braid.sweep")
def sweep() -> dict[str, int]:
    """Periodic safety net: due timers, lost messages, runs with unapplied events."""
    return durable.sweep()
