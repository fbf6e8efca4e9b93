"""No lost wake-up: an event recorded while another worker holds the run is applied by
that worker, even when its step found nothing to apply (issue 33's stall).

A worker that records an event and finds the run held leaves the event to the holder,
which looks at the inbox again once it lets go. These tests hold a worker inside its
step, right after it locked the run and found nothing pending, while another worker
records a result and is turned away; then they let the holder go and check that the
result was applied before the holder returned, not left for the sweeper.
"""

import contextlib
import re
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from django.db import connection, connections, transaction

from engine.core.events import ActionCompleted
from engine.models import Dispatch, PendingEvent, Run
from engine.runtime import attempts, clock, inbox, outbox, results, runs, state_cache, step
from engine.runtime.backends import backend, postgresql
from engine.runtime.records import DispatchRow, InboxRow
from engine.runtime.transport import use_transport
from runs.services import resolve_graphs
from tests.django.durable_driver import row_of
from tests.django.test_durable__dispatch import fork_of

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def postgresql_only() -> None:
    if connection.vendor != "postgresql":
        pytest.skip("SQLite has no row locks to skip: a writer waits for the run there")


def done(dispatch: Dispatch) -> tuple[DispatchRow, ActionCompleted]:
    """Return a dispatch's outbox row and the result of its action."""
    command = outbox.action_command(dispatch.command)
    return row_of(dispatch), ActionCompleted(at=clock.now_text(), key=command.key, output=1)


class Held:
    """Pause the holder thread inside its step, right after it locked the run and found
    nothing pending, until the test lets it go."""

    def __init__(self, holder: str) -> None:
        self.holder = holder
        self.locked = threading.Event()
        self.go = threading.Event()
        self.real = inbox.lock_and_take

    def lock_and_take(self, *args: Any, **kwargs: Any) -> tuple[Run | None, list[InboxRow]]:
        found = self.real(*args, **kwargs)
        if threading.current_thread().name == self.holder and not self.locked.is_set():
            assert found[0] is not None and found[1] == [], "the holder found something"
            self.locked.set()
            assert self.go.wait(30)
        return found


@pytest.fixture
def held(monkeypatch: pytest.MonkeyPatch, postgresql_only: None) -> Iterator[Held]:
    pause = Held("holder")
    monkeypatch.setattr(step, "lock_and_take", pause.lock_and_take)
    monkeypatch.setattr(results, "lock_and_take", pause.lock_and_take)
    yield pause
    pause.go.set()


def hold(
    work: Callable[[], object], errors: list[BaseException], name: str = "holder"
) -> threading.Thread:
    """Start a thread (the holder, unless named otherwise) on `work`."""

    def run() -> None:
        try:
            work()
        except BaseException as error:  # surfaced by the test
            errors.append(error)
        finally:
            connections.close_all()

    thread = threading.Thread(target=run, name=name)
    thread.start()
    return thread


def started_fork() -> tuple[str, list[Dispatch]]:
    """A fork of 2 whose two actions are dispatched."""
    run = runs.create_run(resolve_graphs(fork_of(2)), "fork", {})
    step.advance(str(run.pk))
    return str(run.pk), list(Dispatch.objects.filter(run=run).order_by("pk"))


def turned_away(run_id: str, dispatch: Dispatch) -> None:
    """Record a result as a worker does, and see it left to the holder of the run."""
    results.record_results([done(dispatch)])
    assert step.advance(run_id) == 0  # the run is held: this worker leaves its event
    assert inbox.has_pending(run_id)


def test_a_step_that_found_nothing_applies_what_came_while_it_held_the_run(
    held: Held,
) -> None:
    run_id, (first, _) = started_fork()
    Run.objects.filter(pk=run_id).update(step_attempts=1)  # counted, as begin_step does
    errors: list[BaseException] = []
    holder = hold(lambda: step.advance(run_id, counted=True), errors)
    assert held.locked.wait(30)
    turned_away(run_id, first)
    held.go.set()
    holder.join(30)
    assert errors == []
    assert not inbox.has_pending(run_id)
    assert PendingEvent.objects.get(run_id=run_id, key=done(first)[1].key).applied_at is not None


