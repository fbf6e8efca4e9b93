"""PostgreSQL's storage backend: the portable backend's work in fewer round trips.

Statements bind their parameters on the server (psycopg), are prepared once per connection,
go out pipelined where nobody reads their answer, and take arrays or JSON texts instead of
a placeholder per value. The statements' texts are in postgresql_sql.py.
"""

import contextlib
import enum
import json
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

import psycopg
from django.conf import settings
from django.db import connection, transaction
from django.db.models import Model

from engine.core.events import Event, RunAction, RunStatus, Trace, WriteRow
from engine.core.parts import GONE, SnapshotDelta
from engine.core.rows import NodeRow
from engine.core.values import dumps
from engine.models import PendingEvent, Run, RunPart
from engine.runtime import clock, leases
from engine.runtime.backends import postgresql_sql as sql
from engine.runtime.backends.portable import PortableBackend, from_row, run_key
from engine.runtime.fence import collapse
from engine.runtime.part_changes import changes_kept
from engine.runtime.records import RUN_COLUMNS, Begun, DispatchRow, InboxRow

# PostgreSQL matches `= ANY` of a constant array of at least 9 elements through a hash table.
HASHED_ARRAY_MIN = 9
STEP_COLUMNS = frozenset({"state", "step_attempts"})


class PreparedCursor(psycopg.Cursor[Any]):
    """A cursor whose statements are prepared on the server at their first execution,
    unless they carry a long array.

    The step's statements never change their text, so each connection plans them once (raw
    psycopg prepares a statement after five runs; Django turns that off). Behind a pooler
    in transaction mode, set BRAID_PREPARED_WRITES=0.

    A statement given an array of 9 or more elements (a wide fork's chunk of dispatches, a
    gather's parts to drop) is planned for its values each time instead: a plan cached
    while a table was young stays cached as the table grows, and such plans matched a
    chunk's ids against every open dispatch, or a gather's keys against every part of the
    run, for each row (0.1-0.9 s per statement in a fork of 1,000 or 10,000). Planned for
    its values, the array is a hashed set and the table's size is known. A statement runs
    once per step or chunk, so its planning costs far less than what it writes.
    """

    def execute(self, query: Any, params: Any = None, *, prepare: bool | None = None,
                binary: bool | None = None) -> "PreparedCursor":  # fmt: skip
        if prepare is None:
            prepare = settings.BRAID_PREPARED_WRITES and not long_array(params)
        return super().execute(query, params, prepare=prepare, binary=binary)


def insert_values(row: Model) -> tuple[list[str], list[Any]]:
    """The columns and values the ORM's insert of `row` sends: every concrete field but an
    auto-increment key, with its default or its `auto_now_add` stamp (`pre_save`), prepared
    by the field for this database. A text choice goes as its text."""
    columns: list[str] = []
    values: list[Any] = []
    for field in type(row)._meta.concrete_fields:
        if field is type(row)._meta.auto_field or field.column is None:
            continue
        value = field.get_db_prep_save(field.pre_save(row, True), connection)
        columns.append(field.column)
        values.append(value.value if isinstance(value, enum.Enum) else value)
    return columns, values


def long_array(params: Any) -> bool:
    """Return whether statement parameters hold a list of HASHED_ARRAY_MIN or more values."""
    values = params.values() if isinstance(params, Mapping) else params or ()
    return any(isinstance(v, list) and len(v) >= HASHED_ARRAY_MIN for v in values)


def server_side_cursor() -> Any:
    """Return a cursor on Django's PostgreSQL connection that binds parameters on the server.

    It shares the connection and so the surrounding transaction, and goes through Django's
    cursor wrapper, so query logging and execute wrappers still see the statement.
    """
    connection.ensure_connection()
    raw: Any = PreparedCursor(connection.connection)  # Django wraps a DB-API cursor
    if connection.queries_logged:
        return connection.make_debug_cursor(raw)
    return connection.make_cursor(raw)


