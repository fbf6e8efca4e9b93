"""Drive durable runs in the test process: the tasks' own code, called directly."""

from django.utils import timezone

from engine import durable, tasks
from engine.models import Dispatch, PendingEvent, Run, Timer
from engine.store import DjangoStore


def drain(run: Run, repeat_deliveries: int = 1, max_rounds: int = 500) -> Run:
    """Advance, run dispatched actions and fire timers until the run needs a person or ends.

    With repeat_deliveries=2 every message is delivered twice, as a broker may.
    """
    for _ in range(max_rounds):
        progressed = False
        for _ in range(repeat_deliveries):
            progressed |= durable.advance(str(run.pk)) > 0
        for dispatch in Dispatch.objects.filter(run=run, completed_at=None).order_by("id"):
            for _ in range(repeat_deliveries):
                tasks.run_actions([dispatch.pk])
            progressed = True
        idle = not progressed and not PendingEvent.objects.filter(run=run, applied_at=None).exists()
        if idle and not fire_next_timer(run, repeat_deliveries):
            break
    run.refresh_from_db()
    return run


def fire_next_timer(run: Run, repeat_deliveries: int) -> bool:
    """Make the earliest timer due now and fire it; return whether there was one."""
    run.refresh_from_db()
    if run.status != "running" and any(
        f.get("wait", {}).get("approval")
        for f in DjangoStore().load(str(run.pk)).snapshot.get("frames", [])
    ):
        return False
    timer = Timer.objects.filter(run=run).order_by("due_at").first()
    if timer is None:
        return False
    Timer.objects.filter(pk=timer.pk).update(due_at=timezone.now())
    for _ in range(repeat_deliveries):
        tasks.fire_timer(str(run.pk), timer.key)
    return True
