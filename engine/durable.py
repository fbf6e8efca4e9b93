"""The durable runtime: the pure core on the database, driven by Celery tasks.

Every change to a run goes through its inbox (PendingEvent, one row per event key) and one
function, `advance`, which takes the run's row lock, applies the pending events with
`step`, and commits the snapshot, node rows, trace, new dispatches and timers together.
Messages leave only after that commit (`on_commit`), so a worker killed at any instant
loses nothing: an uncommitted step is recomputed from the last commit, and a message lost
between commit and publish is re-sent by the sweeper.
"""

import collections
import dataclasses
import datetime as dt
import enum
import functools
import json
import logging
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import DatabaseError, connection, transaction
from django.db.models import F, Model, Q
from django.utils import timezone

from approvals import hooks
from approvals.models import ApprovalRequest, ApprovalStatus
from designer.models import FlowVersion
from engine import leases, live
from engine.actions import ACTIONS
from engine.core.events import (
    ActionFailed,
    CancelTimer,
    CloseApproval,
    Command,
    Event,
    Redrive,
    RequestApproval,
    RunAction,
    RunStatus,
    SetTimer,
    Start,
    TimerFired,
    Trace,
    WriteRow,
    event_from_json,
)
from engine.core.graph import Graph
from engine.core.inputs import check_input
from engine.core.parts import catch_up, is_head, restore, take_delta
from engine.core.runtime import parse_time, perform
from engine.core.scheduler import abort, step
from engine.core.state import MAIN, RunState
from engine.core.timestamps import format_timestamp
from engine.core.values import dumps
from engine.faults import crash_point, duplicate_now
from engine.models import Dispatch, PendingEvent, Run, RunPart, Runtime, Timer
from engine.store import (
    CHANGES_KEPT,
    DjangoStore,
    changed_parts,
    graphs_digest,
    pipelined,
    record_approvals,
    server_side_cursor,
    stored_snapshot,
)

logger = logging.getLogger(__name__)


def now_text() -> str:
    """Return the current time as RFC 3339."""
    return format_timestamp(timezone.now())


def create_run(
    graphs: dict[str, Graph], label: str, input_value: Any,
    flow_version: FlowVersion | None = None, started_by: AbstractBaseUser | None = None,
    idempotency: tuple[str, str] = ("", ""),
) -> Run:  # fmt: skip
    """Store a new run with its Start event; a worker advances it after the commit.

    An input that does not match the flow's `input` schema raises InputRejected first.
    With `idempotency` (a key and the request's digest), a run the same user started with
    the same key raises IntegrityError and nothing is stored.
    """
    check_input(graphs[MAIN].input, input_value)
    run_id = str(uuid.uuid4())
    with transaction.atomic():
        DjangoStore(flow_version, started_by, Runtime.DURABLE, idempotency).create(
            run_id, label, input_value, {key: g.to_json() for key, g in graphs.items()}
        )
        submit(run_id, "start", Start(at=now_text(), input=input_value))
        live.changed(run_id)
    return Run.objects.get(pk=run_id)


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
    from engine.tasks import advance_run

    send = functools.partial(advance_run.delay, str(run_id))
    transaction.on_commit(send, robust=True)
    if duplicate_now():
        transaction.on_commit(send, robust=True)


_GRAPHS: collections.OrderedDict[str, Mapping[str, Graph]] = collections.OrderedDict()
_GRAPHS_LOCK = threading.Lock()
GRAPHS_CACHED = 256


def run_graphs(
    run_id: str, documents: Mapping[str, Any] | None = None, digest: str = ""
) -> Mapping[str, Graph]:
    """Return a run's decoded graphs, cached per process by run and by documents.

    Decoding a 1,000-node graph takes tens of milliseconds, which every step (and every
    monitor refresh) would pay. A caller holding the run passes its `graphs` documents, so
    a miss costs no query, or its `graphs_digest`, so that a run whose documents this
    process decoded for another run reads none (on a fork of 1,000, reading, decoding and
    hashing them cost each worker process 6 ms per run).
    """
    with _GRAPHS_LOCK:
        found = _GRAPHS.get(run_id) or (_GRAPHS.get(digest) if digest else None)
        if found is not None:
            keep_graphs(found, run_id, digest)
            return found
    if documents is None:
        documents = Run.objects.values_list("graphs", flat=True).get(pk=run_id)
    # Runs of one flow version share their documents (unless a `latest` subflow moved on
    # between them): decode each set of documents once per process, not once per run.
    # (The stored digest was taken before the documents went through jsonb; kept under
    # both, a run's graphs are found by either.)
    read = graphs_digest(documents)
    with _GRAPHS_LOCK:
        graphs = _GRAPHS.get(read)
    if graphs is None:
        graphs = {key: Graph.from_json(document) for key, document in documents.items()}
    with _GRAPHS_LOCK:
        keep_graphs(graphs, read, run_id, digest)
    return graphs


def keep_graphs(graphs: Mapping[str, Graph], *keys: str) -> None:
    """Cache a run's decoded graphs under these keys (the caller holds _GRAPHS_LOCK)."""
    for key in keys:
        if key:
            _GRAPHS[key] = graphs
            _GRAPHS.move_to_end(key)
    while len(_GRAPHS) > GRAPHS_CACHED:
        _GRAPHS.popitem(last=False)


_STATES: collections.OrderedDict[str, tuple[int, RunState]] = collections.OrderedDict()
STATES_CACHED = 64