def test_a_duplicate_result_that_held_the_run_applies_what_came_meanwhile(held: Held) -> None:
    run_id, (first, second) = started_fork()
    results.record_results([done(first)])
    step.advance(run_id)  # the first result is applied; its duplicate will record nothing
    # A process that does not hold the run's last state takes the lock first (with the
    # state, it sends the step with the lock: the next test).
    state_cache.take_state(run_id)
    errors: list[BaseException] = []
    holder = hold(lambda: results.record_and_advance(*done(first), None), errors)
    assert held.locked.wait(30)
    turned_away(run_id, second)
    held.go.set()
    holder.join(30)
    assert errors == []
    assert not inbox.has_pending(run_id)
    assert Run.objects.get(pk=run_id).status == "completed"


class HeldAhead:
    """Pause the holder thread inside the transaction of its step computed before the lock,
    after the statement that locks the run went out and before its COMMIT."""

    def __init__(self) -> None:
        self.reached, self.go = threading.Event(), threading.Event()
        self.real = postgresql.commit_and_look

    def commit_and_look(self, run_id: str) -> Callable[[], bool]:
        if threading.current_thread().name == "holder" and not self.reached.is_set():
            self.reached.set()
            assert self.go.wait(30)
        return self.real(run_id)


def until_held(run_id: str) -> None:
    """Wait until another connection holds the run's row."""
    for _ in range(300):
        with transaction.atomic():
            free = Run.objects.select_for_update(skip_locked=True, no_key=True).filter(pk=run_id)
            if not free.exists():
                return
        time.sleep(0.01)
    raise AssertionError("nobody took the run's lock")


def test_a_duplicate_result_sent_with_the_lock_applies_what_came_meanwhile(
    monkeypatch: pytest.MonkeyPatch, postgresql_only: None
) -> None:
    run_id, (first, second) = started_fork()
    results.record_results([done(first)])
    step.advance(run_id)  # this process now holds the run's last state
    pause = HeldAhead()
    monkeypatch.setattr(postgresql, "commit_and_look", pause.commit_and_look)
    errors: list[BaseException] = []
    holder = hold(lambda: results.record_and_advance(*done(first), None), errors)
    try:
        assert pause.reached.wait(30)
        until_held(run_id)  # the statement locked the run; it records nothing, a duplicate
        turned_away(run_id, second)
    finally:
        pause.go.set()
        holder.join(30)
    assert errors == []
    assert not inbox.has_pending(run_id)
    assert Run.objects.get(pk=run_id).status == "completed"


class HeldTakeBack:
    """Pause the holder thread in the take-back of its attempt, after its step found the
    run held: first until the other worker lets the run go, then with the take-back's
    statement holding the run's row (kept open, as a process descheduled inside it keeps
    it) until the test lets it go."""

    def __init__(self) -> None:
        self.reached, self.other_gone = threading.Event(), threading.Event()
        self.locked, self.go = threading.Event(), threading.Event()
        self.real = backend().take_back_attempt

    def take_back_attempt(self, run_id: str) -> int | None:
        if threading.current_thread().name != "holder" or self.locked.is_set():
            return self.real(run_id)
        self.reached.set()
        assert self.other_gone.wait(30)
        with transaction.atomic():
            held_at = self.real(run_id)
            assert held_at is None, "the take-back found the run held"
            self.locked.set()
            assert self.go.wait(30)
        return held_at


@pytest.fixture
def held_take_back(
    monkeypatch: pytest.MonkeyPatch, postgresql_only: None
) -> Iterator[HeldTakeBack]:
    pause = HeldTakeBack()
    monkeypatch.setattr(backend(), "take_back_attempt", pause.take_back_attempt)
    yield pause
    pause.other_gone.set()
    pause.go.set()


def test_a_step_that_found_the_run_held_applies_what_came_while_it_took_its_attempt_back(
    held_take_back: HeldTakeBack,
) -> None:
    """A counted step whose lock finds another worker on the run takes its attempt back:
    that statement holds the run's row too, after the other worker let go and looked."""
    pause = held_take_back
    run_id, (first, _) = started_fork()
    Run.objects.filter(pk=run_id).update(step_attempts=1)  # counted, as begin_step does
    other_locked, release = threading.Event(), threading.Event()

    def other_step() -> None:  # another worker's step, which looks before the result comes
        with transaction.atomic():
            Run.objects.select_for_update(no_key=True).get(pk=run_id)
            other_locked.set()
            assert release.wait(30)

    errors: list[BaseException] = []
    other = hold(other_step, errors, name="other")
    assert other_locked.wait(30)
    holder = hold(lambda: step.advance(run_id, counted=True), errors)
    assert pause.reached.wait(30)  # its lock skipped the run: the other worker holds it
    release.set()
    other.join(30)
    pause.other_gone.set()
    assert pause.locked.wait(30)
    turned_away(run_id, first)
    pause.go.set()
    holder.join(30)
    assert errors == []
    assert not inbox.has_pending(run_id)
    assert PendingEvent.objects.get(run_id=run_id, key=done(first)[1].key).applied_at is not None
    assert Run.objects.get(pk=run_id).step_attempts == 0