class PostgresBackend(PortableBackend):
    """What the runtime stores and reads, in PostgreSQL's one-statement forms."""

    collate = ' COLLATE "C"'
    records_result_in_its_step = True
    steps_ahead = True

    @contextmanager
    def pipelined(self) -> Iterator[None]:
        """Send the block's statements without waiting for each answer.

        psycopg's pipeline mode queues each statement and waits once, when a result is read
        or the block ends: the writes of one step cost one round trip instead of one each.
        The transaction is the same, so an error in any statement fails the whole step as
        before (it is raised at the latest when the block ends). Only for statements whose
        row count nobody reads: a deferred answer has none yet.
        """
        connection.ensure_connection()
        with connection.connection.pipeline():
            yield

    def write_rows(self, run_id: str, batch: Sequence[NodeRow]) -> None:
        """Run the unnest upsert with server-side binding (Django binds on the client)."""
        params = [
            str(run_id),
            clock.now(),
            [row.node for row in batch],
            [row.status.value for row in batch],
            [row.status_detail for row in batch],
            [row.execution_id for row in batch],
            [dumps(row.result) for row in batch],
            [row.attempt for row in batch],
        ]
        with server_side_cursor() as cursor:
            cursor.execute(sql.fenced_unnest_sql(), params)

    def insert_trace(self, run_id: str, first: int, trace: Sequence[Trace]) -> None:
        """Append trace events (Django's bulk_create reads the new ids back, which would
        end a pipeline's batch)."""
        with server_side_cursor() as cursor:
            cursor.execute(
                sql.INSERT_TRACE,
                [
                    run_id,
                    list(range(first, first + len(trace))),
                    [t.event for t in trace],
                    [t.execution_id for t in trace],
                    [t.node or "" for t in trace],
                    [t.at for t in trace],
                    [dumps(t.detail) for t in trace],
                ],
            )

    def write_parts(self, run_id: str, drop: Sequence[str], put: Mapping[str, Any]) -> None:
        """Delete the parts dropped, then upsert the parts put: two arrays a statement."""
        table = RunPart._meta.db_table
        with server_side_cursor() as cursor:
            if drop:
                cursor.execute(f"DELETE FROM {table} WHERE run_id = %s AND key = ANY(%s::text[])",
                               [run_id, list(drop)])  # fmt: skip
            if put:
                cursor.execute(sql.upsert_parts_sql(),
                               [run_id, list(put), [dumps(v) for v in put.values()]])  # fmt: skip

    def stored_parts(self, run_id: str) -> Iterator[tuple[str, Any]]:
        """Return a run's stored parts, joined by the server into one JSON object's text,
        decoded by one `json.loads`: a fork of 1,000 holds 3,000 parts, which as rows cost
        a worker's first step of the run about 17 ms to read and decode."""
        with connection.cursor() as cursor:
            cursor.execute(sql.STORED_PARTS.format(parts=RunPart._meta.db_table),
                           [run_key(run_id)])  # fmt: skip
            row = cursor.fetchone()
        return iter(json.loads(row[0]).items() if row and row[0] else ())

    def changed_parts(self, run_id: str, since: int, now: int) -> dict[str, Any] | None:
        """The change rows, their keys, and those parts as one JSON text: one statement."""
        with connection.cursor() as cursor:
            cursor.execute(sql.changed_parts_sql(), {"run": run_key(run_id), "since": since})
            count, keys, values = cursor.fetchone()
        if count != now - since:
            return None
        found = dict.fromkeys(json.loads(keys) if keys else (), GONE)
        if values:
            found.update(json.loads(values))
        return found

    def commits_at_once(self, snapshot: object, columns: Mapping[str, Any]) -> bool:
        """A step's delta, with no columns but the step's own, is written as one statement."""
        return (isinstance(snapshot, SnapshotDelta) and not snapshot.replace
                and set(columns) <= STEP_COLUMNS)  # fmt: skip

    def commit_at_once(
        self, run_id: str, status: RunStatus, delta: SnapshotDelta, rows: Sequence[WriteRow],
        trace: Sequence[Trace], first: int, error: str | None, columns: Mapping[str, Any],
        version: int | None = None,
    ) -> None:  # fmt: skip
        """Write a step as one statement (commit_sql), reading nothing back.

        It writes what the separate statements wrote: the trace from sequence number `first`,
        the node rows through the fence (folded per node first), the parts dropped and put,
        and the run row. A part both dropped and put is put.
        """
        params = step_params(run_id, status, delta, rows, trace, error, columns, version)
        with server_side_cursor() as cursor:
            cursor.execute(sql.commit_sql(), params | {"first": first,
                                                       "length": first + len(trace)})  # fmt: skip

    def step_ahead(
        self, run_id: str, since: int, result: tuple[DispatchRow, Event], status: RunStatus,
        delta: SnapshotDelta, rows: Sequence[WriteRow], trace: Sequence[Trace],
        error: str | None, columns: Mapping[str, Any], actions: Sequence[RunAction], room: int,
    ) -> Callable[[], tuple[bool, list[DispatchRow], bool]]:  # fmt: skip
        """Send a step computed from the state of version `since` with the action's
        `result`, as one statement (step_ahead_sql), then COMMIT and the look: one round
        trip. Return a function, called after the pipeline, that answers whether the step
        was written, the dispatches it inserted, and what the look found."""
        dispatch, event = result
        commands = [a.to_json() for a in actions]
        params = step_params(run_id, status, delta, rows, trace, error, columns, since + 1)
        params |= {
            "since": since, "dispatch": dispatch.pk,
            "key": event.key,  # type: ignore[attr-defined]
            "event": dumps(event.to_json()), "traced": len(trace), "room": room,
            "lease": leases.current(), "nobody": "", "commands": dumps(commands),
        }  # fmt: skip
        with self.pipelined():
            cursor = server_side_cursor()
            cursor.execute(sql.step_ahead_sql(), params)
            look = commit_and_look(run_id)

        def answer() -> tuple[bool, list[DispatchRow], bool]:
            with cursor:
                stepped, sent = cursor.fetchone()
            ids = {key: pk for pk, key in json.loads(sent)} if sent else {}
            found = sorted(DispatchRow(ids[c["key"]], run_id, c["key"], c)
                           for c in commands if c["key"] in ids)  # fmt: skip
            return bool(stepped), found, look()

        return answer

    def lock_and_take(
        self, run_id: str, result: tuple[DispatchRow, Event] | None = None
    ) -> tuple[Run | None, list[InboxRow]]:
        """The lock, the mark and an action's `result` to record first (see
        record_and_advance) are one statement (postgresql_sql.lock_and_take_sql)."""
        dispatch, event = result if result is not None else (None, None)
        with server_side_cursor() as cursor:
            cursor.execute(
                sql.lock_and_take_sql(),
                {
                    "run": uuid.UUID(str(run_id)),
                    "now": clock.now(),
                    "dispatch": dispatch.pk if dispatch is not None else None,
                    "key": event.key if event is not None else None,  # type: ignore[attr-defined]
                    "event": dumps(event.to_json()) if event is not None else None,
                },
            )
            row = cursor.fetchone()
        if row is None:
            return None, []
        found = dict(zip(RUN_COLUMNS, row[:-1], strict=True))
        found["snapshot"] = json.loads(found["snapshot"])  # jsonb arrives as text in Django
        pending = [InboxRow(*taken) for taken in json.loads(row[-1] or "[]")]
        return from_row(Run, found), pending

    def begin_step(self, run_id: str) -> Begun:
        """One statement counts and, when it did not, says why: a fork of 1,000 finds its
        run held by another worker's step at most flushes of its results, and two more
        queries there cost each of them a round trip and the ORM's query building.

        The row is locked only when something is pending: a worker that takes the lock
        steps, so another that finds it taken may leave its event to that step's look after
        its commit.
        """
        key = run_key(run_id)
        with server_side_cursor() as cursor:  # one statement: it commits on its own
            cursor.execute(sql.BEGIN_STEP, [key, key])
            counted, waiting = cursor.fetchone()
        # An inbox row's run exists (the foreign key), so events waiting on a run that was
        # not counted mean that another worker holds it.
        return Begun.COUNTED if counted else Begun.HELD if waiting else Begun.IDLE

    def take_back_attempt(self, run_id: str) -> int | None:
        """A run whose row another step holds is skipped, not waited for: return the run's
        committed snapshot version then, and None otherwise."""
        key = run_key(run_id)
        with server_side_cursor() as cursor:  # one statement: it commits on its own
            cursor.execute(sql.take_back_attempt_sql(), [key, key])
            row = cursor.fetchone()
        return row[1] if row is not None and not row[0] else None

    def step_dispatches(
        self, write: Callable[[], None], run_id: Any, actions: Sequence[RunAction], room: int,
        commit: bool,
    ) -> tuple[list[DispatchRow], bool | None]:  # fmt: skip
        """With `commit` (the caller's block is the outermost transaction), the step's
        writes, its `COMMIT` and the look for events that arrived meanwhile go out as one
        pipeline, one round trip. Their answers are read after the block: read inside it,
        psycopg sends a Flush and waits for them, a round trip more."""
        more: bool | None = None
        with self.pipelined():
            write()
            inserted = self.send_dispatches(run_id, actions, room)
            look = commit_and_look(str(run_id)) if commit else None
        dispatches = inserted()
        more = look() if look is not None else None
        if len(dispatches) < len(actions):
            # A key stored before (never in a normal step): read what is open (after the
            # commit, when it went with the writes).
            dispatches = self.open_dispatches([a.key for a in actions], room)
        return dispatches, more

    def record_dispatches(
        self, run_id: Any, actions: Sequence[RunAction], room: int
    ) -> list[DispatchRow]:
        """Insert the new keys in one statement; read what is open only when a key was
        stored before."""
        inserted = self.send_dispatches(run_id, actions, room)()
        if len(inserted) == len(actions):  # every key is new: what was written is what is open
            return inserted
        return self.open_dispatches([a.key for a in actions], room)

    def send_dispatches(
        self, run_id: Any, actions: Sequence[RunAction], room: int
    ) -> Callable[[], list[DispatchRow]]:
        """Insert an outbox row per action whose key is new, the first `room` claimed by this
        process, in one statement; return a function that gives the inserted rows in id order.

        The commands go as one JSON array, taken apart by the server. Nothing is read until
        that function is called, so in a pipeline the statements queued after this one
        travel with it.
        """
        if not actions:
            return list
        commands = [a.to_json() for a in actions]
        params = {"run": run_id, "now": clock.now(), "room": room, "lease": leases.current(),
                  "nobody": "", "commands": dumps(commands)}  # fmt: skip
        cursor = server_side_cursor()
        cursor.execute(sql.send_dispatches_sql(), params)

        def inserted() -> list[DispatchRow]:
            with cursor:
                ids = dict((key, pk) for pk, key in cursor.fetchall())
            return sorted(DispatchRow(ids[c["key"]], run_id, c["key"], c)
                          for c in commands if c["key"] in ids)  # fmt: skip

        return inserted

    def start_run(self, run: Run, key: str, event: dict[str, Any]) -> None:
        """The run's row and its first inbox event in one statement, which needs no
        transaction of its own: one round trip instead of four (BEGIN, two INSERTs and
        COMMIT), and the values prepared as the ORM's insert would prepare them, without
        building its statement each time. Inside a caller's transaction it takes a
        savepoint, so that a refused Idempotency-Key leaves that transaction usable."""
        pending = PendingEvent(run_id=run.pk, key=key, event=event)
        run_columns, run_values = insert_values(run)
        event_columns, event_values = insert_values(pending)
        statement = sql.start_run_sql(tuple(run_columns), tuple(event_columns))
        with contextlib.ExitStack() as stack:
            if connection.in_atomic_block:
                stack.enter_context(transaction.atomic())
            with server_side_cursor() as cursor:
                cursor.execute(statement, [*run_values, *event_values])
        run._state.adding, run._state.db = False, connection.alias

    def mark_published(self, dispatch_ids: Sequence[int]) -> None:
        """One statement with the ids as one array (the ORM's `pk__in` prepared each of a
        fork's 1,000 ids in Python), skipping rows a worker is claiming or closing right
        now: those are claimed, so the sweeper never takes them for unsent."""
        with server_side_cursor() as cursor:
            cursor.execute(sql.mark_published_sql(), [clock.now(), list(dispatch_ids)])

    def record_results(self, results: Sequence[tuple[DispatchRow, Event]]) -> None:
        """One prepared statement, which commits on its own."""
        now = clock.now()
        with server_side_cursor() as cursor:
            cursor.execute(
                sql.record_results_sql(),
                [now, [d.pk for d, _ in results], now,
                 [d.run_id for d, _ in results],
                 [e.key for _, e in results],  # type: ignore[attr-defined]
                 [dumps(e.to_json()) for _, e in results]],
            )  # fmt: skip

    def record_result_and_begin_step(self, dispatch: DispatchRow, event: Event) -> bool:
        """Record one action's result, close its dispatch and count an attempt at the run's
        next step, in one statement; return whether the attempt was counted.

        It is `record_results` and `begin_step` in one round trip instead of five, and as
        safe: the three writes commit together, before the step's own work. Not counted (the
        run is locked by another worker, or nothing is pending), the caller advances as after
        `record_results`, with its own `begin_step` after this commit.
        """
        now, run_id = clock.now(), dispatch.run_id
        key = event.key  # type: ignore[attr-defined]
        params = [run_id, key, dumps(event.to_json()), now, now, dispatch.pk, run_id, run_id,
                  run_id]  # fmt: skip
        with server_side_cursor() as cursor:  # one statement: it commits on its own
            cursor.execute(sql.record_result_and_begin_step_sql(), params)
            return bool(cursor.rowcount == 1)

    def claim(self, dispatch_ids: Sequence[int]) -> tuple[list[DispatchRow], set[int]]:
        """One prepared statement claims them and returns each with its claimer before (the
        ORM's read and update cost a chunk of 31 actions about 6 ms)."""
        with server_side_cursor() as cursor:
            cursor.execute(sql.claim_sql(), [leases.current(), clock.now(), list(dispatch_ids)])
            rows = sorted(cursor.fetchall())
        found = [DispatchRow(pk, run_id, key, json.loads(command))
                 for pk, run_id, key, command, _ in rows]  # fmt: skip
        return found, {row[0] for row in rows if row[4]}


