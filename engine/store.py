"""The Django store: ExecutionStore over Run, NodeState, TraceEvent and ApprovalRequest.

Each batch of node-row writes is one fenced upsert (`INSERT ... ON CONFLICT DO UPDATE ...
WHERE`): a VALUES list on SQLite, an `unnest` of arrays bound on the server on PostgreSQL,
with the same fence. A row lands only when the incoming execution id is not superseded by
the stored one, with the contract's equal-id rule. The writer never reads before writing
and never learns whether a write landed.
"""

import hashlib
import json
import uuid
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

import psycopg
from django.conf import settings
from django.db import connection, transaction
from django.db.models import Case, F, Value, When
from django.utils import timezone

from approvals import hooks
from approvals.models import ApprovalRequest, ApprovalStatus
from engine.core.events import CloseApproval, RequestApproval, RunStatus, Trace, WriteRow
from engine.core.events import RowStatus as CoreRowStatus
from engine.core.parts import GONE, SnapshotDelta, assemble, is_head
from engine.core.rows import NodeRow, apply_write
from engine.core.runtime import parse_time
from engine.core.store import ApprovalCommand, StoredRun, UnknownRun
from engine.core.timestamps import format_timestamp
from engine.core.values import dumps
from engine.models import NodeState, PartChange, Run, RunPart, Runtime, TraceEvent
from engine.models import RowStatus as RowChoices

TERMINAL = (RowChoices.COMPLETED.value, RowChoices.FAILED.value)


def fence_condition(table: str, collate: str) -> str:
    """Return the ON CONFLICT ... WHERE of the fence (byte order for ids on PostgreSQL)."""
    new, old = f"excluded.status_detail{collate}", f"{table}.status_detail{collate}"
    return f"""
        ON CONFLICT (run_id, node) DO UPDATE SET
            status = excluded.status, status_detail = excluded.status_detail,
            execution_id = excluded.execution_id, result = excluded.result,
            attempt = excluded.attempt, updated_at = excluded.updated_at
        WHERE {new} > {old}
           OR ({new} = {old} AND (excluded.attempt > {table}.attempt
               OR (excluded.attempt = {table}.attempt
                   AND {table}.status NOT IN ('{TERMINAL[0]}', '{TERMINAL[1]}'))))
    """


COLUMNS = "run_id, node, status, status_detail, execution_id, result, attempt, updated_at"


def fenced_upsert_sql(count: int) -> str:
    """Return the fenced upsert of `count` rows as one VALUES list (SQLite's form)."""
    table = NodeState._meta.db_table
    collate = ' COLLATE "C"' if connection.vendor == "postgresql" else ""
    values = ", ".join(["(%s, %s, %s, %s, %s, %s, %s, %s)"] * count)
    return f"INSERT INTO {table} ({COLUMNS}) VALUES {values}" + fence_condition(table, collate)


def fenced_unnest_sql() -> str:
    """Return PostgreSQL's fenced upsert of any number of rows: six arrays, one per column.

    Its text is the same for every batch size, and the arrays travel as six bound
    parameters, not as eight placeholders per row quoted one by one.
    """
    table = NodeState._meta.db_table
    return (
        f"INSERT INTO {table} ({COLUMNS}) "
        "SELECT %s::uuid, u.node, u.status, u.detail, u.eid, u.result::jsonb, u.attempt, %s "
        "FROM unnest(%s::text[], %s::text[], %s::text[], %s::text[], %s::text[], %s::int[]) "
        "AS u(node, status, detail, eid, result, attempt)"
    ) + fence_condition(table, ' COLLATE "C"')


ROWS_PER_STATEMENT = 500


def collapse(rows: Sequence[WriteRow]) -> list[NodeRow]:
    """Fold one batch's writes per node with the fence rule itself.

    What lands of the folded batch over a stored row is what the writes would leave one by
    one, and one statement may not touch a row twice.
    """
    winners: dict[str, NodeRow] = {}
    for row in rows:
        apply_write(winners, row)
    return list(winners.values())


