"""The statements of PostgreSQL's storage backend, as text: each never changes, so each
connection prepares it once (PreparedCursor)."""

import functools

from django.db import connection

from engine.models import Dispatch, NodeState, PartChange, PendingEvent, Run, RunPart, TraceEvent
from engine.runtime.fence import COLUMNS, fence_condition
from engine.runtime.records import RUN_COLUMNS

COLLATE = ' COLLATE "C"'

INSERT_TRACE = (
    f"INSERT INTO {TraceEvent._meta.db_table} (run_id, seq, event, execution_id, node, at, "
    "detail) SELECT %s::uuid, u.seq, u.event, u.eid, u.node, u.at, u.detail::jsonb "
    "FROM unnest(%s::int[], %s::text[], %s::text[], %s::text[], %s::text[], %s::text[]) "
    "AS u(seq, event, eid, node, at, detail)"
)

STORED_PARTS = (
    "SELECT '{{' || string_agg(to_json(key)::text || ':' || value, ',') || '}}' "
    "FROM {parts} WHERE run_id = %s"
)

PENDING = "EXISTS (SELECT 1 FROM engine_pendingevent WHERE run_id = %s AND applied_at IS NULL)"

BEGIN_STEP = (
    f"WITH pending AS (SELECT {PENDING} AS waiting), "
    "free AS (SELECT id FROM engine_run WHERE id = %s AND (SELECT waiting FROM pending) "
    "FOR NO KEY UPDATE SKIP LOCKED), "
    "counted AS (UPDATE engine_run SET step_attempts = step_attempts + 1 "
    "WHERE id IN (SELECT id FROM free) RETURNING id) "
    "SELECT EXISTS (SELECT 1 FROM counted), (SELECT waiting FROM pending)"
)


def fenced_unnest_sql() -> str:
    """Return the fenced upsert of any number of rows: six arrays, one per column.

    Its text is the same for every batch size, and the arrays travel as six bound
    parameters, not as eight placeholders per row quoted one by one.
    """
    table = NodeState._meta.db_table
    return (
        f"INSERT INTO {table} ({COLUMNS}) "
        "SELECT %s::uuid, u.node, u.status, u.detail, u.eid, u.result::jsonb, u.attempt, %s "
        "FROM unnest(%s::text[], %s::text[], %s::text[], %s::text[], %s::text[], %s::int[]) "
        "AS u(node, status, detail, eid, result, attempt)"
    ) + fence_condition(table, COLLATE)


def upsert_parts_sql() -> str:
    """Return the upsert of a run's parts from two arrays, keys and values."""
    return (
        f"INSERT INTO {RunPart._meta.db_table} (run_id, key, value) SELECT %s::uuid, u.key, "
        "u.value FROM unnest(%s::text[], %s::text[]) AS u(key, value) "
        "ON CONFLICT (run_id, key) DO UPDATE SET value = excluded.value"
    )


def changed_parts_sql() -> str:
    """Return the statement of changed_parts: the change rows after a version, their keys,
    and those parts as one JSON text."""
    changes, parts = PartChange._meta.db_table, RunPart._meta.db_table
    return f"""
        WITH log AS (
            SELECT keys FROM {changes} WHERE run_id = %(run)s AND version > %(since)s
        ), touched AS (
            SELECT DISTINCT k.key FROM log, json_array_elements_text(log.keys::json) AS k(key)
        )
        SELECT (SELECT count(*) FROM log), (SELECT json_agg(key)::text FROM touched),
               (SELECT '{{' || string_agg(to_json(p.key)::text || ':' || p.value, ',') || '}}'
                FROM {parts} p
                WHERE p.run_id = %(run)s AND p.key = ANY(ARRAY(SELECT key FROM touched)))
        """