def step_params(
    run_id: str, status: RunStatus, delta: SnapshotDelta, rows: Sequence[WriteRow],
    trace: Sequence[Trace], error: str | None, columns: Mapping[str, Any], version: int | None,
) -> dict[str, Any]:  # fmt: skip
    """Return the parameters of a step's writes (postgresql_sql.step_writes and
    run_update): the trace, the node rows folded per node, the parts dropped and put (a
    part both dropped and put is put), the run's columns and the part changes' version."""
    batch = collapse(rows)
    drop = [key for key in delta.drop if key not in delta.put]
    logged, horizon = changes_kept(version, status)
    return {
        "run": run_id,
        "trace": dumps([[t.event, t.execution_id, t.node or "", t.at, t.detail] for t in trace]),
        "rows": dumps(
            [
                [r.node, r.status.value, r.status_detail, r.execution_id, r.attempt, r.result]
                for r in batch
            ]
        ),
        "drop": drop,
        "put": dumps(delta.put),
        "status": status.value,
        "head": dumps(delta.head),
        "error": error or "",
        "now": clock.now(),
        "has_state": "state" in columns,
        "state": dumps(columns.get("state")),
        "attempts": columns.get("step_attempts"),
        "version": logged,
        "keys": dumps([*delta.put, *drop]) if logged is not None else "",
        "horizon": horizon,
    }


def commit_and_look(run_id: str) -> Callable[[], bool]:
    """Queue the transaction's COMMIT and a look at the run's inbox after it (in a
    pipeline); return a function that says whether the look found an event.

    Committing here sends the commit with the step's writes; Django's own commit at the
    end of the block then finds no transaction open and sends nothing, and runs the
    `on_commit` functions as usual. The look runs after the commit on the server, so it
    sees every event whose worker found the run locked by this step (that worker
    recorded its event before trying the lock), as a look after the commit always did.
    """
    key = run_key(run_id)
    with connection.cursor() as committing:
        committing.execute("COMMIT")
    cursor = server_side_cursor()
    cursor.execute(f"SELECT 1 FROM {PendingEvent._meta.db_table} "
                   "WHERE run_id = %s AND applied_at IS NULL LIMIT 1", [key])  # fmt: skip

    def found() -> bool:
        with cursor:
            return bool(cursor.fetchone() is not None)

    return found