def write_rows(run_id: str, rows: Sequence[WriteRow]) -> None:
    """Apply fenced writes as one statement (PostgreSQL) or one per 500 nodes; no read before."""
    if not rows:
        return
    batch = collapse(rows)
    if connection.vendor == "postgresql":
        write_rows_postgresql(str(run_id), batch)
        return
    now = timezone.now()
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
            cursor.execute(fenced_upsert_sql(len(chunk)), params)


def write_rows_postgresql(run_id: str, batch: Sequence[NodeRow]) -> None:
    """Run the unnest upsert with server-side binding (Django binds on the client)."""
    params = [
        run_id,
        timezone.now(),
        [row.node for row in batch],
        [row.status.value for row in batch],
        [row.status_detail for row in batch],
        [row.execution_id for row in batch],
        [dumps(row.result) for row in batch],
        [row.attempt for row in batch],
    ]
    with server_side_cursor() as cursor:
        cursor.execute(fenced_unnest_sql(), params)


# PostgreSQL matches `= ANY` of a constant array of at least 9 elements through a hash table.
HASHED_ARRAY_MIN = 9


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


def long_array(params: Any) -> bool:
    """Return whether statement parameters hold a list of HASHED_ARRAY_MIN or more values."""
    values = params.values() if isinstance(params, Mapping) else params or ()
    return any(isinstance(v, list) and len(v) >= HASHED_ARRAY_MIN for v in values)


@contextmanager
def pipelined() -> Iterator[None]:
    """Send the block's statements without waiting for each answer (PostgreSQL).

    psycopg's pipeline mode queues each statement and waits once, when a result is read
    or the block ends: the writes of one step cost one round trip instead of one each.
    The transaction is the same, so an error in any statement fails the whole step as
    before (it is raised at the latest when the block ends). Elsewhere it does nothing.
    Only for statements whose row count nobody reads: a deferred answer has none yet.
    """
    if connection.vendor != "postgresql":
        yield
        return
    connection.ensure_connection()
    with connection.connection.pipeline():
        yield


def insert_trace(run_id: str, first: int, trace: Sequence[Trace]) -> None:
    """Append trace events from sequence number `first`, reading nothing back."""
    if not trace:
        return
    if connection.vendor != "postgresql":
        TraceEvent.objects.bulk_create(
            TraceEvent(run_id=run_id, seq=first + i, event=t.event, execution_id=t.execution_id,
                       node=t.node or "", at=t.at, detail=t.detail)
            for i, t in enumerate(trace)
        )  # fmt: skip
        return
    # Django's bulk_create reads the new ids back, which would end a pipeline's batch.
    table = TraceEvent._meta.db_table
    with server_side_cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {table} (run_id, seq, event, execution_id, node, at, detail) "
            "SELECT %s::uuid, u.seq, u.event, u.eid, u.node, u.at, u.detail::jsonb "
            "FROM unnest(%s::int[], %s::text[], %s::text[], %s::text[], %s::text[], %s::text[]) "
            "AS u(seq, event, eid, node, at, detail)",
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


def server_side_cursor() -> Any:
    """Return a cursor on Django's PostgreSQL connection that binds parameters on the server.

    It shares the connection and so the surrounding transaction, and goes through Django's
    cursor wrapper, so query logging and execute wrappers still see the statement.
    """
    connection.ensure_connection()
    raw = PreparedCursor(connection.connection)
    if connection.queries_logged:
        return connection.make_debug_cursor(raw)
    return connection.make_cursor(raw)


