"""The sweep: the safety net that fires due timers, re-sends lost action messages and
advances runs whose events nobody applied."""

import datetime as dt
import logging

from django.conf import settings
from django.db.models import Q

from engine import metrics
from engine.models import Dispatch, PendingEvent, Timer
from engine.runtime import clock, leases, observers
from engine.runtime.outbox import publish
from engine.runtime.timers import fire
from engine.runtime.transport import transport

logger = logging.getLogger(__name__)
# How many ids a warning names; the count says how many there were.
NAMED = 20


def sweep(stale_after_s: float | None = None) -> dict[str, int]:
    """Fire due timers, re-send lost actions and advance runs with unapplied events; count
    the sweep and what it found (engine.metrics)."""
    try:
        found = sweep_once(stale_after_s)
    except BaseException:
        metrics.sweep_failed()
        raise
    metrics.swept(found)
    return found


def sweep_once(stale_after_s: float | None = None) -> dict[str, int]:
    """Fire due timers, re-send lost actions and advance runs with unapplied events.

    It also tells the run observers (approvals audits requests that passed their due time).

    An action counts as lost when the process that claimed it stopped beating (its lease
    is older than BRAID_LEASE_DEAD_S), or when nobody claimed it `stale_after_s` after it
    was sent (BRAID_SWEEP_STALE_S: the message vanished with a worker that had reserved
    it). Re-sending is safe: actions run at least once, results count once per key.
    """
    stale_after_s = settings.BRAID_SWEEP_STALE_S if stale_after_s is None else stale_after_s
    now = clock.now()
    fired = sum(fire(str(t.run_id), t.key) for t in Timer.objects.filter(due_at__lte=now)[:500])
    # Publishing follows the commit at once, and applying events is quick and harmless to
    # repeat: what is still unsent, or unapplied, two sweeps later was dropped by a process
    # that died between commit and publish.
    late = now - dt.timedelta(seconds=2 * settings.BRAID_SWEEP_INTERVAL_S)
    lost = lost_dispatches(late, now - dt.timedelta(seconds=stale_after_s))
    if lost:
        # Each one is a message a process dropped (or a worker died holding): worth a line.
        logger.warning("sweep: re-sending %d lost action(s): dispatches %s", len(lost),
                       named(lost))  # fmt: skip
        publish(lost)
    waiting = set(
        PendingEvent.objects.filter(applied_at=None, created_at__lte=late).values_list(
            "run_id", flat=True
        )[:500]
    )
    if waiting:
        logger.warning("sweep: advancing %d run(s) whose events waited over %g s: %s",
                       len(waiting), 2 * settings.BRAID_SWEEP_INTERVAL_S,
                       named(sorted(map(str, waiting))))  # fmt: skip
    for run_id in waiting:
        transport().send_advance(str(run_id))
    leases.forget_dead()
    observers.swept(now)
    return {"timers": fired, "actions": len(lost), "runs": len(waiting)}


def lost_dispatches(unsent_since: dt.datetime, unclaimed_since: dt.datetime) -> list[int]:
    """Return open dispatches never sent, sent but never claimed, or whose claimer died."""
    open_ones = Dispatch.objects.filter(completed_at=None)
    unclaimed = Q(claimed_by="") & (
        Q(published_at=None, created_at__lte=unsent_since) | Q(published_at__lte=unclaimed_since)
    )
    orphaned = open_ones.exclude(claimed_by="").exclude(claimed_by__in=leases.alive_names())
    ids = set(open_ones.filter(unclaimed).values_list("pk", flat=True)[:500])
    ids.update(orphaned.values_list("pk", flat=True)[:500])
    return sorted(ids)


def named(ids: list[int] | list[str]) -> str:
    """The first NAMED ids, and how many more there were."""
    more = f" and {len(ids) - NAMED} more" if len(ids) > NAMED else ""
    return ", ".join(map(str, ids[:NAMED])) + more
