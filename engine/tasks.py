"""Celery tasks: thin edges that load, call the engine, save and publish."""

from celery import shared_task
from django.db import transaction
from django.utils import timezone

from engine import durable
from engine.actions import ACTIONS
from engine.core.runtime import perform
from engine.faults import crash_point
from engine.models import Dispatch


@shared_task(name="braid.advance_run")
def advance_run(run_id: str) -> int:
    """Apply a run's pending events under its lock (duplicates find nothing to do)."""
    return durable.advance(run_id)


@shared_task(name="braid.run_action")
def run_action(dispatch_id: int) -> None:
    """Run one dispatched action and record its result once, keyed by its idempotency key."""
    dispatch = Dispatch.objects.filter(pk=dispatch_id, completed_at=None).first()
    if dispatch is None:
        return  # a duplicate delivery of an action whose result is already recorded
    command = durable.action_command(dispatch.command)
    crash_point("action.started")
    event = perform(ACTIONS, command, str(dispatch.run_id), durable.now_text)
    crash_point("action.done")
    with transaction.atomic():
        durable.submit(str(dispatch.run_id), command.key, event)
        Dispatch.objects.filter(pk=dispatch_id).update(completed_at=timezone.now())


@shared_task(name="braid.fire_timer")
def fire_timer(run_id: str, key: str) -> bool:
    """Fire a timer that should be due now."""
    return durable.fire(run_id, key)


@shared_task(name="braid.sweep")
def sweep() -> dict[str, int]:
    """Periodic safety net: due timers, lost messages, runs with unapplied events."""
    return durable.sweep()