def step_writes(guard: str, first: str) -> str:
    """Return the WITH items that write a step's trace, node rows, parts and part changes,
    from JSON arrays and the keys to drop (commit_sql): each writes only where `guard` (a
    condition; "TRUE" for always) holds, and the trace is numbered from `first`."""
    nodes, parts, trace = (NodeState._meta.db_table, RunPart._meta.db_table,
                           TraceEvent._meta.db_table)  # fmt: skip
    changes = PartChange._meta.db_table
    return f"""
        traced AS (
            INSERT INTO {trace} (run_id, seq, event, execution_id, node, at, detail)
            SELECT %(run)s::uuid, {first} + (e.n - 1)::int, e.v->>0, e.v->>1, e.v->>2,
                   e.v->>3, e.v->4
            FROM jsonb_array_elements(%(trace)s::jsonb) WITH ORDINALITY AS e(v, n)
            WHERE {guard}
        ), written AS (
            INSERT INTO {nodes} ({COLUMNS})
            SELECT %(run)s::uuid, e->>0, e->>1, e->>2, e->>3, e->5, (e->>4)::int, %(now)s
            FROM jsonb_array_elements(%(rows)s::jsonb) AS e
            WHERE {guard}
            {fence_condition(nodes, COLLATE)}
        ), dropped AS (
            DELETE FROM {parts} WHERE run_id = %(run)s::uuid AND key = ANY(%(drop)s::text[])
              AND {guard}
        ), put AS (
            INSERT INTO {parts} (run_id, key, value)
            SELECT %(run)s::uuid, e.key, e.value::text FROM json_each(%(put)s::json) AS e
            WHERE {guard}
            ON CONFLICT (run_id, key) DO UPDATE SET value = excluded.value
        ), changed AS (
            INSERT INTO {changes} (run_id, version, keys)
            SELECT %(run)s::uuid, %(version)s::bigint, %(keys)s::text
            WHERE %(version)s::bigint IS NOT NULL AND {guard}
        ), pruned AS (
            DELETE FROM {changes} WHERE run_id = %(run)s::uuid AND version <= %(horizon)s::bigint
              AND {guard}
        )"""


def run_update(where: str, length: str) -> str:
    """Return the UPDATE of the run row that ends a step's writes (commit_sql)."""
    return f"""
        UPDATE {Run._meta.db_table} SET status = %(status)s, snapshot = %(head)s::jsonb,
            error = %(error)s, trace_length = {length}, updated_at = %(now)s,
            snapshot_version = snapshot_version + 1,
            state = CASE WHEN %(has_state)s THEN %(state)s::jsonb ELSE state END,
            step_attempts = COALESCE(%(attempts)s, step_attempts)
        WHERE {where}"""


def commit_sql() -> str:
    """Return the statement that writes a step: trace, node rows, parts and the run row,
    from JSON arrays, the keys to drop and the run's columns, in one statement.

    With a `version` (the one this commit makes) it also records the keys the step put or
    dropped under it, and deletes the run's change rows up to `horizon` (changes_kept).

    Each array of rows arrives as one JSON text: one `dumps` instead of an array of each
    column for each table. The parts put arrive as one JSON object taken apart as `json`,
    not `jsonb`: each value is stored as the very text `dumps` gave it, key order included.

    The keys to drop arrive as a text array matched with `= ANY`, which PreparedCursor
    plans for its values when it is long.
    """
    return (f"WITH {step_writes('TRUE', '%(first)s::int')}"
            f"{run_update('id = %(run)s::uuid', '%(length)s')}")  # fmt: skip


def step_ahead_sql() -> str:
    """Return the statement of a step computed before its lock (results.step_ahead): the
    lock, the action's result, the step's writes and its new dispatches, in one statement.

    `locked` takes the run only at the version the step was computed from, with no step
    attempt counted and no event waiting; else (another worker holds or moved the run, or
    an event came) it takes nothing. The action's dispatch is closed and its result goes
    into the inbox either way, applied when the run was taken (as lock_and_take records
    it). `go` holds a row when the run was taken and the result is new (a duplicate's key
    inserts nothing, and a duplicate is never applied twice); every write of the step
    waits on it, the trace numbered from the locked row's length. The answer: whether the
    step was written, and the new dispatches' ids and keys.
    """
    run, inbox, dispatches = (Run._meta.db_table, PendingEvent._meta.db_table,
                              Dispatch._meta.db_table)  # fmt: skip
    claimed = "CASE WHEN u.n <= %(room)s THEN {} END"
    return compact(f"""
        WITH locked AS (
            SELECT id, trace_length FROM {run}
            WHERE id = %(run)s::uuid AND snapshot_version = %(since)s AND step_attempts = 0
              AND NOT EXISTS (SELECT 1 FROM {inbox}
                              WHERE run_id = %(run)s::uuid AND applied_at IS NULL)
            FOR NO KEY UPDATE SKIP LOCKED
        ), {recorded_result(inbox, dispatches)}, go AS MATERIALIZED (
            SELECT trace_length FROM locked WHERE EXISTS (SELECT 1 FROM recorded)
        ), {step_writes("EXISTS (SELECT 1 FROM go)", "(SELECT trace_length FROM go)")},
        stepped AS ({
        run_update(
            "id IN (SELECT id FROM locked) AND EXISTS (SELECT 1 FROM go)",
            "trace_length + %(traced)s",
        )
    }
            RETURNING 1
        ), sent AS (
            INSERT INTO {dispatches} (run_id, key, command, created_at, published_at,
                                      claimed_by, claimed_at)
            SELECT %(run)s::uuid, u.command->>'key', u.command, %(now)s,
                   {claimed.format("%(now)s")}, {claimed.format("%(lease)s ELSE %(nobody)s")},
                   {claimed.format("%(now)s")}
            FROM jsonb_array_elements(%(commands)s::jsonb) WITH ORDINALITY AS u(command, n)
            WHERE EXISTS (SELECT 1 FROM go)
            ORDER BY u.n ON CONFLICT (key) DO NOTHING RETURNING id, key
        )
        SELECT EXISTS (SELECT 1 FROM stepped),
               (SELECT json_agg(json_build_array(id, key))::text FROM sent)
    """)