def open_requests(run_id: str, requests: Sequence[RequestApproval]) -> None:
    """Insert approval requests and audit them; a key already stored is left as it is."""
    for start in range(0, len(requests), ROWS_PER_STATEMENT):
        chunk = requests[start : start + ROWS_PER_STATEMENT]
        keys = [r.key for r in chunk]
        known = set(ApprovalRequest.objects.filter(key__in=keys).values_list("key", flat=True))
        ApprovalRequest.objects.bulk_create(
            [ApprovalRequest(run_id=run_id, key=r.key, node=r.node, execution_id=r.execution_id,
                             groups=list(r.groups), policy=r.policy, title=r.title,
                             instructions=r.instructions, allow_starter=r.allow_starter,
                             shown=[{"field": f, "value": v} for f, v in r.shown],
                             due_at=parse_time(r.due) if r.due else None)
             for r in chunk if r.key not in known],
            ignore_conflicts=True,
        )  # fmt: skip
        fresh = [key for key in keys if key not in known]
        if fresh:
            hooks.opened(list(ApprovalRequest.objects.filter(key__in=fresh).order_by("id")))


def close_requests(run_id: str, reasons: dict[str, str]) -> None:
    """Close open requests with their reasons and audit them: one UPDATE per 500 keys."""
    now, keys = timezone.now(), list(reasons)
    for start in range(0, len(keys), ROWS_PER_STATEMENT):
        chunk = keys[start : start + ROWS_PER_STATEMENT]
        outcome = Case(*(When(key=key, then=Value(reasons[key])) for key in chunk))
        still_open = ApprovalRequest.objects.filter(
            run_id=run_id, key__in=chunk, status=ApprovalStatus.OPEN
        )
        closing = list(still_open.order_by("id"))
        still_open.update(status=ApprovalStatus.CLOSED, outcome=outcome, closed_at=now)
        hooks.closed(closing, reasons)


def record_approvals(run_id: str, approvals: Sequence[ApprovalCommand]) -> None:
    """Open the step's requests, then close what it closed (the first reason counts)."""
    open_requests(run_id, [c for c in approvals if isinstance(c, RequestApproval)])
    reasons: dict[str, str] = {}
    for command in approvals:
        if isinstance(command, CloseApproval):
            reasons.setdefault(command.key, command.reason)
    if reasons:
        close_requests(run_id, reasons)


def write_parts(run_id: str, delta: SnapshotDelta) -> None:
    """Delete the parts a step dropped, then upsert the parts it put: a statement each.

    With `replace`, every stored part of the run goes first. On PostgreSQL each statement
    binds two arrays, whatever the number of parts; SQLite takes 500 parts a statement.
    """
    if delta.replace:
        RunPart.objects.filter(run_id=run_id).delete()
    if not delta.drop and not delta.put:
        return
    keys = list(delta.put)
    values = [dumps(value) for value in delta.put.values()]
    table = RunPart._meta.db_table
    if connection.vendor == "postgresql":
        with server_side_cursor() as cursor:
            if delta.drop:
                cursor.execute(f"DELETE FROM {table} WHERE run_id = %s AND key = ANY(%s::text[])",
                               [run_id, list(delta.drop)])  # fmt: skip
            if keys:
                cursor.execute(
                    f"INSERT INTO {table} (run_id, key, value) SELECT %s::uuid, u.key, u.value "
                    "FROM unnest(%s::text[], %s::text[]) AS u(key, value) "
                    "ON CONFLICT (run_id, key) DO UPDATE SET value = excluded.value",
                    [run_id, keys, values],
                )
        return
    hex_id = str(run_id).replace("-", "")
    with connection.cursor() as cursor:
        for start in range(0, len(delta.drop), ROWS_PER_STATEMENT):
            chunk = delta.drop[start : start + ROWS_PER_STATEMENT]
            marks = ", ".join(["%s"] * len(chunk))
            cursor.execute(f"DELETE FROM {table} WHERE run_id = %s AND key IN ({marks})",
                           [hex_id, *chunk])  # fmt: skip
        for start in range(0, len(keys), ROWS_PER_STATEMENT):
            rows = list(zip(keys[start : start + ROWS_PER_STATEMENT],
                            values[start : start + ROWS_PER_STATEMENT], strict=True))  # fmt: skip
            marks = ", ".join(["(%s, %s, %s)"] * len(rows))
            cursor.execute(
                f"INSERT INTO {table} (run_id, key, value) VALUES {marks} "
                "ON CONFLICT (run_id, key) DO UPDATE SET value = excluded.value",
                [value for key, text in rows for value in (hex_id, key, text)],
            )


