"""Results: a worker claims dispatched actions, runs them, and records their results in
their runs' inboxes, then advances those runs itself."""

import contextlib
import functools
import logging
import time
from collections import deque
from collections.abc import Iterator, Sequence

from django.conf import settings
from django.db import connection, transaction

from engine import metrics
from engine.actions import ACTIONS
from engine.core.events import ActionFailed, Event, RunAction
from engine.core.runtime import perform
from engine.faults import crash_point
from engine.log_context import about_run
from engine.runtime import clock, leases, step
from engine.runtime.backends import backend
from engine.runtime.inbox import has_pending, lock_and_take
from engine.runtime.outbox import action_command, claim, release
from engine.runtime.records import DispatchRow, Taken

logger = logging.getLogger(__name__)


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
        if len(waiting) == 1 and backend().records_result_in_its_step:
            dispatch, event = waiting[0]
            if dispatch.pk in counted:
                begun = backend().record_result_and_begin_step(dispatch, event)
                step.advance(str(dispatch.run_id), take, counted=begun)
            else:
                record_and_advance(dispatch, event, take)
        elif waiting:
            for run_id in record_results(waiting):
                step.advance(run_id, take)
        self.since = time.monotonic()


def record_and_advance(dispatch: DispatchRow, event: Event, take: Taken | None) -> None:
    """Record one action's result and apply it in one transaction (PostgreSQL): a hop of
    a chain commits once instead of twice. When this process committed the run's last
    step, the step is computed first and sent with the lock (step.step_ahead).

    The step's attempt is not counted first. If the step kills this process nothing of it
    commits, the result included; the dispatch's claimer is dead, so the sweeper sends it
    again, and that delivery, claimed before, records and applies its result the counted
    way (record_result_and_begin_step, then `advance`). A step that kills its worker every
    time still fails its run, after one kill more than BRAID_STEP_MAX_ATTEMPTS.

    A run another worker holds gets the result recorded, and is advanced after the commit
    as after record_results. A run with attempts counted (a step may have died on it) is
    rolled back to the counted way.
    """
    ahead = step.step_ahead(dispatch, event, take)
    if ahead is True:
        return
    run_id = str(dispatch.run_id)
    more: bool | None = None  # not stepped (a duplicate result): look after the commit
    outermost = not connection.in_atomic_block
    began, applied = time.perf_counter(), 0
    with transaction.atomic():
        run, pending = lock_and_take(run_id, result=(dispatch, event))
        counted = run is not None and run.step_attempts > 0
        if counted:
            transaction.set_rollback(True)
        elif run is not None and pending:
            state, commands = step.apply_events(run, pending, ahead)
            more = step.commit_step(run, state, commands, take, commit=outermost)
            applied = len(pending)
    if applied:
        metrics.stepped(applied, time.perf_counter() - began)
    if counted:
        begun = backend().record_result_and_begin_step(dispatch, event)
        step.advance(run_id, take, counted=begun)
    elif run is None or more or (more is None and has_pending(run_id)):
        step.advance(run_id, take)


def record_results(results: Sequence[tuple[DispatchRow, Event]]) -> list[str]:
    """Insert action results into their runs' inboxes, close their dispatches; return runs.

    On PostgreSQL it is one prepared statement, which commits on its own.
    """
    backend().record_results(results)
    return sorted({str(d.run_id) for d, _ in results})


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
    with handed_back_on_failure(held):
        return run_claimed(dispatch_ids, held)


@contextlib.contextmanager
def handed_back_on_failure(held: set[int]) -> Iterator[None]:
    """On a failure in the block, hand back the actions in `held` (filled as the block
    claims or takes them) at the lease's next beat: see run_actions."""
    try:
        yield
    except BaseException:
        leases.amend_later(functools.partial(release, held, leases.current()))
        raise


def advance_and_run(run_id: str) -> int:
    """Apply a run's pending events, then run the first action its steps opened in this
    task instead of sending it, and the run's next ones after it as an action task does.

    A decision, a run's start or a timer then reaches its next action without a second
    broker round trip and a second worker's pickup (issue 33: W3 and W4). The taken action
    is claimed in the step's own commit, like the ones an action task takes, so the sweeper
    re-sends it if this process dies. Returns how many events were applied.
    """
    take = Taken(limit=1 if settings.BRAID_INLINE_ACTIONS > 0 else 0)
    held: set[int] = set()
    with handed_back_on_failure(held):
        try:
            applied = step.advance(run_id, take)
        finally:  # a step that took an action and then failed holds it too
            held.update(dispatch.pk for dispatch in take.dispatches)
        if take.dispatches:
            run_queue(deque(take.dispatches), set(), held)
    return applied


def run_claimed(dispatch_ids: Sequence[int], held: set[int]) -> int:
    """run_actions' work; every action the task comes to hold is added to `held`."""
    claimed, before = claim(dispatch_ids)
    return run_queue(deque(claimed), before, held)


def run_queue(queue: deque[DispatchRow], before: set[int], held: set[int]) -> int:
    """Run claimed actions in turn, recording their results, and the actions their runs
    open next (taken, up to BRAID_INLINE_ACTIONS); `before`: those claimed by an earlier
    delivery, whose step counts its attempt first."""
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
        event = run_one(command, str(dispatch.run_id))
        crash_point("action.done")
        results.add(dispatch, event, counted=dispatch.pk in before)
        count += 1
    return count


def run_one(command: RunAction, run_id: str) -> Event:
    """Run one action with the run and node in the log context; count it, log a failure."""
    with about_run(run_id, command.node):
        began = time.perf_counter()
        event = perform(ACTIONS, command, run_id, clock.now_text)
        metrics.action_ran(command.action, command.action in ACTIONS.specs, event,
                           time.perf_counter() - began)  # fmt: skip
        if isinstance(event, ActionFailed):
            logger.warning("action %s (attempt %d) failed: %s", command.action, command.attempt,
                           event.error)  # fmt: skip
    return event
