"""The step: take a run's lock and pending events, apply them with the core's `step`, and
commit the snapshot, node rows, trace, new dispatches and timers together. Messages leave
only after that commit."""

import dataclasses
import logging
import time
from collections.abc import Sequence
from typing import Literal

from django.conf import settings
from django.db import connection, transaction

from engine import live, metrics
from engine.core import scheduler
from engine.core.events import (
    ActionCompleted,
    ActionFailed,
    CloseApproval,
    Command,
    Event,
    Refused,
    RequestApproval,
    RunAction,
    RunFinished,
    RunStatus,
    Trace,
    WriteRow,
    event_from_json,
)
from engine.core.parts import take_delta
from engine.core.state import RunState
from engine.faults import crash_point
from engine.log_context import about_run
from engine.models import Run
from engine.runtime import attempts, clock
from engine.runtime.backends import backend
from engine.runtime.inbox import has_pending, lock_and_take
from engine.runtime.outbox import publish
from engine.runtime.records import Begun, DispatchRow, InboxRow, Taken
from engine.runtime.state_cache import load_state, remember_state, take_state
from engine.runtime.store import DjangoStore, record_approvals
from engine.runtime.timers import record_timers
from engine.runtime.transport import transport

logger = logging.getLogger(__name__)


# How many times in a row `advance` looks again after a step that found nothing or found the
# run held: each such look follows another worker's step, so more than a few means that
# worker is stepping now. The last look that finds an event sends the run an advance.
EMPTY_LOOKS = 3


def advance(run_id: str, take: Taken | None = None, counted: bool = False) -> int:
    """Apply a run's pending events until none is left; return how many were applied.

    A run that another worker is advancing right now is skipped: that worker looks for
    new events again after its commit, so no worker waits on the run's lock and no event
    is left behind. `counted`: the caller already counted the first step's attempt.
    """
    applied, empty_looks = 0, 0
    with about_run(run_id):
        while True:
            count, more = advance_once(run_id, take, counted)
            counted = False
            applied += count or 0
            if not count and more and empty_looks < EMPTY_LOOKS:
                empty_looks += 1  # see advance_once: an event came while this worker held it
                continue
            if not count:
                if more:  # it held the run last and an event waits: a message looks again
                    transport().send_advance(run_id)
                return applied
            empty_looks = 0
            if not (has_pending(run_id) if more is None else more):
                return applied


def advance_once(
    run_id: str, take: Taken | None = None, counted: bool = False
) -> tuple[int | None, bool | None]:
    """Apply the pending events in one transaction; None when another worker holds the run.

    With the count it returns whether the inbox held new events right after the commit,
    when the step looked (PostgreSQL sends that look with the commit), else None. A step
    that held the run without applying anything (0, or None after its own take-back)
    looks after it too.

    The lock is FOR NO KEY UPDATE: it does not block the key-share lock that recording an
    event or a dispatch takes on the run row for its foreign key.

    An attempt counted by a worker that then does not step (another one holds the run, or
    applied its events) is taken back. Workers that count at the same moment still add up
    for an instant, so a step that sees too many attempts takes its own back and looks
    again without counting before it fails the run (check_crashed).
    """
    if not counted and (begun := attempts.begin_step(run_id)) is not Begun.COUNTED:
        return (None if begun is Begun.HELD else 0), None
    try:
        applied, more = step_locked(run_id, take)
    except attempts.Crowded as crowded:
        attempts.forget_attempt(run_id)
        return check_crashed(run_id, take, crowded.seen - 1)
    except BaseException:
        attempts.forget_attempt(run_id)  # this process lives to tell: only killed steps count
        raise
    # Not stepped, the attempt was not this process's. Its lock found nothing pending
    # (another worker had applied it), or its take-back here held the run's row (the
    # lock found another worker on the run): a worker whose event committed meanwhile
    # found the run held and left its event to this worker. Look once more now that
    # the row and the attempt are given back, or that event waits for the sweeper
    # (issue 33's stall of 13.5 s; 2.5 s for two results of a foreach in chaos).
    if not applied:
        taken_back_here = attempts.forget_attempt(run_id)
        if taken_back_here or applied == 0:
            more = has_pending(run_id)
    return applied, more