def stored_snapshot(run_id: str, snapshot: dict[str, Any]) -> dict[str, Any]:
    """Return a run's whole snapshot: a head with its parts assembled, or as stored."""
    if not is_head(snapshot):
        return snapshot
    return assemble(snapshot, stored_parts(run_id))


def stored_parts(run_id: str) -> Iterator[tuple[str, Any]]:
    """Return a run's stored parts, decoded.

    On PostgreSQL the server joins them into one JSON object's text, decoded by one
    `json.loads`: a fork of 1,000 holds 3,000 parts, which as rows cost a worker's first
    step of the run about 17 ms to read and decode.
    """
    if connection.vendor != "postgresql":
        parts = RunPart.objects.filter(run_id=run_id).values_list("key", "value")
        return ((key, json.loads(value)) for key, value in parts)
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT '{' || string_agg(to_json(key)::text || ':' || value, ',') || '}' "
            f"FROM {RunPart._meta.db_table} WHERE run_id = %s",
            [Run._meta.pk.get_db_prep_value(uuid.UUID(str(run_id)), connection)],
        )
        row = cursor.fetchone()
    return iter(json.loads(row[0]).items() if row and row[0] else ())


STEP_COLUMNS = frozenset({"state", "step_attempts"})


def commit_sql() -> str:
    """Return the statement that writes a step on PostgreSQL: trace, node rows, parts and
    the run row, from JSON arrays, the keys to drop and the run's columns, in one statement.

    With a `version` (the one this commit makes) it also records the keys the step put or
    dropped under it, and deletes the run's change rows up to `horizon` (changes_kept).

    Its text never changes, so it is prepared once per connection. Each array of rows
    arrives as one JSON text: one `dumps` instead of an array of each column for each
    table. The parts put arrive as one JSON object taken apart as `json`, not `jsonb`: each
    value is stored as the very text `dumps` gave it, key order included.

    The keys to drop arrive as a text array matched with `= ANY`, which PreparedCursor
    plans for its values when it is long.
    """
    nodes, parts, trace = (NodeState._meta.db_table, RunPart._meta.db_table,
                           TraceEvent._meta.db_table)  # fmt: skip
    changes = PartChange._meta.db_table
    return f"""
        WITH traced AS (
            INSERT INTO {trace} (run_id, seq, event, execution_id, node, at, detail)
            SELECT %(run)s::uuid, %(first)s::int + (e.n - 1)::int, e.v->>0, e.v->>1, e.v->>2,
                   e.v->>3, e.v->4
            FROM jsonb_array_elements(%(trace)s::jsonb) WITH ORDINALITY AS e(v, n)
        ), written AS (
            INSERT INTO {nodes} ({COLUMNS})
            SELECT %(run)s::uuid, e->>0, e->>1, e->>2, e->>3, e->5, (e->>4)::int, %(now)s
            FROM jsonb_array_elements(%(rows)s::jsonb) AS e
            {fence_condition(nodes, ' COLLATE "C"')}
        ), dropped AS (
            DELETE FROM {parts} WHERE run_id = %(run)s::uuid AND key = ANY(%(drop)s::text[])
        ), put AS (
            INSERT INTO {parts} (run_id, key, value)
            SELECT %(run)s::uuid, e.key, e.value::text FROM json_each(%(put)s::json) AS e
            ON CONFLICT (run_id, key) DO UPDATE SET value = excluded.value
        ), changed AS (
            INSERT INTO {changes} (run_id, version, keys)
            SELECT %(run)s::uuid, %(version)s::bigint, %(keys)s::text
            WHERE %(version)s::bigint IS NOT NULL
        ), pruned AS (
            DELETE FROM {changes} WHERE run_id = %(run)s::uuid AND version <= %(horizon)s::bigint
        )
        UPDATE {Run._meta.db_table} SET status = %(status)s, snapshot = %(head)s::jsonb,
            error = %(error)s, trace_length = %(length)s, updated_at = %(now)s,
            snapshot_version = snapshot_version + 1,
            state = CASE WHEN %(has_state)s THEN %(state)s::jsonb ELSE state END,
            step_attempts = COALESCE(%(attempts)s, step_attempts)
        WHERE id = %(run)s::uuid
    """