def load_state(run: Run, cached: bool = True) -> RunState:
    """Return a run's state as its last commit left it (a fresh one before the first step).

    The state this process committed last is taken from the cache when the run row's
    `snapshot_version` says nobody committed since. When others committed since, it is
    caught up with the parts their steps changed (caught_up); otherwise (nothing cached, or
    a version in between recorded no changes) the head and every part are read. The cached
    state is taken out: a step changes it in place, and only the step's commit puts it back
    (remember_state), so a step that rolls back leaves no trace here.
    """
    run_id = str(run.pk)
    with _GRAPHS_LOCK:
        entry = _STATES.pop(run_id, None)
    if cached and entry is not None:
        if entry[0] == run.snapshot_version:
            return entry[1]
        if caught_up(run, *entry):
            return entry[1]
    deferred = run.get_deferred_fields()
    graphs = run_graphs(run_id, digest="" if "graphs_digest" in deferred else run.graphs_digest)
    if cached and "snapshot" not in deferred:
        snapshot = run.snapshot  # the head, read with the row
    else:
        snapshot = Run.objects.values_list("snapshot", flat=True).get(pk=run.pk)
    if not snapshot:
        return RunState(run_id=run_id, graphs=graphs)
    return restore(stored_snapshot(run_id, snapshot), graphs)


def caught_up(run: Run, version: int, state: RunState) -> bool:
    """Bring a cached state of an older version up to the run's, from the parts changed
    since; return False (the state is then of no use) when only a full load will do.

    The caller holds the run's lock with its head (`run.snapshot`) read. On a foreach of
    1,000 open approvals that another worker decided one of, this reads the half-dozen
    parts the decision changed instead of all 4,006.
    """
    behind = run.snapshot_version - version
    if not 0 < behind <= CHANGES_KEPT or "snapshot" in run.get_deferred_fields():
        return False
    head = run.snapshot
    if not head or not is_head(head) or state.persisted.full:
        return False
    changed = changed_parts(str(run.pk), version, run.snapshot_version)
    if changed is None:
        return False
    try:
        catch_up(state, head, changed)
    except Exception:  # the full load is the truth: a step never runs on a doubtful state
        logger.exception("run %s: catching up from version %s failed; reading every part",
                         run.pk, version)  # fmt: skip
        return False
    return True


def remember_state(run_id: str, version: int, state: RunState) -> None:
    """Keep a committed state for the next step of the run in this process; not a
    finished run's, which hardly any event follows."""
    if state.status.finished:
        return
    with _GRAPHS_LOCK:
        _STATES[run_id] = (version, state)
        _STATES.move_to_end(run_id)
        while len(_STATES) > STATES_CACHED:
            _STATES.popitem(last=False)


class DispatchRow(NamedTuple):
    """An outbox row as a worker handles it: what it runs, for which run, under which key.

    Plain tuples, not model instances: a fork of 1,000 writes, claims and records 1,000 of
    them, and building a Django model costs about 20 µs.
    """

    pk: int
    run_id: Any
    key: str
    command: dict[str, Any]


class InboxRow(NamedTuple):
    """An inbox event a step applies, as lock_and_take returns it."""

    pk: int
    key: str
    event: dict[str, Any]


@dataclass
class Taken:
    """Up to `limit` new actions that steps hand to their caller to run itself, unsent.

    An action task that ran out of work takes the next action of the runs it advanced, so
    a chain runs in one task without a broker round trip per node. A taken action is
    claimed in the step's own commit, so the sweeper re-sends it if this process dies.
    """

    limit: int
    dispatches: list[DispatchRow] = field(default_factory=list)


def advance(run_id: str, take: Taken | None = None, counted: bool = False) -> int:
    """Apply a run's pending events until none is left; return how many were applied.

    A run that another worker is advancing right now is skipped: that worker looks for
    new events again after its commit, so no worker waits on the run's lock and no event
    is left behind. `counted`: the caller already counted the first step's attempt.
    """
    applied = 0
    while True:
        count, more = advance_once(run_id, take, counted)
        counted = False
        applied += count or 0
        if not count:
            return applied
        if not (has_pending(run_id) if more is None else more):
            return applied


def has_pending(run_id: str) -> bool:
    """Return whether the run's inbox holds an event not applied yet."""
    # Plain SQL: it runs after every step, and the ORM's query building cost more than it.
    key = Run._meta.pk.get_db_prep_value(uuid.UUID(str(run_id)), connection)
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT 1 FROM {PendingEvent._meta.db_table} "
                       "WHERE run_id = %s AND applied_at IS NULL LIMIT 1", [key])  # fmt: skip
        return cursor.fetchone() is not None


class Crowded(Exception):
    """A step saw more attempts than allowed, which live workers may have counted too."""


CROWDED_BACKOFF_S = 0.2


def crowded_backoff() -> None:
    """Wait for workers that counted an attempt at the same moment to take theirs back."""
    time.sleep(CROWDED_BACKOFF_S)


def advance_once(
    run_id: str, take: Taken | None = None, counted: bool = False
) -> tuple[int | None, bool | None]:
    """Apply the pending events in one transaction; None when another worker holds the run.

    With the count it returns whether the inbox held new events right after the commit,
    when the step looked (PostgreSQL sends that look with the commit), else None.

    The lock is FOR NO KEY UPDATE: it does not block the key-share lock that recording an
    event or a dispatch takes on the run row for its foreign key.

    An attempt counted by a worker that then does not step (another one holds the run, or
    applied its events) is taken back. Workers that count at the same moment still add up
    for an instant, so a step that sees too many attempts first takes its own back, lets
    the others settle, and counts again; only a second sighting fails the run (a step that
    kills its worker counts once per redelivery, and is seen twice).
    """
    for sighting in (1, 2):
        if not counted and (begun := begin_step(run_id)) is not Begun.COUNTED:
            return (None if begun is Begun.HELD else 0), None
        counted = False
        try:
            applied, more = step_locked(run_id, take, crowded_ok=sighting == 2)
        except Crowded:
            forget_attempt(run_id)
            crowded_backoff()
            continue
        except BaseException:
            forget_attempt(run_id)  # this process lives to tell: only killed steps count
            raise
        if not applied:
            forget_attempt(run_id)  # it did not step: the attempt was not this process's
        return applied, more
    return None, None