def step_locked(run_id: str, take: Taken | None) -> tuple[int | None, bool | None]:
    """Lock the run, apply its pending events and commit the step; see advance_once.

    Raises Crowded, rolled back, when the run holds more attempts than allowed."""
    outermost = not connection.in_atomic_block
    began = time.perf_counter()
    with transaction.atomic():
        run, pending = lock_and_take(run_id)
        if run is None:
            return None, None
        if not pending:
            return 0, None
        if run.step_attempts > settings.BRAID_STEP_MAX_ATTEMPTS:
            raise attempts.Crowded(run_id, run.step_attempts)
        state, commands = apply_events(run, pending)
        more = commit_step(run, state, commands, take, commit=outermost)
    metrics.stepped(len(pending), time.perf_counter() - began)
    return len(pending), more


# How many times a step that saw too many attempts looks again, 0.2 s apart and without
# counting, before it fails the run.
CRASH_CHECKS = 2


def check_crashed(run_id: str, take: Taken | None, kills: int) -> tuple[int | None, bool | None]:
    """Fail the run if its attempts, looked at again without counting, still name too many
    killed steps; else answer (0, True), and `advance` steps it the counted way.

    `kills`: what the step saw, less its own attempt (taken back by now). A live worker
    that counted at the same moment finds the run taken and takes its count back within
    milliseconds, or as soon as the run's holder lets go; the kills named are the lowest
    count seen. The looks do not count: two workers that saw too many at once back off
    together, and when each counted again at its second look, each took the other for a
    kill (the crash-loop test read 4 kills for 3, about once in ten). A live worker is
    still taken for a kill if it counted just before every look's lock; counting exactly
    needs the count under the run's lock (docs/durable.md).
    """
    outermost = not connection.in_atomic_block
    for check in range(1, CRASH_CHECKS + 1):
        attempts.crowded_backoff()
        with transaction.atomic():
            run, pending = lock_and_take(run_id)
            if run is None:
                return None, None  # another worker holds it: it steps or looks itself
            if not pending:
                return 0, None
            kills = min(kills, run.step_attempts)
            if kills >= settings.BRAID_STEP_MAX_ATTEMPTS and check == CRASH_CHECKS:
                state, commands = scheduler.abort(load_state(run, cached=False), clock.now_text(),
                                                  attempts.crashed(pending, kills))  # fmt: skip
                return len(pending), commit_step(run, state, commands, take, commit=outermost)
            transaction.set_rollback(True)  # the events stay pending
        if kills < settings.BRAID_STEP_MAX_ATTEMPTS:
            return 0, True  # not a crash loop: `advance` steps it the counted way
    return 0, True  # not reached: the last look that still finds too many fails the run


# The commands a step computed before its lock may give: approvals and timers are written
# by statements of their own, and a step that gives them takes the lock first.
AHEAD_COMMANDS = (WriteRow, Trace, RunAction, Refused, RunFinished)


@dataclasses.dataclass(frozen=True, slots=True)
class Ahead:
    """A step computed before its lock: from the state of version `since`, with the one
    event of key `key` (step_ahead). The usual step takes it when its lock finds that
    version and that event alone."""

    since: int
    key: str
    state: RunState
    commands: list[Command]


def apply_events(
    run: Run, pending: Sequence[InboxRow], ahead: Ahead | None = None
) -> tuple[RunState, list[Command]]:
    """Apply inbox events in order with `step`; return the state and every command.

    `ahead`: this very step, computed before the lock (step_ahead), taken as it is when
    the lock found the version it was computed from and its event alone.

    An event that cannot be read is logged and skipped. If `step` itself raises (a bug in
    the engine, never a flow's failure), the run fails closed from its last committed
    state with the error, instead of failing the same step forever.
    """
    if (
        ahead is not None
        and run.snapshot_version == ahead.since
        and [row.key for row in pending] == [ahead.key]
    ):
        return ahead.state, ahead.commands
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
            state, produced = scheduler.step(state, event)
        except Exception as error:
            logger.exception("run %s: applying %s raised; the run fails", run.pk, row.key)
            reason = f"internal error applying {event.kind} {row.key}: {error!r}"
            return scheduler.abort(load_state(run, cached=False), clock.now_text(), reason)
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
    status = stored_status(state)
    # The run lock's read gave the trace length; the run's searchable state and the reset
    # attempt count go in the snapshot's own UPDATE.
    room = room_in(take)
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
    version = run.snapshot_version + 1  # the commit counts one more, under the run's lock

    def write() -> None:
        DjangoStore().commit(
            str(run.pk), status, delta, rows, trace, state.error,
            trace_length=run.trace_length,
            columns={"state": state.current_view(), "step_attempts": 0}, version=version,
        )  # fmt: skip

    dispatches, more = backend().step_dispatches(write, run.pk, actions, room, commit)
    after_commit(str(run.pk), version, state, dispatches, take, room)
    return more