def commit_postgresql(
    run_id: str, status: RunStatus, delta: SnapshotDelta, rows: Sequence[WriteRow],
    trace: Sequence[Trace], first: int, error: str | None, columns: dict[str, Any],
    version: int | None = None,
) -> None:  # fmt: skip
    """Write a step as one statement (commit_sql), reading nothing back.

    It writes what the separate statements wrote: the trace from sequence number `first`,
    the node rows through the fence (folded per node first), the parts dropped and put,
    and the run row. A part both dropped and put is put.
    """
    batch = collapse(rows)
    drop = [key for key in delta.drop if key not in delta.put]
    logged, horizon = changes_kept(version, status)
    with server_side_cursor() as cursor:
        cursor.execute(
            commit_sql(),
            {
                "run": run_id,
                "first": first,
                "trace": dumps([[t.event, t.execution_id, t.node or "", t.at, t.detail]
                                for t in trace]),
                "rows": dumps([[r.node, r.status.value, r.status_detail, r.execution_id,
                               r.attempt, r.result] for r in batch]),
                "drop": drop,
                "put": dumps(delta.put),
                "status": status.value,
                "head": dumps(delta.head),
                "error": error or "",
                "length": first + len(trace),
                "now": timezone.now(),
                "has_state": "state" in columns,
                "state": dumps(columns.get("state")),
                "attempts": columns.get("step_attempts"),
                "version": logged,
                "keys": dumps([*delta.put, *drop]) if logged is not None else "",
                "horizon": horizon,
            },
        )  # fmt: skip


# How many versions of a run's part changes are kept: a worker whose cached state is older
# than that reads every part. Pruned every CHANGES_PRUNED versions, and wholly at the end.
CHANGES_KEPT = 64
CHANGES_PRUNED = 16


def changes_kept(version: int | None, status: RunStatus) -> tuple[int | None, int]:
    """Return the version to record a step's part changes under (None: record none) and
    the version up to which the run's older change rows are deleted (-1: none)."""
    if version is None:
        return None, -1
    if status.finished:  # no step follows that could catch up: keep nothing
        return None, version
    if version % CHANGES_PRUNED == 0:
        return version, version - CHANGES_KEPT
    return version, -1


def record_changes(run_id: str, delta: SnapshotDelta, status: RunStatus, version: int) -> None:
    """Record a step's part changes (and prune old ones) with the ORM, as commit_sql does."""
    logged, horizon = changes_kept(version, status)
    if horizon >= 0:
        PartChange.objects.filter(run_id=run_id, version__lte=horizon).delete()
    if logged is not None:
        keys = [*delta.put, *(key for key in delta.drop if key not in delta.put)]
        PartChange.objects.create(run_id=run_id, version=logged, keys=dumps(keys))