def step_locked(
    run_id: str, take: Taken | None, crowded_ok: bool
) -> tuple[int | None, bool | None]:
    """Lock the run, apply its pending events and commit the step; see advance_once."""
    outermost = not connection.in_atomic_block
    with transaction.atomic():
        run, pending = lock_and_take(run_id)
        if run is None:
            return None, None
        if not pending:
            return 0, None
        if run.step_attempts > settings.BRAID_STEP_MAX_ATTEMPTS:
            if not crowded_ok:
                raise Crowded(run_id)
            state, commands = abort(load_state(run, cached=False), now_text(),
                                    crashed(run, pending))  # fmt: skip
        else:
            state, commands = apply_events(run, pending)
        more = commit_step(run, state, commands, take, commit=outermost)
    return len(pending), more


RUN_COLUMNS = ("id", "snapshot", "snapshot_version", "step_attempts", "trace_length",
               "graphs_digest")  # fmt: skip


def lock_and_take(
    run_id: str, result: tuple[DispatchRow, Event] | None = None
) -> tuple[Run | None, list[InboxRow]]:
    """Lock the run (skipping it when another worker holds it), mark its unapplied inbox
    events applied and return the run and the events in arrival order.

    The mark applies only under the run's lock, and commits (or rolls back) with the step
    that applies the events. On PostgreSQL the lock, the mark and an action's `result` to
    record first (see record_and_advance) are one statement (lock_and_take_sql).
    """
    if connection.vendor != "postgresql":
        run = (
            Run.objects.select_for_update(no_key=True, skip_locked=True)
            .only(*RUN_COLUMNS)
            .filter(pk=run_id)
            .first()
        )
        return run, take_pending(run.pk) if run is not None else []
    dispatch, event = result if result is not None else (None, None)
    with server_side_cursor() as cursor:
        cursor.execute(
            lock_and_take_sql(),
            {
                "run": uuid.UUID(str(run_id)),
                "now": timezone.now(),
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


def lock_and_take_sql() -> str:
    """Return PostgreSQL's statement for lock_and_take: one statement, prepared once.

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
        ), stamp AS MATERIALIZED (
            SELECT clock_timestamp() AS at FROM locked
        ), closed AS (
            UPDATE {dispatches} SET completed_at = %(now)s WHERE id = %(dispatch)s::bigint
        ), recorded AS (
            INSERT INTO {inbox} (run_id, key, event, created_at, applied_at)
            SELECT %(run)s, %(key)s::text, %(event)s::jsonb, %(now)s, (SELECT at FROM stamp)
            WHERE %(key)s::text IS NOT NULL
            ON CONFLICT (run_id, key) DO NOTHING
            RETURNING id, key, event, applied_at
        ), marked AS (
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


def from_row[M: Model](model: type[M], found: dict[str, Any]) -> M:
    """Build a model instance from some of its columns, as the ORM would have read it."""
    names = [f.attname for f in model._meta.concrete_fields if f.attname in found]
    return model.from_db(connection.alias, names, [found[name] for name in names])


def take_pending(run_id: Any) -> list[InboxRow]:
    """Mark the run's unapplied inbox events applied and return them in arrival order
    (the caller holds the run's lock): one `UPDATE ... RETURNING`, not a read and a write."""
    sql = (
        f"UPDATE {PendingEvent._meta.db_table} SET applied_at = %s WHERE run_id = %s "
        "AND applied_at IS NULL RETURNING id, run_id, key, event, created_at, applied_at"
    )
    now = connection.ops.adapt_datetimefield_value(timezone.now())
    key = Run._meta.pk.get_db_prep_value(uuid.UUID(str(run_id)), connection)
    rows = sorted(PendingEvent.objects.raw(sql, [now, key]), key=lambda row: row.pk)
    return [InboxRow(row.pk, row.key, row.event) for row in rows]


class Begun(enum.Enum):
    """What begin_step found."""

    COUNTED = "counted"  # the attempt is counted: step now
    HELD = "held"  # another worker holds the run, and events wait: it applies them
    IDLE = "idle"  # nothing is pending (or the run is gone)


def begin_step(run_id: str) -> Begun:
    """Count one more attempt at the run's next step, committed before the step's work.

    A step whose evaluation kills its worker process rolls back, its message is delivered
    again, and the sweeper resumes it at every start: without this count a run holding
    such a node would crash a worker (or the whole `make run` server) forever. The step's
    own commit sets the count back to 0. Nothing is counted when another worker holds the
    run (PostgreSQL skips it, as the step's lock does) or it has nothing pending.

    On PostgreSQL one statement counts and, when it did not, says why: a fork of 1,000
    finds its run held by another worker's step at most flushes of its results, and two
    more queries there cost each of them a round trip and the ORM's query building.
    """
    key = Run._meta.pk.get_db_prep_value(uuid.UUID(str(run_id)), connection)
    pending = ("EXISTS (SELECT 1 FROM engine_pendingevent "
               "WHERE run_id = %s AND applied_at IS NULL)")  # fmt: skip
    with connection.cursor() as cursor:  # one statement: it commits on its own
        if connection.vendor != "postgresql":
            cursor.execute("UPDATE engine_run SET step_attempts = step_attempts + 1 "
                           f"WHERE id = %s AND {pending}", [key, key])  # fmt: skip
            return Begun.COUNTED if cursor.rowcount == 1 else Begun.IDLE
        # The row is locked only when something is pending: a worker that takes the lock
        # steps, so another that finds it taken may leave its event to that step's look
        # after its commit.
        cursor.execute(
            f"WITH pending AS (SELECT {pending} AS waiting), "
            "free AS (SELECT id FROM engine_run WHERE id = %s AND (SELECT waiting FROM pending) "
            "FOR NO KEY UPDATE SKIP LOCKED), "
            "counted AS (UPDATE engine_run SET step_attempts = step_attempts + 1 "
            "WHERE id IN (SELECT id FROM free) RETURNING id) "
            "SELECT EXISTS (SELECT 1 FROM counted), (SELECT waiting FROM pending)",
            [key, key],
        )
        counted, waiting = cursor.fetchone()
    # An inbox row's run exists (the foreign key), so events waiting on a run that was
    # not counted mean that another worker holds it.
    return Begun.COUNTED if counted else Begun.HELD if waiting else Begun.IDLE


def forget_attempt(run_id: str) -> None:
    """Take back the attempt of a step that raised instead of killing its process, or did
    not step.

    When the database is why the step raised (its connection was ended, it refuses
    connections), taking back fails too, and the lease's next beat does it once the
    database answers. Without that, each database outage counted against every run it
    caught mid-step, and `make chaos` saw a healthy run failed as a crash loop.

    A run whose row another worker's step holds is not waited for here: a worker waited
    there up to 126 ms on a fork of 1,000, its actions idle. A thread of this process
    waits instead (leases.amend_soon), as soon as the step ends: its commit sets the count
    to 0, so the attempt is taken back only if the run's snapshot did not move (the step
    rolled back, or died). Left for the beat, a step that saw too many attempts and backed
    off could still see this one when it looked again, and fail the run.
    """
    try:
        held_at = take_back_attempt(run_id)
    except Exception:
        logger.warning("run %s: the step attempt is taken back at the next beat", run_id,
                       exc_info=True)  # fmt: skip
        leases.amend_later(functools.partial(take_back_attempt, run_id))
        return
    if held_at is not None:
        leases.amend_soon(functools.partial(take_back_attempt, run_id, held_at))


def take_back_attempt(run_id: str, unless_moved_from: int | None = None) -> int | None:
    """Count one step attempt less (never below 0); with `unless_moved_from`, only while
    the run's snapshot version is still that one.

    On PostgreSQL, without it, a run whose row another step holds is skipped, not waited
    for: it returns the run's committed snapshot version then, and None otherwise.
    """
    runs = Run.objects.filter(pk=run_id, step_attempts__gt=0)
    if unless_moved_from is not None or connection.vendor != "postgresql":
        if unless_moved_from is not None:
            runs = runs.filter(snapshot_version=unless_moved_from)
        runs.update(step_attempts=F("step_attempts") - 1)
        return None
    table = Run._meta.db_table
    key = Run._meta.pk.get_db_prep_value(uuid.UUID(str(run_id)), connection)
    with connection.cursor() as cursor:  # one statement: it commits on its own
        cursor.execute(
            f"WITH free AS (SELECT id FROM {table} WHERE id = %s FOR NO KEY UPDATE SKIP LOCKED), "
            f"taken AS (UPDATE {table} SET step_attempts = step_attempts - 1 "
            "WHERE id IN (SELECT id FROM free) AND step_attempts > 0) "
            f"SELECT EXISTS (SELECT 1 FROM free), snapshot_version FROM {table} WHERE id = %s",
            [key, key],
        )
        row = cursor.fetchone()
    return row[1] if row is not None and not row[0] else None


def crashed(run: Run, pending: Sequence[InboxRow]) -> str:
    """Say why a run fails after its step killed the worker process too often."""
    keys = ", ".join(row.key for row in pending[:5])
    return (
        f"applying {keys} killed the worker process {run.step_attempts - 1} times; the run "
        f"fails instead of being resumed again (BRAID_STEP_MAX_ATTEMPTS="
        f"{settings.BRAID_STEP_MAX_ATTEMPTS})"
    )


def apply_events(run: Run, pending: Sequence[InboxRow]) -> tuple[RunState, list[Command]]:
    """Apply inbox events in order with `step`; return the state and every command.

    An event that cannot be read is logged and skipped. If `step` itself raises (a bug in
    the engine, never a flow's failure), the run fails closed from its last committed
    state with the error, instead of failing the same step forever.
    """
    state = load_state(run)
    commands: list[Command] = []
    for row in pending:
        try:
            event = event_from_json(row.event)
        except (TypeError, ValueError) as error:
            logger.error("run %s: inbox event %s is unreadable and skipped: %s", run.pk, row.key,
                         error)  # fmt: skip
            continue
        # An action's failure may fail the run; keep the state before it for a retry.
        before = state.to_json() if isinstance(event, ActionFailed) else None
        try:
            state, produced = step(state, event)
        except Exception as error:
            logger.exception("run %s: applying %s raised; the run fails", run.pk, row.key)
            reason = f"internal error applying {event.kind} {row.key}: {error!r}"
            return abort(load_state(run, cached=False), now_text(), reason)
        commands.extend(produced)
        if before is not None and state.status is RunStatus.FAILED:
            redrive = {"snapshot": before, "key": event.key}  # type: ignore[attr-defined]
            Run.objects.filter(pk=run.pk).update(redrive=redrive)
    return state, commands


def commit_step(
    run: Run, state: RunState, commands: list[Command], take: Taken | None = None,
    commit: bool = False,
) -> bool | None:  # fmt: skip
    """Save the step and its side effects; publish new dispatches after the commit.

    With `commit` (the caller's block is the outermost transaction) on PostgreSQL, the
    step's writes, its `COMMIT` and the look for events that arrived meanwhile go out as
    one pipeline, one round trip: it returns what the look found. Otherwise Django commits
    when the caller's block ends, and it returns None.
    """
    rows = [c for c in commands if isinstance(c, WriteRow)]
    trace = [c for c in commands if isinstance(c, Trace)]
    approvals = [c for c in commands if isinstance(c, (RequestApproval, CloseApproval))]
    status = state.status if state.started or state.status.finished else RunStatus.RUNNING
    # The run lock's read gave the trace length; the run's searchable state and the reset
    # attempt count go in the snapshot's own UPDATE.
    room = max(0, take.limit - len(take.dispatches)) if take else 0
    actions = [c for c in commands if isinstance(c, RunAction)]
    # Approval requests first: their hooks read what they write, which a pipeline defers.
    record_approvals(str(run.pk), approvals)
    record_timers(run, commands)
    crash_point("advance.before_commit")
    delta = take_delta(state)
    if delta.replace and run.snapshot_version == 0:
        # Nothing was ever committed, so no part is stored to replace: the step writes as
        # any other (one statement on PostgreSQL, not a delete and five inserts).
        delta = dataclasses.replace(delta, replace=False)
    more: bool | None = None
    version = run.snapshot_version + 1  # the commit counts one more, under the run's lock
    with pipelined():
        DjangoStore().commit(
            str(run.pk), status, delta, rows, trace, state.error,
            trace_length=run.trace_length,
            columns={"state": state.current_view(), "step_attempts": 0}, version=version,
        )  # fmt: skip
        if connection.vendor == "postgresql":
            inserted = send_dispatches(run.pk, actions, room)
            look = commit_and_look(str(run.pk)) if commit else None
            dispatches = inserted()
            more = look() if look is not None else None
        else:
            dispatches = record_dispatches(run, actions, room) if actions else []
    if connection.vendor == "postgresql" and len(dispatches) < len(actions):
        # A key stored before (never in a normal step): read what is open (after the
        # commit, when it went with the writes).
        dispatches = open_dispatches([a.key for a in actions], room)
    transaction.on_commit(lambda: remember_state(str(run.pk), version, state))
    live.changed(str(run.pk))
    transaction.on_commit(lambda: crash_point("advance.after_commit"))
    kept = dispatches[:room]
    if kept and take is not None:
        transaction.on_commit(lambda: take.dispatches.extend(kept))
    sent = [d.pk for d in dispatches[room:]]
    if sent:
        # Robust: with the broker down the rows stay unsent and the sweeper sends them; the
        # task goes on recording the results it holds.
        transaction.on_commit(lambda: publish(sent), robust=True)
    return more


def commit_and_look(run_id: str) -> Callable[[], bool]:
    """Queue the transaction's COMMIT and a look at the run's inbox after it (PostgreSQL,
    in a pipeline); return a function that says whether the look found an event.

    Committing here sends the commit with the step's writes; Django's own commit at the
    end of the block then finds no transaction open and sends nothing, and runs the
    `on_commit` functions as usual. The look runs after the commit on the server, so it
    sees every event whose worker found the run locked by this step (that worker
    recorded its event before trying the lock), as a look after the commit always did.
    """
    key = Run._meta.pk.get_db_prep_value(uuid.UUID(run_id), connection)
    with connection.cursor() as committing:
        committing.execute("COMMIT")
    cursor = server_side_cursor()
    cursor.execute(f"SELECT 1 FROM {PendingEvent._meta.db_table} "
                   "WHERE run_id = %s AND applied_at IS NULL LIMIT 1", [key])  # fmt: skip

    def found() -> bool:
        with cursor:
            return cursor.fetchone() is not None

    return found


def record_dispatches(run: Run, actions: Sequence[RunAction], room: int = 0) -> list[DispatchRow]:
    """Write one outbox row per action key (a recomputed step adds no duplicates); return
    the open ones in id order.

    The first `room` are the caller's to run itself after the commit: they are written
    claimed by this process, in this step's commit, so the sweeper re-sends them if it dies.
    """
    if connection.vendor == "postgresql":
        inserted = send_dispatches(run.pk, actions, room)()
        if len(inserted) == len(actions):  # every key is new: what was written is what is open
            return inserted
    else:
        now, lease = timezone.now(), leases.current()
        claimed = {"claimed_by": lease, "claimed_at": now, "published_at": now}
        rows = [Dispatch(run=run, key=a.key, command=a.to_json(), created_at=now,
                         **(claimed if i < room else {}))
                for i, a in enumerate(actions)]  # fmt: skip
        Dispatch.objects.bulk_create(rows, ignore_conflicts=True)
    return open_dispatches([a.key for a in actions], room)


def open_dispatches(keys: Sequence[str], room: int) -> list[DispatchRow]:
    """Return the open outbox rows of these keys in id order, the first `room` claimed by
    this process.

    A key written before keeps its row; it is claimed if it is among the first `room`.
    """
    now = timezone.now()
    found = list(Dispatch.objects.filter(key__in=keys, completed_at=None).order_by("pk"))
    unclaimed = [d.pk for d in found[:room] if d.claimed_at is None]
    if unclaimed:
        Dispatch.objects.filter(pk__in=unclaimed).update(
            claimed_by=leases.current(), claimed_at=now, published_at=now
        )
    return [DispatchRow(d.pk, d.run_id, d.key, d.command) for d in found]


def send_dispatches(
    run_id: Any, actions: Sequence[RunAction], room: int
) -> Callable[[], list[DispatchRow]]:
    """Insert an outbox row per action whose key is new, the first `room` claimed by this
    process, in one statement (PostgreSQL); return a function that gives the inserted rows
    in id order.

    The commands go as one JSON array, taken apart by the server. Nothing is read until
    that function is called, so in a pipeline the statements queued after this one
    travel with it.
    """
    if not actions:
        return list
    commands = [a.to_json() for a in actions]
    claimed = "CASE WHEN u.n <= %(room)s THEN {} END"
    sql = (
        f"INSERT INTO {Dispatch._meta.db_table} (run_id, key, command, created_at, "
        "published_at, claimed_by, claimed_at) "
        "SELECT %(run)s, u.command->>'key', u.command, %(now)s, "
        f"{claimed.format('%(now)s')}, {claimed.format('%(lease)s ELSE %(nobody)s')}, "
        f"{claimed.format('%(now)s')} "
        "FROM jsonb_array_elements(%(commands)s::jsonb) WITH ORDINALITY AS u(command, n) "
        "ORDER BY u.n ON CONFLICT (key) DO NOTHING RETURNING id, key"
    )
    params = {"run": run_id, "now": timezone.now(), "room": room, "lease": leases.current(),
              "nobody": "", "commands": dumps(commands)}  # fmt: skip
    cursor = server_side_cursor()
    cursor.execute(sql, params)

    def inserted() -> list[DispatchRow]:
        with cursor:
            ids = dict((key, pk) for pk, key in cursor.fetchall())
        return sorted(DispatchRow(ids[c["key"]], run_id, c["key"], c)
                      for c in commands if c["key"] in ids)  # fmt: skip

    return inserted


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
        if (t.due_at - timezone.now()).total_seconds() < settings.BRAID_TIMER_ETA_LIMIT_S
    ]
    if soon:
        transaction.on_commit(lambda: schedule_soon(str(run.pk), soon))


def schedule_soon(run_id: str, timers: list[Timer]) -> None:
    """Fire near timers with a Celery countdown well inside the visibility timeout."""
    from engine.tasks import fire_timer

    for timer in timers:
        delay = max(0.0, (timer.due_at - timezone.now()).total_seconds())
        fire_timer.apply_async((run_id, timer.key), countdown=delay)


def publish(dispatch_ids: Sequence[int]) -> None:
    """Send the dispatches as at most stream_count messages; note when they left.

    A narrow fan-out sends one message per action, so each runs in parallel; a wide one
    sends contiguous chunks, so a fork of 1,000 costs a few messages per worker slot, not
    1,000.
    """
    from engine import tasks

    for chunk in streams(list(dispatch_ids), stream_count(len(dispatch_ids))):
        tasks.run_actions.delay(chunk)
        if duplicate_now():
            tasks.run_actions.delay(chunk)
    mark_published(dispatch_ids)


def stream_count(actions: int) -> int:
    """How many messages a step's actions leave as: BRAID_DISPATCH_STREAMS, and at most
    BRAID_STREAMS_PER_SLOT per task slot of the live workers (all of them while no lease
    beats: a worker that has not run a task yet is not counted)."""
    limit = settings.BRAID_DISPATCH_STREAMS
    if actions <= 1 or settings.BRAID_STREAMS_PER_SLOT <= 0:
        return limit
    try:
        slots = leases.live_slots()
    except DatabaseError:  # the messages still leave: the database is not needed to send
        logger.warning("the live workers' slots could not be read", exc_info=True)
        return limit
    return min(limit, settings.BRAID_STREAMS_PER_SLOT * slots) if slots else limit


def mark_published(dispatch_ids: Sequence[int]) -> None:
    """Note when the dispatches were sent.

    On PostgreSQL, one statement with the ids as one array (the ORM's `pk__in` prepared
    each of a fork's 1,000 ids in Python), skipping rows a worker is claiming or closing
    right now: those are claimed, so the sweeper never takes them for unsent.
    """
    now = timezone.now()
    if connection.vendor != "postgresql":
        Dispatch.objects.filter(pk__in=dispatch_ids).update(published_at=now)
        return
    table = Dispatch._meta.db_table
    with server_side_cursor() as cursor:
        cursor.execute(
            f"UPDATE {table} SET published_at = %s WHERE id IN (SELECT id FROM {table} "
            "WHERE id = ANY(%s::bigint[]) FOR NO KEY UPDATE SKIP LOCKED)",
            [now, list(dispatch_ids)],
        )


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


def action_command(data: dict[str, Any]) -> RunAction:
    """Rebuild a RunAction command from its JSON in the outbox."""
    fields = {k: v for k, v in data.items() if k != "kind"}
    return RunAction(**fields)


def run_actions(dispatch_ids: Sequence[int]) -> int:
    """Claim dispatched actions, run them one after another and record their results.

    A dispatch whose result is already recorded (a duplicate delivery) is skipped. Out of
    work, the task runs the next action of the runs it advanced itself (up to
    BRAID_INLINE_ACTIONS per task) instead of sending it. Returns how many actions ran.

    A task that fails on the way (the database went away between a claim and the result)
    hands back the actions it holds: its process lives on and its lease beats, so the
    sweeper would never re-send them. The lease's heartbeat releases them once the
    database answers again, and the sweeper re-sends them as unclaimed (`make chaos`
    found a run stuck behind such an action).
    """
    held = set(dispatch_ids)
    try:
        return run_claimed(dispatch_ids, held)
    except BaseException:
        leases.amend_later(functools.partial(release, held, leases.current()))
        raise


def release(dispatch_ids: set[int], claimer: str) -> None:
    """Unclaim the claimer's open dispatches among these: the sweeper re-sends them as
    unclaimed once BRAID_SWEEP_STALE_S passed since they were sent."""
    Dispatch.objects.filter(pk__in=dispatch_ids, claimed_by=claimer, completed_at=None).update(
        claimed_by="", claimed_at=None
    )


def run_claimed(dispatch_ids: Sequence[int], held: set[int]) -> int:
    """run_actions' work; every action the task comes to hold is added to `held`."""
    claimed, before = claim(dispatch_ids)
    queue = deque(claimed)
    results = Results(settings.BRAID_RESULT_FLUSH_S)
    count = 0
    while queue or results.waiting:
        if not queue:
            take = Taken(limit=1 if count < settings.BRAID_INLINE_ACTIONS else 0)
            try:
                results.flush(take)
            finally:
                held.update(dispatch.pk for dispatch in take.dispatches)
            queue.extend(take.dispatches)
            continue
        dispatch = queue.popleft()
        command = action_command(dispatch.command)
        crash_point("action.started")
        event = perform(ACTIONS, command, str(dispatch.run_id), now_text)
        crash_point("action.done")
        results.add(dispatch, event, counted=dispatch.pk in before)
        count += 1
    return count


def claim(dispatch_ids: Sequence[int]) -> tuple[list[DispatchRow], set[int]]:
    """Mark open dispatches as this process's; return them in id order, and the ids of
    those another delivery had claimed (its process may have died in the step after it).

    On PostgreSQL one prepared statement claims them and returns each with its claimer
    before (the ORM's read and update cost a chunk of 31 actions about 6 ms).
    """
    lease, now = leases.current(), timezone.now()
    if connection.vendor == "postgresql":
        table = Dispatch._meta.db_table
        with server_side_cursor() as cursor:
            # Open or not is asked of the locked rows: beside the ids (OFFSET 0 keeps it
            # out), a condition on completed_at let the planner walk every open dispatch.
            cursor.execute(
                f"UPDATE {table} AS d SET claimed_by = %s, claimed_at = %s "
                f"FROM (SELECT id, claimed_by, completed_at FROM {table} "
                "WHERE id = ANY(%s::bigint[]) OFFSET 0 FOR NO KEY UPDATE) AS before "
                "WHERE d.id = before.id AND before.completed_at IS NULL "
                "RETURNING d.id, d.run_id, d.key, d.command, before.claimed_by",
                [lease, now, list(dispatch_ids)],
            )
            rows = sorted(cursor.fetchall())
        found = [DispatchRow(pk, run_id, key, json.loads(command))
                 for pk, run_id, key, command, _ in rows]  # fmt: skip
        return found, {row[0] for row in rows if row[4]}
    open_ones = Dispatch.objects.filter(pk__in=dispatch_ids, completed_at=None)
    models = list(open_ones.order_by("id"))
    open_ones.update(claimed_by=lease, claimed_at=now)
    found = [DispatchRow(d.pk, d.run_id, d.key, d.command) for d in models]
    return found, {dispatch.pk for dispatch in models if dispatch.claimed_by}


class Results:
    """Action results of one task, recorded together at least every `flush_after_s`.

    Each flush is one transaction: the results go into their runs' inboxes (once per
    idempotency key) and their dispatches are marked done. Then this task advances those
    runs itself, which saves a broker round trip and a second worker's pickup per node. A
    worker killed before a flush loses only those results, whose actions run again; one
    killed after it leaves events that the sweeper applies two sweeps later.
    """

    def __init__(self, flush_after_s: float) -> None:
        self.flush_after_s = flush_after_s
        self.waiting: list[tuple[DispatchRow, Event]] = []
        self.counted: set[int] = set()
        self.since = time.monotonic()

    def add(self, dispatch: DispatchRow, event: Event, counted: bool = False) -> None:
        """Keep a result; flush when the oldest kept one has waited long enough.

        `counted`: the step that applies it counts its attempt first (see flush).
        """
        self.waiting.append((dispatch, event))
        if counted:
            self.counted.add(dispatch.pk)
        if time.monotonic() - self.since >= self.flush_after_s:
            self.flush()

    def flush(self, take: Taken | None = None) -> None:
        """Record every kept result in one transaction, then advance their runs.

        One result on PostgreSQL is recorded by the transaction that applies it
        (record_and_advance), unless its dispatch was claimed by another delivery before:
        then its step's attempt is counted first, as every `advance` does.
        """
        waiting, self.waiting = self.waiting, []
        counted, self.counted = self.counted, set()
        if len(waiting) == 1 and connection.vendor == "postgresql":
            dispatch, event = waiting[0]
            if dispatch.pk in counted:
                begun = record_result_and_begin_step(dispatch, event)
                advance(str(dispatch.run_id), take, counted=begun)
            else:
                record_and_advance(dispatch, event, take)
        elif waiting:
            for run_id in record_results(waiting):
                advance(run_id, take)
        self.since = time.monotonic()


def record_and_advance(dispatch: DispatchRow, event: Event, take: Taken | None) -> None:
    """Record one action's result and apply it in one transaction (PostgreSQL): a hop of
    a chain commits once instead of twice.

    The step's attempt is not counted first. If the step kills this process nothing of it
    commits, the result included; the dispatch's claimer is dead, so the sweeper sends it
    again, and that delivery, claimed before, records and applies its result the counted
    way (record_result_and_begin_step, then `advance`). A step that kills its worker every
    time still fails its run, after one kill more than BRAID_STEP_MAX_ATTEMPTS.

    A run another worker holds gets the result recorded, and is advanced after the commit
    as after record_results. A run with attempts counted (a step may have died on it) is
    rolled back to the counted way.
    """
    run_id = str(dispatch.run_id)
    more: bool | None = False
    outermost = not connection.in_atomic_block
    with transaction.atomic():
        run, pending = lock_and_take(run_id, result=(dispatch, event))
        counted = run is not None and run.step_attempts > 0
        if counted:
            transaction.set_rollback(True)
        elif run is not None and pending:
            state, commands = apply_events(run, pending)
            more = commit_step(run, state, commands, take, commit=outermost)
    if counted:
        begun = record_result_and_begin_step(dispatch, event)
        advance(run_id, take, counted=begun)
    elif run is None or more or (more is None and has_pending(run_id)):
        advance(run_id, take)


def record_result_and_begin_step(dispatch: DispatchRow, event: Event) -> bool:
    """Record one action's result, close its dispatch and count an attempt at the run's
    next step, in one statement (PostgreSQL); return whether the attempt was counted.

    It is `record_results` and `begin_step` in one round trip instead of five, and as
    safe: the three writes commit together, before the step's own work. Not counted (the
    run is locked by another worker, or nothing is pending), the caller advances as after
    `record_results`, with its own `begin_step` after this commit.
    """
    sql = f"""
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
    now, run_id = timezone.now(), dispatch.run_id
    key = event.key  # type: ignore[attr-defined]
    params = [run_id, key, dumps(event.to_json()), now, now, dispatch.pk, run_id, run_id,
              run_id]  # fmt: skip
    with server_side_cursor() as cursor:  # one statement: it commits on its own
        cursor.execute(sql, params)
        return cursor.rowcount == 1


def record_results(results: Sequence[tuple[DispatchRow, Event]]) -> list[str]:
    """Insert action results into their runs' inboxes, close their dispatches; return runs.

    On PostgreSQL it is one prepared statement, which commits on its own.
    """
    if connection.vendor == "postgresql":
        now = timezone.now()
        with server_side_cursor() as cursor:
            cursor.execute(
                f"WITH closed AS (UPDATE {Dispatch._meta.db_table} SET completed_at = %s "
                f"WHERE id = ANY(%s::bigint[])) INSERT INTO {PendingEvent._meta.db_table} "
                "(run_id, key, event, created_at) SELECT u.run_id, u.key, u.event::jsonb, %s "
                "FROM unnest(%s::uuid[], %s::text[], %s::text[]) AS u(run_id, key, event) "
                "ON CONFLICT (run_id, key) DO NOTHING",
                [now, [d.pk for d, _ in results], now,
                 [d.run_id for d, _ in results],
                 [e.key for _, e in results],  # type: ignore[attr-defined]
                 [dumps(e.to_json()) for _, e in results]],
            )  # fmt: skip
        return sorted({str(d.run_id) for d, _ in results})
    with transaction.atomic():
        PendingEvent.objects.bulk_create(
            [PendingEvent(run_id=d.run_id, key=e.key, event=e.to_json())  # type: ignore[attr-defined]
             for d, e in results],
            ignore_conflicts=True,
        )  # fmt: skip
        Dispatch.objects.filter(pk__in=[d.pk for d, _ in results]).update(
            completed_at=timezone.now()
        )
    return sorted({str(d.run_id) for d, _ in results})


def fire(run_id: str, key: str) -> bool:
    """Turn a due timer into a TimerFired event; return whether it was due and still set."""
    with transaction.atomic():
        timer = Timer.objects.select_for_update().filter(run_id=run_id, key=key).first()
        if timer is None or timer.due_at > timezone.now():
            return False
        timer.delete()
        submit(run_id, key, TimerFired(at=now_text(), key=key))
    return True


def cancel(run: Run, by: str, reason: str = "") -> None:
    """Ask for a run to be cancelled (applied by the next advance)."""
    from engine.core.events import Cancel

    submit(str(run.pk), "cancel", Cancel(at=now_text(), by=by, reason=reason))


class RetryRefused(Exception):
    """A run that cannot be retried, with the reason."""


def retry(run_id: str, by: str) -> None:
    """Re-run the failed action of a failed run from the state just before it failed.

    What had completed stays completed; the action gets the next attempt. Results that
    arrived for the run's other actions after the failure are applied again, timers the
    failure cancelled are set again, and approval requests it closed open again (with
    the decisions recorded for them, which the failed run refused, applied again).
    """
    with transaction.atomic():
        run = Run.objects.select_for_update(no_key=True).get(pk=run_id)
        if run.status != RunStatus.FAILED.value or not run.redrive:
            raise RetryRefused("only a run that an action's failure ended can be retried")
        snapshot, key = run.redrive["snapshot"], run.redrive["key"]
        state = RunState.from_json(snapshot, run_graphs(str(run.pk)))
        waited = set(state.waits)
        run.pending_events.filter(key__in=waited).exclude(key=key).update(applied_at=None)
        due = [Timer(run=run, key=k, due_at=parse_time(d)) for d, k in state.timers()]
        Timer.objects.bulk_create(due, ignore_conflicts=True)
        reopen_approvals(run, [k for k, _ in state.approvals()], by)
        RunPart.objects.filter(run=run).delete()  # the whole snapshot replaces the parts
        Run.objects.filter(pk=run.pk).update(
            snapshot=snapshot, status=state.status.value, error="", redrive=None,
            snapshot_version=F("snapshot_version") + 1,
        )  # fmt: skip
        submit(str(run.pk), f"redrive|{key}|{timezone.now().isoformat()}",
               Redrive(at=now_text(), key=key, by=by))  # fmt: skip


def reopen_approvals(run: Run, keys: list[str], by: str) -> None:
    """Open these requests again and re-apply the decisions recorded for them.

    A decision's inbox key is `<approval key>|<user>`; one already counted in the
    restored state is refused again as a second vote, and leaves no trace.
    """
    if not keys:
        return
    closed = ApprovalRequest.objects.filter(run=run, key__in=keys, status=ApprovalStatus.CLOSED)
    reopening = list(closed.order_by("id"))
    closed.update(status=ApprovalStatus.OPEN, outcome="", closed_at=None)
    hooks.reopened(reopening, by)
    wanted = set(keys)
    decisions = [pk for pk, inbox_key in run.pending_events.values_list("pk", "key")
                 if inbox_key.rpartition("|")[0] in wanted]  # fmt: skip
    run.pending_events.filter(pk__in=decisions).update(applied_at=None)


def sweep(stale_after_s: float | None = None) -> dict[str, int]:
    """Fire due timers, re-send lost actions and advance runs with unapplied events.

    It also audits approval requests that passed their due time (`expired`).

    An action counts as lost when the process that claimed it stopped beating (its lease
    is older than BRAID_LEASE_DEAD_S), or when nobody claimed it `stale_after_s` after it
    was sent (BRAID_SWEEP_STALE_S: the message vanished with a worker that had reserved
    it). Re-sending is safe: actions run at least once, results count once per key.
    """
    stale_after_s = settings.BRAID_SWEEP_STALE_S if stale_after_s is None else stale_after_s
    now = timezone.now()
    fired = sum(fire(str(t.run_id), t.key) for t in Timer.objects.filter(due_at__lte=now)[:500])
    # Publishing follows the commit at once, and applying events is quick and harmless to
    # repeat: what is still unsent, or unapplied, two sweeps later was dropped by a process
    # that died between commit and publish.
    late = now - dt.timedelta(seconds=2 * settings.BRAID_SWEEP_INTERVAL_S)
    lost = lost_dispatches(late, now - dt.timedelta(seconds=stale_after_s))
    if lost:
        publish(lost)
    waiting = set(
        PendingEvent.objects.filter(applied_at=None, created_at__lte=late).values_list(
            "run_id", flat=True
        )[:500]
    )
    from engine.tasks import advance_run

    for run_id in waiting:
        advance_run.delay(str(run_id))
    leases.forget_dead()
    record_expired()
    return {"timers": fired, "actions": len(lost), "runs": len(waiting)}


def record_expired() -> int:
    """Audit approval requests past their due time (imported late: approvals uses durable)."""
    from approvals.services import record_expired as audit_expired

    return audit_expired()


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


def drive(run_id: str, max_rounds: int = 10_000) -> int:
    """Drive a run in this process up to the next person or timer; return events applied.

    It advances the run and runs its open actions (with the task's own code) until neither
    finds work. For a process with no worker of its own: `braid decide` under `make run`,
    whose embedded worker lives in the server process.
    """
    applied = 0
    for _ in range(max_rounds):
        advanced = advance(run_id)
        open_ids = list(
            Dispatch.objects.filter(run_id=run_id, completed_at=None)
            .order_by("id")
            .values_list("pk", flat=True)
        )
        if open_ids:
            run_actions(open_ids)
        applied += advanced
        if not advanced and not open_ids:
            break
    return applied
