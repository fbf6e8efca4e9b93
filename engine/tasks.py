"""Celery tasks: thin edges that load, call the engine, save and publish."""

from collections import deque

from celery import shared_task
from django.conf import settings
from django.utils import timezone

from engine import durable, leases
from engine.actions import ACTIONS
from engine.core.runtime import perform
from engine.faults import crash_point
from engine.models import Dispatch


@shared_task(name="braid.advance_run")
def advance_run(run_id: str) -> int:
    """Apply a run's pending events under its lock (duplicates find nothing to do)."""
    return durable.advance(run_id)


@shared_task(name="braid.run_actions")
def run_actions(dispatch_ids: list[int]) -> int:
    """Claim dispatched actions, run them one after another and record their results.

    A dispatch whose result is already recorded (a duplicate delivery) is skipped. Out of
    work, the task runs the next action of the runs it advanced itself (up to
    BRAID_INLINE_ACTIONS per task) instead of sending it.
    """
    queue = deque(claim(dispatch_ids))
    results = durable.Results(settings.BRAID_RESULT_FLUSH_S)
    count = 0
    while queue or results.waiting:
        if not queue:
            room = 1 if count < settings.BRAID_INLINE_ACTIONS else 0
            take = durable.Taken(limit=room)
            results.flush(take)
            queue.extend(Dispatch.objects.filter(pk__in=take.ids, completed_at=None))
            continue
        dispatch = queue.popleft()
        command = durable.action_command(dispatch.command)
        crash_point("action.started")
        event = perform(ACTIONS, command, str(dispatch.run_id), durable.now_text)
        crash_point("action.done")
        results.add(dispatch, event)
        count += 1
    return count


def claim(dispatch_ids: list[int]) -> list[Dispatch]:
    """Mark open dispatches as this process's; return them in id order."""
    open_ones = Dispatch.objects.filter(pk__in=dispatch_ids, completed_at=None)
    open_ones.update(claimed_by=leases.current(), claimed_at=timezone.now())
    return list(open_ones.order_by("id"))


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
