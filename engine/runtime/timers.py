"""Timers: a step's SetTimer is a row with its due time; a near one is also sent with a
countdown, and the sweeper fires whatever came due."""

from collections.abc import Iterable

from django.conf import settings
from django.db import transaction

from engine.core.events import CancelTimer, Command, SetTimer, TimerFired
from engine.core.runtime import parse_time
from engine.models import Run, Timer
from engine.runtime import clock
from engine.runtime.inbox import submit
from engine.runtime.transport import transport


def record_timers(run: Run, commands: Iterable[Command]) -> None:
    """Store due times for SetTimer and forget cancelled timers."""
    new = [Timer(run=run, key=c.key, due_at=parse_time(c.due)) for c in commands
           if isinstance(c, SetTimer)]  # fmt: skip
    Timer.objects.bulk_create(new, ignore_conflicts=True)
    cancelled = [c.key for c in commands if isinstance(c, CancelTimer)]
    if cancelled:
        Timer.objects.filter(run=run, key__in=cancelled).delete()
    soon = [
        t
        for t in new
        if (t.due_at - clock.now()).total_seconds() < settings.BRAID_TIMER_ETA_LIMIT_S
    ]
    if soon:
        transaction.on_commit(lambda: schedule_soon(str(run.pk), soon))


def schedule_soon(run_id: str, timers: list[Timer]) -> None:
    """Fire near timers with a countdown well inside the broker's visibility timeout."""
    for timer in timers:
        delay = max(0.0, (timer.due_at - clock.now()).total_seconds())
        transport().send_timer(run_id, timer.key, delay)


def fire(run_id: str, key: str) -> bool:
    """Turn a due timer into a TimerFired event; return whether it was due and still set."""
    with transaction.atomic():
        timer = Timer.objects.select_for_update().filter(run_id=run_id, key=key).first()
        if timer is None or timer.due_at > clock.now():
            return False
        timer.delete()
        submit(run_id, key, TimerFired(at=clock.now_text(), key=key))
    return True
