"""Step attempts: each step is counted before its work and the count is reset by its
commit, so a step that kills its worker process every time fails its run instead of
crashing workers forever."""

import contextlib
import functools
import logging
import time
from collections.abc import Iterator, Sequence

from django.conf import settings
from django.db import connection, transaction
from django.db.models import F

from engine.models import Run
from engine.runtime import leases
from engine.runtime.backends import backend
from engine.runtime.inbox import has_pending
from engine.runtime.records import Begun, InboxRow
from engine.runtime.transport import transport


class Crowded(Exception):
    """A step saw more attempts than allowed, which live workers may have counted too
    (step.check_crashed looks again)."""

    def __init__(self, run_id: str, seen: int) -> None:
        super().__init__(run_id)
        self.seen = seen  # the count it saw, its own attempt included


CROWDED_BACKOFF_S = 0.2
logger = logging.getLogger(__name__)


def crowded_backoff() -> None:
    """Wait for workers that counted an attempt at the same moment to take theirs back
    (before each of step.check_crashed's looks)."""
    time.sleep(CROWDED_BACKOFF_S)


def begin_step(run_id: str) -> Begun:
    """Count one more attempt at the run's next step, committed before the step's work.

    A step whose evaluation kills its worker process rolls back, its message is delivered
    again, and the sweeper resumes it at every start: without this count a run holding
    such a node would crash a worker (or the whole `make run` server) forever. The step's
    own commit sets the count back to 0. Nothing is counted when another worker holds the
    run (PostgreSQL skips it, as the step's lock does) or it has nothing pending.
    """
    return backend().begin_step(run_id)


def forget_attempt(run_id: str) -> bool:
    """Take back the attempt of a step that raised instead of killing its process, or did
    not step; return whether it was taken back here, on the caller's thread.

    Taken back here, the statement held the run's row, and a worker that recorded an
    event meanwhile left it to this holder: the caller looks at the inbox (see
    step.advance_once). Taken back by a thread, that thread looks.

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
        leases.amend_later(functools.partial(take_back_and_wake, run_id, None))
        return False
    if held_at is not None:
        leases.amend_soon(functools.partial(take_back_and_wake, run_id, held_at))
        return False
    return True


def take_back_and_wake(run_id: str, unless_moved_from: int | None) -> None:
    """Take back an attempt after the step that held the run ended (a thread of the worker
    does it), or at the lease's beat after the database failed the step; then wake the
    run if events wait: the update held the run's row, and a worker whose event committed
    meanwhile found the row held and left the event to its holder, which is this thread,
    not a step that looks again."""
    take_back_attempt(run_id, unless_moved_from)
    wake_quietly(run_id, "after its attempt was taken back")


def wake_quietly(run_id: str, after: str) -> None:
    """wake_if_pending, logging instead of raising (not retried with what came before it,
    which must happen once: the sweeper wakes the run then)."""
    try:
        wake_if_pending(run_id)
    except Exception:
        logger.warning("run %s: not woken %s", run_id, after, exc_info=True)


@contextlib.contextmanager
def holding_run(run_id: str, *fields: str, submits: bool = False) -> Iterator[Run]:
    """Lock a run's row as a step does, for a transaction that must not interleave with
    its steps (a decision, a delegation, a retry); yield the run, with only `fields`.

    A worker that records an event while the row is held is turned away and leaves the
    event to the holder, and only a step looks again after it lets go. So once the
    transaction ends, committed or rolled back (a refused request holds the row too),
    the run is sent an advance if events wait. `submits`: the block records an event,
    whose own advance after the commit applies whatever else waits; only a rollback
    wakes the run then. Inside a caller's transaction only its commit wakes the run (a
    rollback there leaves the event to the sweeper).
    """
    outermost, committed = not connection.in_atomic_block, False
    try:
        with transaction.atomic():
            locked = Run.objects.select_for_update(no_key=True)
            yield (locked.only(*fields) if fields else locked).get(pk=run_id)
            if not outermost and not submits:
                transaction.on_commit(lambda: wake_quietly(run_id, "after its holder"))
        committed = True
    finally:
        if outermost and not (committed and submits):
            wake_quietly(run_id, "after its holder")


def wake_if_pending(run_id: str) -> None:
    """Send the run an advance if its inbox holds an event not applied yet."""
    if has_pending(run_id):
        transport().send_advance(run_id)


def take_back_attempt(run_id: str, unless_moved_from: int | None = None) -> int | None:
    """Count one step attempt less (never below 0); with `unless_moved_from`, only while
    the run's snapshot version is still that one.

    On PostgreSQL, without it, a run whose row another step holds is skipped, not waited
    for: it returns the run's committed snapshot version then, and None otherwise.
    """
    if unless_moved_from is None:
        return backend().take_back_attempt(run_id)
    Run.objects.filter(pk=run_id, step_attempts__gt=0, snapshot_version=unless_moved_from).update(
        step_attempts=F("step_attempts") - 1
    )
    return None


def crashed(pending: Sequence[InboxRow], kills: int) -> str:
    """Say why a run fails after its step killed the worker process `kills` times."""
    keys = ", ".join(row.key for row in pending[:5])
    return (
        f"applying {keys} killed the worker process {kills} times; the run fails instead "
        f"of being resumed again (BRAID_STEP_MAX_ATTEMPTS={settings.BRAID_STEP_MAX_ATTEMPTS})"
    )