def compact(statement: str) -> str:
    """Return a statement with each run of white space made one space: psycopg converts a
    text of more than 4,096 bytes anew at every execution instead of once (its query
    cache's limit), and the indentation is most of a long statement. No statement here
    holds a literal with white space in it."""
    return " ".join(statement.split())


def recorded_result(inbox: str, dispatches: str) -> str:
    """Return the WITH items, after `locked`, that read the server's clock once the run is
    locked (`stamp`), close the action's dispatch (`closed`) and record its result in the
    inbox (`recorded`): applied at `stamp` when the run was locked, pending when not; a
    key stored before inserts nothing. Without a result's key they record nothing."""
    return f"""stamp AS MATERIALIZED (
            SELECT clock_timestamp() AS at FROM locked
        ), closed AS (
            UPDATE {dispatches} SET completed_at = %(now)s WHERE id = %(dispatch)s::bigint
        ), recorded AS (
            INSERT INTO {inbox} (run_id, key, event, created_at, applied_at)
            SELECT %(run)s::uuid, %(key)s::text, %(event)s::jsonb, %(now)s,
                   (SELECT at FROM stamp)
            WHERE %(key)s::text IS NOT NULL
            ON CONFLICT (run_id, key) DO NOTHING
            RETURNING id, key, event, applied_at
        )"""


def lock_and_take_sql() -> str:
    """Return the statement of lock_and_take: one statement, prepared once.

    `locked` takes the run's lock, or finds another worker holding it and skips it. Only
    under the lock does `marked` mark the run's unapplied inbox events applied. An
    action's result (when the parameters name one) closes its dispatch and goes into the
    inbox, applied already when the run is locked here (the step applies it) and pending
    when it is not (the holder, or the caller's next `advance`, applies it); a key stored
    before inserts nothing. The one row answered is the run with its events, in id
    order; no row means another worker holds the run.

    One statement has one snapshot, so the lock and the mark cannot see different
    moments (two statements needed the mark to go first). An event committed after the
    snapshot is left for the look after the commit, like one recorded during the step.

    `applied_at` is the server's clock read once, after the lock is taken: the steps of a
    run then stamp their events in the order they ran, which is how the chaos oracle
    replays them. A time taken in the worker before the statement could be older than
    the step before it (a worker stopped for 6 s between the two, in `make chaos`).
    """
    run, inbox, dispatches = (Run._meta.db_table, PendingEvent._meta.db_table,
                              Dispatch._meta.db_table)  # fmt: skip
    return f"""
        WITH locked AS (
            SELECT {", ".join(RUN_COLUMNS)} FROM {run} WHERE id = %(run)s
            FOR NO KEY UPDATE SKIP LOCKED
        ), {recorded_result(inbox, dispatches)}, marked AS (
            UPDATE {inbox} SET applied_at = (SELECT at FROM stamp)
            WHERE run_id = %(run)s AND applied_at IS NULL AND run_id IN (SELECT id FROM locked)
            RETURNING id, key, event, applied_at
        )
        SELECT locked.*, (
            SELECT json_agg(json_build_array(e.id, e.key, e.event) ORDER BY e.id)::text
            FROM (SELECT * FROM marked UNION ALL SELECT * FROM recorded) AS e
            WHERE e.applied_at IS NOT NULL
        ) FROM locked
    """


def take_back_attempt_sql() -> str:
    """Return the statement that counts one attempt less unless another step holds the
    run, and answers whether it was free and the run's snapshot version."""
    table = Run._meta.db_table
    return (
        f"WITH free AS (SELECT id FROM {table} WHERE id = %s FOR NO KEY UPDATE SKIP LOCKED), "
        f"taken AS (UPDATE {table} SET step_attempts = step_attempts - 1 "
        "WHERE id IN (SELECT id FROM free) AND step_attempts > 0) "
        f"SELECT EXISTS (SELECT 1 FROM free), snapshot_version FROM {table} WHERE id = %s"
    )