def changed_parts(run_id: str, since: int, now: int) -> dict[str, Any] | None:
    """Return the parts put or dropped after version `since` up to `now`, as stored now
    (GONE for a part no longer stored), or None when a version in between left no record
    of its changes (a retry, a whole snapshot, or pruned): then only a full load will do.

    The caller holds the run's lock, so `now` is the stored version. On PostgreSQL it is
    one statement: the change rows, their keys, and those parts as one JSON text.
    """
    if connection.vendor != "postgresql":
        logs = list(PartChange.objects.filter(run_id=run_id, version__gt=since)
                    .values_list("keys", flat=True))  # fmt: skip
        if len(logs) != now - since:
            return None
        keys = {key for text in logs for key in json.loads(text)}
        found: dict[str, Any] = dict.fromkeys(keys, GONE)
        ordered = sorted(keys)
        for start in range(0, len(ordered), ROWS_PER_STATEMENT):
            chunk = ordered[start : start + ROWS_PER_STATEMENT]
            for key, value in RunPart.objects.filter(run_id=run_id, key__in=chunk).values_list(
                "key", "value"
            ):
                found[key] = json.loads(value)
        return found
    changes, parts = PartChange._meta.db_table, RunPart._meta.db_table
    run = Run._meta.pk.get_db_prep_value(uuid.UUID(str(run_id)), connection)
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            WITH log AS (
                SELECT keys FROM {changes} WHERE run_id = %(run)s AND version > %(since)s
            ), touched AS (
                SELECT DISTINCT k.key FROM log, json_array_elements_text(log.keys::json) AS k(key)
            )
            SELECT (SELECT count(*) FROM log), (SELECT json_agg(key)::text FROM touched),
                   (SELECT '{{' || string_agg(to_json(p.key)::text || ':' || p.value, ',') || '}}'
                    FROM {parts} p
                    WHERE p.run_id = %(run)s AND p.key = ANY(ARRAY(SELECT key FROM touched)))
            """,
            {"run": run, "since": since},
        )
        count, keys, values = cursor.fetchone()
    if count != now - since:
        return None
    found = dict.fromkeys(json.loads(keys) if keys else (), GONE)
    if values:
        found.update(json.loads(values))
    return found


def graphs_digest(documents: Mapping[str, Any]) -> str:
    """Return the key under which runs with these graph documents share their decoding."""
    return hashlib.sha256(json.dumps(documents, sort_keys=True).encode()).hexdigest()


class DjangoStore:
    """The ExecutionStore protocol on the project's database."""

    def __init__(
        self, flow_version: Any = None, started_by: Any = None,
        runtime: Runtime = Runtime.IN_PROCESS, idempotency: tuple[str, str] = ("", ""),
    ) -> None:  # fmt: skip
        self.flow_version = flow_version
        self.started_by = started_by
        self.runtime = runtime
        self.idempotency = idempotency  # the start's Idempotency-Key and request digest

    def create(self, run_id: str, flow: str, input_value: Any, graphs: dict[str, Any]) -> None:
        if Run.objects.filter(pk=run_id).exists():
            raise ValueError(f"run {run_id} exists")
        Run.objects.create(
            pk=run_id, label=flow, graphs=graphs, graphs_digest=graphs_digest(graphs),
            input=input_value,
            status=RunStatus.RUNNING.value, flow_version=self.flow_version,
            started_by=self.started_by, runtime=self.runtime,
            idempotency_key=self.idempotency[0], idempotency_digest=self.idempotency[1],
        )  # fmt: skip

    # No savepoint inside a caller's transaction: a failed commit fails the whole step.
    @transaction.atomic(savepoint=False)
    def commit(
        self, run_id: str, status: RunStatus, snapshot: dict[str, Any] | SnapshotDelta,
        rows: Sequence[WriteRow], trace: Sequence[Trace], error: str | None = None,
        approvals: Sequence[ApprovalCommand] = (), *, trace_length: int | None = None,
        columns: dict[str, Any] | None = None, version: int | None = None,
    ) -> None:  # fmt: skip
        """Save one step. A caller that holds the run's lock passes the `trace_length` it
        read with it (saving a read), `columns` of the run to set in the same UPDATE, and
        the `version` this commit makes, under which a delta's part keys are recorded for
        workers whose cached state is older (changed_parts)."""
        if trace_length is None:
            locked = Run.objects.select_for_update(no_key=True).only("trace_length")
            trace_length = locked.get(pk=run_id).trace_length
        first = trace_length
        columns = columns or {}
        if (connection.vendor == "postgresql" and isinstance(snapshot, SnapshotDelta)
                and not snapshot.replace and set(columns) <= STEP_COLUMNS):  # fmt: skip
            if approvals:
                record_approvals(run_id, approvals)
            commit_postgresql(run_id, status, snapshot, rows, trace, first, error, columns,
                              version)  # fmt: skip
            return
        insert_trace(run_id, first, trace)
        write_rows(run_id, rows)
        if approvals:
            record_approvals(run_id, approvals)
        if isinstance(snapshot, SnapshotDelta):
            write_parts(run_id, snapshot)
            head = snapshot.head
        else:
            RunPart.objects.filter(run_id=run_id).delete()
            head = snapshot
        Run.objects.filter(pk=run_id).update(
            status=status.value, snapshot=head, error=error or "",
            trace_length=first + len(trace), updated_at=timezone.now(),
            snapshot_version=F("snapshot_version") + 1, **columns,
        )  # fmt: skip
        if version is not None and isinstance(snapshot, SnapshotDelta) and not snapshot.replace:
            record_changes(run_id, snapshot, status, version)

    def load(self, run_id: str) -> StoredRun:
        try:
            run = Run.objects.filter(pk=uuid.UUID(str(run_id))).first()
        except ValueError:
            run = None
        if run is None:
            raise UnknownRun(run_id)
        snapshot = stored_snapshot(str(run.pk), run.snapshot)
        return StoredRun(str(run.pk), run.label, run.input, RunStatus(run.status), snapshot,
                         run.graphs, run.error or None)  # fmt: skip

    def rows(self, run_id: str) -> dict[str, NodeRow]:
        # The ORM's SQL, run on the cursor, and every result decoded by one json.loads of a
        # JSON array: at 10,000 rows (the monitor's tree) the ORM's per-row converters cost
        # four times the query, and a json.loads per row twice it.
        query = NodeState.objects.filter(run_id=run_id).values_list(
            "node", "status", "execution_id", "result", "attempt"
        )
        sql, params = query.query.sql_with_params()
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
            found = cursor.fetchall()
        results = json.loads("[" + ",".join("null" if r[3] is None else r[3] for r in found) + "]")
        statuses = {status.value: status for status in CoreRowStatus}
        return {
            node: NodeRow(node, statuses[status], execution_id, result, attempt)
            for (node, status, execution_id, _, attempt), result in zip(found, results, strict=True)
        }

    def trace(self, run_id: str) -> list[Trace]:
        return [
            Trace(
                event=t.event,
                execution_id=t.execution_id,
                node=t.node or None,
                at=t.at,
                detail=t.detail,
            )
            for t in TraceEvent.objects.filter(run_id=run_id).order_by("seq")
        ]

    def approvals(self, run_id: str) -> list[RequestApproval]:
        try:
            known = Run.objects.filter(pk=uuid.UUID(str(run_id))).exists()
        except ValueError:
            known = False
        if not known:
            raise UnknownRun(run_id)
        return [
            RequestApproval(key=r.key, node=r.node, execution_id=r.execution_id,
                            groups=tuple(r.groups), policy=r.policy, title=r.title,
                            instructions=r.instructions, allow_starter=r.allow_starter,
                            shown=tuple((s["field"], s["value"]) for s in r.shown),
                            due=format_timestamp(r.due_at) if r.due_at else None)
            for r in ApprovalRequest.objects.filter(run_id=run_id, status=ApprovalStatus.OPEN)
            .order_by("id")
        ]  # fmt: skip
