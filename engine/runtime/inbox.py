"""The inbox of events: every change to a run is an event recorded once per key, and a
step takes the run's unapplied events under the run's lock."""

import functools
from typing import Any

from django.db import connection, transaction

from engine.core.events import Event
from engine.faults import duplicate_now
from engine.models import PendingEvent, Run
from engine.runtime.backends import backend
from engine.runtime.backends.portable import run_key
from engine.runtime.records import DispatchRow, InboxRow
from engine.runtime.transport import transport


def submit(run_id: str, key: str, event: Event) -> None:
    """Record an event once per key and ask a worker to advance the run after commit.

    The inbox row is what counts: with the broker down, the message fails (logged) but the
    request that recorded the event succeeds, and the sweeper advances a run whose inbox
    holds an event older than two sweeps. (A start answered 500 after its commit was
    retried by clients, which started the run twice: `make chaos` found it.)
    """
    PendingEvent.objects.bulk_create(
        [PendingEvent(run_id=run_id, key=key, event=event.to_json())], ignore_conflicts=True
    )
    advance_after_commit(run_id)


def advance_after_commit(run_id: str) -> None:
    """Ask a worker to advance the run once the current transaction commits (now, if
    there is none); a broker that is down fails the message, not the caller (see submit)."""
    send = functools.partial(transport().send_advance, str(run_id))
    transaction.on_commit(send, robust=True)
    if duplicate_now():
        transaction.on_commit(send, robust=True)


def has_pending(run_id: str) -> bool:
    """Return whether the run's inbox holds an event not applied yet."""
    # Plain SQL: it runs after every step, and the ORM's query building cost more than it.
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT 1 FROM {PendingEvent._meta.db_table} "
                       "WHERE run_id = %s AND applied_at IS NULL LIMIT 1",
                       [run_key(run_id)])  # fmt: skip
        return cursor.fetchone() is not None


def lock_and_take(
    run_id: str, result: tuple[DispatchRow, Event] | None = None
) -> tuple[Run | None, list[InboxRow]]:
    """Lock the run (skipping it when another worker holds it), mark its unapplied inbox
    events applied and return the run and the events in arrival order.

    The mark applies only under the run's lock, and commits (or rolls back) with the step
    that applies the events. On PostgreSQL the lock, the mark and an action's `result` to
    record first (see record_and_advance) are one statement (lock_and_take_sql).
    """
    return backend().lock_and_take(run_id, result)


def take_pending(run_id: Any) -> list[InboxRow]:
    """Mark the run's unapplied inbox events applied and return them in arrival order
    (the caller holds the run's lock): one `UPDATE ... RETURNING`, not a read and a write."""
    return backend().take_pending(run_id)