class Advances:
    """A transport that notes the advances sent."""

    def __init__(self) -> None:
        self.sent: list[str] = []

    def send_advance(self, run_id: str) -> None:
        self.sent.append(run_id)

    def send_actions(self, dispatch_ids: Sequence[int]) -> None:
        raise AssertionError("no action is sent here")

    def send_timer(self, run_id: str, key: str, countdown: float) -> None:
        raise AssertionError("no timer is set here")


@pytest.mark.parametrize("waiting", [True, False])
def test_an_attempt_taken_back_after_another_step_wakes_the_run_if_events_wait(
    waiting: bool,
) -> None:
    """The take-back a worker's thread makes after another step held the run holds the
    run's row too, and turns recording workers away: it sends the run an advance."""
    run_id, (first, _) = started_fork()
    if waiting:
        results.record_results([done(first)])
    version = Run.objects.get(pk=run_id).snapshot_version
    Run.objects.filter(pk=run_id).update(step_attempts=1)
    advances = Advances()
    before = use_transport(advances)
    try:
        attempts.take_back_and_wake(run_id, version)
    finally:
        use_transport(before)
    assert Run.objects.get(pk=run_id).step_attempts == 0
    assert advances.sent == ([run_id] if waiting else [])


def test_a_worker_that_looked_enough_times_sends_the_run_an_advance(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """After EMPTY_LOOKS looks that each found an event and then no step to apply it, the
    worker was the run's last holder: it hands the next look to a message."""
    run_id, _ = started_fork()
    calls: list[str] = []

    def held_then_found(*args: Any, **kwargs: Any) -> tuple[int, bool]:
        calls.append(run_id)
        return 0, True  # locked, found nothing, then an event came

    monkeypatch.setattr(step, "advance_once", held_then_found)
    advances = Advances()
    before = use_transport(advances)
    try:
        assert step.advance(run_id) == 0
    finally:
        use_transport(before)
    assert len(calls) == step.EMPTY_LOOKS + 1
    assert advances.sent == [run_id]


class Refused(Exception):
    """A request refused while its transaction held the run."""


@pytest.mark.parametrize("submits", [False, True], ids=["holds", "submits"])
@pytest.mark.parametrize("ends", ["commits", "rolls back", "commits inside a caller's"])
@pytest.mark.parametrize("waiting", [True, False], ids=["waiting", "nothing waiting"])
def test_a_transaction_that_held_a_run_wakes_it_once_it_ends_if_events_wait(
    waiting: bool, ends: str, submits: bool
) -> None:
    """A decision, a delegation or a retry holds the run's row through its transaction
    and turns recording workers away, refused or not: it wakes the run if events wait,
    unless the event it submitted has its own advance sent after the commit."""
    run_id, (first, _) = started_fork()
    if waiting:
        results.record_results([done(first)])
    advances = Advances()
    before = use_transport(advances)
    try:
        with contextlib.suppress(Refused), contextlib.ExitStack() as outer:
            if ends == "commits inside a caller's":
                outer.enter_context(transaction.atomic())
            with attempts.holding_run(run_id, "pk", submits=submits) as run:
                assert str(run.pk) == run_id
                if ends == "rolls back":
                    raise Refused(run_id)
                assert advances.sent == []  # not while it holds the run
    finally:
        use_transport(before)
    woken = waiting and not (submits and ends != "rolls back")
    assert advances.sent == ([run_id] if woken else [])


def test_only_the_engine_locks_a_runs_row() -> None:
    """Every other transaction that must not interleave with a run's steps holds it
    through attempts.holding_run, which wakes the run after it (the test above)."""
    root = Path(__file__).resolve().parents[2]
    allowed = {"engine/runtime/attempts.py", "engine/runtime/store.py",
               "engine/runtime/backends/portable.py", "runs/services.py"}  # fmt: skip
    lockers = sorted(
        str(path.relative_to(root))
        for folder in ("approvals", "braid", "designer", "engine", "monitor", "runs", "web")
        for path in (root / folder).rglob("*.py")
        if re.search(r"Run\.objects\.select_for_update", path.read_text())
    )
    assert set(lockers) <= allowed, set(lockers) - allowed
