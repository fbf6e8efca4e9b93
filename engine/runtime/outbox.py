"""The outbox of dispatches: a step writes one row per action it asks for, and the
transport sends them after the commit; a worker claims them before running them."""

import logging
from collections.abc import Sequence
from typing import Any

from django.conf import settings
from django.db import DatabaseError

from engine.core.events import RunAction
from engine.faults import duplicate_now
from engine.models import Dispatch, Run
from engine.runtime import leases
from engine.runtime.backends import backend
from engine.runtime.records import DispatchRow
from engine.runtime.transport import transport

logger = logging.getLogger(__name__)


def record_dispatches(run: Run, actions: Sequence[RunAction], room: int = 0) -> list[DispatchRow]:
    """Write one outbox row per action key (a recomputed step adds no duplicates); return
    the open ones in id order.

    The first `room` are the caller's to run itself after the commit: they are written
    claimed by this process, in this step's commit, so the sweeper re-sends them if it dies.
    """
    return backend().record_dispatches(run.pk, actions, room)


def open_dispatches(keys: Sequence[str], room: int) -> list[DispatchRow]:
    """Return the open outbox rows of these keys in id order, the first `room` claimed by
    this process."""
    return backend().open_dispatches(keys, room)


def publish(dispatch_ids: Sequence[int]) -> None:
    """Send the dispatches as at most stream_count messages; note when they left.

    A narrow fan-out sends one message per action, so each runs in parallel; a wide one
    sends contiguous chunks, so a fork of 1,000 costs a few messages per worker slot, not
    1,000.
    """
    for chunk in streams(list(dispatch_ids), stream_count(len(dispatch_ids))):
        transport().send_actions(chunk)
        if duplicate_now():
            transport().send_actions(chunk)
    mark_published(dispatch_ids)


def stream_count(actions: int) -> int:
    """How many messages a step's actions leave as: BRAID_DISPATCH_STREAMS, and at most
    BRAID_STREAMS_PER_SLOT per task slot of the live workers (all of them while no lease
    beats: a worker that has not run a task yet is not counted)."""
    limit: int = settings.BRAID_DISPATCH_STREAMS
    if actions <= 1 or settings.BRAID_STREAMS_PER_SLOT <= 0:
        return limit
    try:
        slots = leases.live_slots()
    except DatabaseError:  # the messages still leave: the database is not needed to send
        logger.warning("the live workers' slots could not be read", exc_info=True)
        return limit
    return min(limit, settings.BRAID_STREAMS_PER_SLOT * slots) if slots else limit


def mark_published(dispatch_ids: Sequence[int]) -> None:
    """Note when the dispatches were sent (see the backends' mark_published)."""
    backend().mark_published(dispatch_ids)


def streams(items: list[int], count: int) -> list[list[int]]:
    """Split items into at most `count` contiguous chunks of nearly equal size."""
    if not items:
        return []
    count = max(1, min(count, len(items)))
    size, extra = divmod(len(items), count)
    chunks, start = [], 0
    for index in range(count):
        stop = start + size + (1 if index < extra else 0)
        chunks.append(items[start:stop])
        start = stop
    return chunks


def claim(dispatch_ids: Sequence[int]) -> tuple[list[DispatchRow], set[int]]:
    """Mark open dispatches as this process's; return them in id order, and the ids of
    those another delivery had claimed (its process may have died in the step after it)."""
    return backend().claim(dispatch_ids)


def release(dispatch_ids: set[int], claimer: str) -> None:
    """Unclaim the claimer's open dispatches among these: the sweeper re-sends them as
    unclaimed once BRAID_SWEEP_STALE_S passed since they were sent."""
    Dispatch.objects.filter(pk__in=dispatch_ids, claimed_by=claimer, completed_at=None).update(
        claimed_by="", claimed_at=None
    )


def action_command(data: dict[str, Any]) -> RunAction:
    """Rebuild a RunAction command from its JSON in the outbox."""
    fields = {k: v for k, v in data.items() if k != "kind"}
    return RunAction(**fields)
