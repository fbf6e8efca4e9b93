"""The portable storage backend: the runtime's reads and writes through the ORM and plain
SQL that SQLite (the database of `make run`) takes. PostgreSQL's backend overrides the
ones it sends in fewer statements."""

import json
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from django.db import connection, transaction
from django.db.models import F, Model

from engine.core.events import Event, RunAction, RunStatus, Trace, WriteRow
from engine.core.parts import GONE, SnapshotDelta
from engine.core.rows import NodeRow
from engine.core.values import dumps
from engine.models import Dispatch, PartChange, PendingEvent, Run, RunPart, TraceEvent
from engine.runtime import clock, leases
from engine.runtime.fence import ROWS_PER_STATEMENT, fenced_upsert_sql
from engine.runtime.part_changes import logged_keys
from engine.runtime.records import RUN_COLUMNS, Begun, DispatchRow, InboxRow

PENDING = "EXISTS (SELECT 1 FROM engine_pendingevent WHERE run_id = %s AND applied_at IS NULL)"


def run_key(run_id: Any) -> Any:
    """Return a run id as the database stores it."""
    return Run._meta.pk.get_db_prep_value(uuid.UUID(str(run_id)), connection)


class PortableBackend:
    """What the runtime stores and reads, in the forms every supported database takes."""

    collate = ""  # how ids compare byte by byte in the fence
    # Whether one action's result is recorded by the transaction that applies it.
    records_result_in_its_step = False
    # Whether a step computed before its lock goes with the lock as one statement.
    steps_ahead = False

    @contextmanager
    def pipelined(self) -> Iterator[None]:
        """Send the block's statements without waiting for each answer, where the database
        connection can; here it does nothing."""
        yield

    def write_rows(self, run_id: str, batch: Sequence[NodeRow]) -> None:
        """Apply folded fenced writes, one statement per 500 nodes."""
        now = clock.now()
        key = str(run_id).replace("-", "")
        with connection.cursor() as cursor:
            for start in range(0, len(batch), ROWS_PER_STATEMENT):
                chunk = batch[start : start + ROWS_PER_STATEMENT]
                params = [
                    value
                    for row in chunk
                    for value in (key, row.node, row.status.value, row.status_detail,
                                  row.execution_id, dumps(row.result), row.attempt, now)
                ]  # fmt: skip
                cursor.execute(fenced_upsert_sql(len(chunk), self.collate), params)

    def insert_trace(self, run_id: str, first: int, trace: Sequence[Trace]) -> None:
        """Append trace events from sequence number `first`."""
        TraceEvent.objects.bulk_create(
            TraceEvent(run_id=run_id, seq=first + i, event=t.event, execution_id=t.execution_id,
                       node=t.node or "", at=t.at, detail=t.detail)
            for i, t in enumerate(trace)
        )  # fmt: skip

    def write_parts(self, run_id: str, drop: Sequence[str], put: Mapping[str, Any]) -> None:
        """Delete the parts dropped, then upsert the parts put, 500 parts a statement."""
        keys = list(put)
        values = [dumps(value) for value in put.values()]
        table, hex_id = RunPart._meta.db_table, str(run_id).replace("-", "")
        with connection.cursor() as cursor:
            for start in range(0, len(drop), ROWS_PER_STATEMENT):
                chunk = drop[start : start + ROWS_PER_STATEMENT]
                marks = ", ".join(["%s"] * len(chunk))
                cursor.execute(f"DELETE FROM {table} WHERE run_id = %s AND key IN ({marks})",
                               [hex_id, *chunk])  # fmt: skip
            for start in range(0, len(keys), ROWS_PER_STATEMENT):
                stop = start + ROWS_PER_STATEMENT
                rows = list(zip(keys[start:stop], values[start:stop], strict=True))
                marks = ", ".join(["(%s, %s, %s)"] * len(rows))
                cursor.execute(
                    f"INSERT INTO {table} (run_id, key, value) VALUES {marks} "
                    "ON CONFLICT (run_id, key) DO UPDATE SET value = excluded.value",
                    [value for key, text in rows for value in (hex_id, key, text)],
                )

    def stored_parts(self, run_id: str) -> Iterator[tuple[str, Any]]:
        """Return a run's stored parts, decoded."""
        parts = RunPart.objects.filter(run_id=run_id).values_list("key", "value")
        return ((key, json.loads(value)) for key, value in parts)

    def changed_parts(self, run_id: str, since: int, now: int) -> dict[str, Any] | None:
        """Return the parts changed after version `since` up to `now` (see store.changed_parts)."""
        logs = list(PartChange.objects.filter(run_id=run_id, version__gt=since)
                    .values_list("keys", flat=True))  # fmt: skip
        if len(logs) != now - since:
            return None
        keys = logged_keys(logs)
        found: dict[str, Any] = dict.fromkeys(keys, GONE)
        ordered = sorted(keys)
        for start in range(0, len(ordered), ROWS_PER_STATEMENT):
            chunk = ordered[start : start + ROWS_PER_STATEMENT]
            for key, value in RunPart.objects.filter(run_id=run_id, key__in=chunk).values_list(
                "key", "value"
            ):
                found[key] = json.loads(value)
        return found

    def commits_at_once(self, snapshot: object, columns: Mapping[str, Any]) -> bool:
        """Whether this commit goes as one statement (commit_at_once); here never."""
        return False

    def commit_at_once(
        self, run_id: str, status: RunStatus, delta: SnapshotDelta, rows: Sequence[Any],
        trace: Sequence[Trace], first: int, error: str | None, columns: Mapping[str, Any],
        version: int | None = None,
    ) -> None:  # fmt: skip
        """Write a step as one statement (only where commits_at_once says so)."""
        raise NotImplementedError("this backend writes a step statement by statement")

    def lock_and_take(
        self, run_id: str, result: tuple[DispatchRow, Event] | None = None
    ) -> tuple[Run | None, list[InboxRow]]:
        """Lock the run (skipping it when another worker holds it), mark its unapplied inbox
        events applied and return the run and the events in arrival order (`result` is
        recorded by record_results here, never passed)."""
        run = (
            Run.objects.select_for_update(no_key=True, skip_locked=True)
            .only(*RUN_COLUMNS)
            .filter(pk=run_id)
            .first()
        )
        return run, self.take_pending(run.pk) if run is not None else []

    def take_pending(self, run_id: Any) -> list[InboxRow]:
        """Mark the run's unapplied inbox events applied and return them in arrival order
        (the caller holds the run's lock): one `UPDATE ... RETURNING`, not a read and a write."""
        sql = (
            f"UPDATE {PendingEvent._meta.db_table} SET applied_at = %s WHERE run_id = %s "
            "AND applied_at IS NULL RETURNING id, run_id, key, event, created_at, applied_at"
        )
        now = connection.ops.adapt_datetimefield_value(clock.now())
        rows = sorted(PendingEvent.objects.raw(sql, [now, run_key(run_id)]), key=lambda r: r.pk)
        return [InboxRow(row.pk, row.key, row.event) for row in rows]

    def begin_step(self, run_id: str) -> Begun:
        """Count one more attempt at the run's next step when something is pending."""
        key = run_key(run_id)
        with connection.cursor() as cursor:  # one statement: it commits on its own
            cursor.execute("UPDATE engine_run SET step_attempts = step_attempts + 1 "
                           f"WHERE id = %s AND {PENDING}", [key, key])  # fmt: skip
            return Begun.COUNTED if cursor.rowcount == 1 else Begun.IDLE

    def take_back_attempt(self, run_id: str) -> int | None:
        """Count one step attempt less (never below 0); here the run is waited for, and
        None is returned (see attempts.take_back_attempt)."""
        Run.objects.filter(pk=run_id, step_attempts__gt=0).update(
            step_attempts=F("step_attempts") - 1
        )
        return None

    def step_dispatches(
        self, write: Callable[[], None], run_id: Any, actions: Sequence[RunAction], room: int,
        commit: bool,
    ) -> tuple[list[DispatchRow], bool | None]:  # fmt: skip
        """Write the step (`write`) and its outbox rows; return the open dispatches and
        whether the inbox held new events after the commit (None: not looked)."""
        with self.pipelined():
            write()
            dispatches = self.record_dispatches(run_id, actions, room) if actions else []
        return dispatches, None

    def record_dispatches(
        self, run_id: Any, actions: Sequence[RunAction], room: int
    ) -> list[DispatchRow]:
        """Write one outbox row per new action key, the first `room` claimed by this
        process; return the open ones of these keys in id order."""
        now, lease = clock.now(), leases.current()
        claimed = {"claimed_by": lease, "claimed_at": now, "published_at": now}
        rows = [Dispatch(run_id=run_id, key=a.key, command=a.to_json(), created_at=now,
                         **(claimed if i < room else {}))
                for i, a in enumerate(actions)]  # fmt: skip
        Dispatch.objects.bulk_create(rows, ignore_conflicts=True)
        return self.open_dispatches([a.key for a in actions], room)

    def open_dispatches(self, keys: Sequence[str], room: int) -> list[DispatchRow]:
        """Return the open outbox rows of these keys in id order, the first `room` claimed
        by this process.

        A key written before keeps its row; it is claimed if it is among the first `room`.
        """
        now = clock.now()
        found = list(Dispatch.objects.filter(key__in=keys, completed_at=None).order_by("pk"))
        unclaimed = [d.pk for d in found[:room] if d.claimed_at is None]
        if unclaimed:
            Dispatch.objects.filter(pk__in=unclaimed).update(
                claimed_by=leases.current(), claimed_at=now, published_at=now
            )
        return [DispatchRow(d.pk, d.run_id, d.key, d.command) for d in found]

    def start_run(self, run: Run, key: str, event: dict[str, Any]) -> None:
        """Store a new run's row and its first inbox event, both or neither."""
        with transaction.atomic():
            run.save(force_insert=True)
            PendingEvent.objects.bulk_create([PendingEvent(run=run, key=key, event=event)])

    def mark_published(self, dispatch_ids: Sequence[int]) -> None:
        """Note when the dispatches were sent."""
        Dispatch.objects.filter(pk__in=dispatch_ids).update(published_at=clock.now())

    def record_results(self, results: Sequence[tuple[DispatchRow, Event]]) -> None:
        """Insert action results into their runs' inboxes and close their dispatches."""
        with transaction.atomic():
            PendingEvent.objects.bulk_create(
                [PendingEvent(run_id=d.run_id, key=e.key, event=e.to_json())  # type: ignore[attr-defined]
                 for d, e in results],
                ignore_conflicts=True,
            )  # fmt: skip
            Dispatch.objects.filter(pk__in=[d.pk for d, _ in results]).update(
                completed_at=clock.now()
            )

    def record_result_and_begin_step(self, dispatch: DispatchRow, event: Event) -> bool:
        """Record one result and count a step attempt in one statement (only where
        records_result_in_its_step says so)."""
        raise NotImplementedError("this backend records results apart from their step")

    def step_ahead(
        self, run_id: str, since: int, result: tuple[DispatchRow, Event], status: RunStatus,
        delta: SnapshotDelta, rows: Sequence[WriteRow], trace: Sequence[Trace],
        error: str | None, columns: Mapping[str, Any], actions: Sequence[RunAction], room: int,
    ) -> Callable[[], tuple[bool, list[DispatchRow], bool]]:  # fmt: skip
        """Lock, record and write a step computed before its lock (only where steps_ahead
        says so)."""
        raise NotImplementedError("this backend takes a run's lock before its step")

    def claim(self, dispatch_ids: Sequence[int]) -> tuple[list[DispatchRow], set[int]]:
        """Mark open dispatches as this process's; return them in id order, and the ids of
        those another delivery had claimed."""
        lease, now = leases.current(), clock.now()
        open_ones = Dispatch.objects.filter(pk__in=dispatch_ids, completed_at=None)
        models = list(open_ones.order_by("id"))
        open_ones.update(claimed_by=lease, claimed_at=now)
        found = [DispatchRow(d.pk, d.run_id, d.key, d.command) for d in models]
        return found, {dispatch.pk for dispatch in models if dispatch.claimed_by}


def from_row[M: Model](model: type[M], found: dict[str, Any]) -> M:
    """Build a model instance from some of its columns, as the ORM would have read it."""
    names = [f.attname for f in model._meta.concrete_fields if f.attname in found]
    return model.from_db(connection.alias, names, [found[name] for name in names])