def send_dispatches_sql() -> str:
    """Return the insert of a step's outbox rows from one JSON array of commands, the first
    `room` claimed by this process, answering the ids of the keys that were new."""
    claimed = "CASE WHEN u.n <= %(room)s THEN {} END"
    return (
        f"INSERT INTO {Dispatch._meta.db_table} (run_id, key, command, created_at, "
        "published_at, claimed_by, claimed_at) "
        "SELECT %(run)s, u.command->>'key', u.command, %(now)s, "
        f"{claimed.format('%(now)s')}, {claimed.format('%(lease)s ELSE %(nobody)s')}, "
        f"{claimed.format('%(now)s')} "
        "FROM jsonb_array_elements(%(commands)s::jsonb) WITH ORDINALITY AS u(command, n) "
        "ORDER BY u.n ON CONFLICT (key) DO NOTHING RETURNING id, key"
    )


def mark_published_sql() -> str:
    """Return the statement that notes when dispatches were sent, skipping locked rows."""
    table = Dispatch._meta.db_table
    return (
        f"UPDATE {table} SET published_at = %s WHERE id IN (SELECT id FROM {table} "
        "WHERE id = ANY(%s::bigint[]) FOR NO KEY UPDATE SKIP LOCKED)"
    )


def record_results_sql() -> str:
    """Return the statement that closes dispatches and records their results."""
    return (
        f"WITH closed AS (UPDATE {Dispatch._meta.db_table} SET completed_at = %s "
        f"WHERE id = ANY(%s::bigint[])) INSERT INTO {PendingEvent._meta.db_table} "
        "(run_id, key, event, created_at) SELECT u.run_id, u.key, u.event::jsonb, %s "
        "FROM unnest(%s::uuid[], %s::text[], %s::text[]) AS u(run_id, key, event) "
        "ON CONFLICT (run_id, key) DO NOTHING"
    )


def record_result_and_begin_step_sql() -> str:
    """Return the statement that records one result, closes its dispatch and counts a step
    attempt when the run is free and has something pending."""
    return f"""
        WITH recorded AS (
            INSERT INTO {PendingEvent._meta.db_table} (run_id, key, event, created_at)
            VALUES (%s, %s, %s::jsonb, %s) ON CONFLICT (run_id, key) DO NOTHING
            RETURNING run_id
        ), closed AS (
            UPDATE {Dispatch._meta.db_table} SET completed_at = %s WHERE id = %s
        )
        UPDATE {Run._meta.db_table} SET step_attempts = step_attempts + 1
        WHERE id = %s
          AND id IN (SELECT id FROM {Run._meta.db_table} WHERE id = %s
                     FOR NO KEY UPDATE SKIP LOCKED)
          AND (EXISTS (SELECT 1 FROM recorded)
               OR EXISTS (SELECT 1 FROM {PendingEvent._meta.db_table}
                          WHERE run_id = %s AND applied_at IS NULL))
    """


def claim_sql() -> str:
    """Return the statement that claims open dispatches and answers each with its claimer
    before.

    Open or not is asked of the locked rows: beside the ids (OFFSET 0 keeps it out), a
    condition on completed_at let the planner walk every open dispatch.
    """
    table = Dispatch._meta.db_table
    return (
        f"UPDATE {table} AS d SET claimed_by = %s, claimed_at = %s "
        f"FROM (SELECT id, claimed_by, completed_at FROM {table} "
        "WHERE id = ANY(%s::bigint[]) OFFSET 0 FOR NO KEY UPDATE) AS before "
        "WHERE d.id = before.id AND before.completed_at IS NULL "
        "RETURNING d.id, d.run_id, d.key, d.command, before.claimed_by"
    )


@functools.cache
def start_run_sql(run_columns: tuple[str, ...], event_columns: tuple[str, ...]) -> str:
    """Return the insert of a run's row and its first inbox event, one statement: the
    event's row follows the run's (its foreign key is checked at the statement's end)."""
    quote = connection.ops.quote_name
    run_names = ", ".join(quote(c) for c in run_columns)
    event_names = ", ".join(quote(c) for c in event_columns)
    return (
        f"WITH run AS (INSERT INTO {quote(Run._meta.db_table)} ({run_names}) "
        f"VALUES ({', '.join(['%s'] * len(run_columns))}) RETURNING 1) "
        f"INSERT INTO {quote(PendingEvent._meta.db_table)} ({event_names}) "
        f"SELECT {', '.join(['%s'] * len(event_columns))} FROM run"
    )