def stored_status(state: RunState) -> RunStatus:
    """Return the status a step stores: running until the run has started."""
    return state.status if state.started or state.status.finished else RunStatus.RUNNING


def room_in(take: Taken | None) -> int:
    """Return how many more new actions a step may hand to its caller."""
    return max(0, take.limit - len(take.dispatches)) if take else 0


def step_ahead(
    dispatch: DispatchRow, event: Event, take: Taken | None
) -> Literal[True] | Ahead | None:
    """Apply an action's result to the state this process committed last, then lock the
    run, record the result and write the step in one statement; True when that wrote it.

    A chain's hop was the lock with the result (a round trip, the run row read back),
    then the step's writes, COMMIT and the look (a pipeline). When this process committed
    the run's last step, which is the rule in a chain whose actions it runs itself, the
    step needs nothing the lock reads: it is computed first and goes with the lock,
    COMMIT and the look as one pipeline. The statement takes the run only at the version
    the state is of, with no attempt counted and no other event waiting; else it records
    the result as pending, like a lock that found the run held, and `advance` applies it
    the usual way (then True too: the result is recorded).

    Nothing is sent (None) for a failed action (its step keeps a snapshot to retry from),
    inside a caller's transaction, on a backend without the statement, or when no state
    is cached. A step that gives approvals or timers, or must write its whole snapshot,
    is not sent either: it comes back as an Ahead, for the usual step to take after its
    lock (apply_events). A step that raises comes back None, and the usual step meets the
    error again from the stored state.
    """
    run_id = str(dispatch.run_id)
    if (not isinstance(event, ActionCompleted) or connection.in_atomic_block
            or not backend().steps_ahead):  # fmt: skip
        return None
    cached = take_state(run_id)
    if cached is None:
        return None
    since, state = cached
    began = time.perf_counter()
    try:
        state, commands = scheduler.step(state, event)
    except Exception:
        return None
    if state.persisted.full or not all(isinstance(c, AHEAD_COMMANDS) for c in commands):
        return Ahead(since, event.key, state, commands)
    status, room = stored_status(state), room_in(take)
    actions = [c for c in commands if isinstance(c, RunAction)]
    crash_point("advance.before_commit")
    with transaction.atomic():
        answer = backend().step_ahead(
            run_id, since, (dispatch, event), status, take_delta(state),
            [c for c in commands if isinstance(c, WriteRow)],
            [c for c in commands if isinstance(c, Trace)], state.error,
            {"state": state.current_view(), "step_attempts": 0}, actions, room,
        )  # fmt: skip
        stepped, dispatches, more = answer()
        if stepped:
            after_commit(run_id, since + 1, state, dispatches, take, room)
    if not stepped:
        advance(run_id, take)
        return True
    metrics.stepped(1, time.perf_counter() - began)
    if more:
        advance(run_id, take)
    return True


def after_commit(
    run_id: str, version: int, state: RunState, dispatches: list[DispatchRow],
    take: Taken | None, room: int,
) -> None:  # fmt: skip
    """Keep the state, tell the live views, hand the taken actions to the caller and send
    the rest once the step commits."""
    transaction.on_commit(lambda: remember_state(run_id, version, state))
    live.changed(run_id)
    transaction.on_commit(lambda: crash_point("advance.after_commit", run_id))
    kept = dispatches[:room]
    if kept and take is not None:
        transaction.on_commit(lambda: take.dispatches.extend(kept))
    sent = [d.pk for d in dispatches[room:]]
    if sent:
        # Robust: with the broker down the rows stay unsent and the sweeper sends them; the
        # task goes on recording the results it holds.
        transaction.on_commit(lambda: publish(sent), robust=True)
