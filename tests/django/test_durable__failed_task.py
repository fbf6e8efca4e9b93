"""A task that fails after claiming its actions hands them back, though its process lives.

`make chaos` found it: during a PostgreSQL restart a `run_actions` task claimed an action,
ran it, and failed to record the result. The message was acknowledged, the process lived
on and its lease kept beating, so the sweeper never re-sent the action (a live worker's
actions are never re-sent) and the run waited forever.
"""

import datetime as dt

import pytest
from django.db import OperationalError
from django.utils import timezone

from engine import tasks
from engine.models import Dispatch, WorkerLease
from engine.runtime import attempts, leases, results, runs, step, sweep
from engine.runtime.transport import use_transport
from runs.services import resolve_graphs
from tests.django.test_durable__dispatch import fork_of
from tests.django.test_durable__wakeup import Advances

pytestmark = pytest.mark.django_db
LIVE = "host:1:live"


def test_the_actions_of_a_task_that_failed_are_released_at_the_next_beat_and_re_sent(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    run = runs.create_run(resolve_graphs(fork_of(2)), "fork", {})
    step.advance(str(run.pk))
    minute_ago = timezone.now() - dt.timedelta(minutes=1)
    Dispatch.objects.update(published_at=minute_ago)  # sent a minute ago
    ids = sorted(Dispatch.objects.values_list("pk", flat=True))
    monkeypatch.setattr(leases, "current", lambda: LIVE)

    def database_away(results: object) -> list[str]:
        raise OperationalError("server closed the connection unexpectedly")

    monkeypatch.setattr(results, "record_results", database_away)
    with pytest.raises(OperationalError):
        tasks.run_actions(ids)

    claims = Dispatch.objects.order_by("pk").values_list("claimed_by", "completed_at")
    assert list(claims.all()) == [(LIVE, None), (LIVE, None)]
    WorkerLease.objects.create(name=LIVE, beat_at=timezone.now())
    now = timezone.now()
    assert sweep.lost_dispatches(now - dt.timedelta(seconds=10), now) == []  # a live claim

    leases.beat(LIVE)

    assert list(claims.all()) == [("", None), ("", None)]
    assert sweep.lost_dispatches(now - dt.timedelta(seconds=10), now) == ids
    assert leases.amend() == 0  # nothing left to hand back


def test_a_task_that_succeeds_hands_nothing_back(monkeypatch: pytest.MonkeyPatch) -> None:
    run = runs.create_run(resolve_graphs(fork_of(2)), "fork", {})
    step.advance(str(run.pk))
    monkeypatch.setattr(leases, "current", lambda: LIVE)
    ids = sorted(Dispatch.objects.values_list("pk", flat=True))

    assert tasks.run_actions(ids) == 2

    assert leases.amend() == 0
    assert Dispatch.objects.filter(completed_at=None).count() == 0


def test_a_step_that_lost_its_database_takes_its_attempt_back_at_the_next_beat(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    run = runs.create_run(resolve_graphs(fork_of(2)), "fork", {})
    ended = OperationalError("terminating connection due to administrator command")
    real = attempts.take_back_attempt
    tries: list[str] = []

    def commit_fails(*args: object, **kwargs: object) -> None:
        raise ended

    def away_once(run_id: str, unless_moved_from: int | None = None) -> None:
        tries.append(run_id)
        if len(tries) == 1:
            raise ended
        real(run_id, unless_moved_from)

    monkeypatch.setattr(step, "commit_step", commit_fails)
    monkeypatch.setattr(attempts, "take_back_attempt", away_once)
    with pytest.raises(OperationalError):
        step.advance(str(run.pk))
    run.refresh_from_db()
    assert run.step_attempts == 1  # counted as if the step had killed its process

    advances = Advances()
    before = use_transport(advances)
    try:
        leases.beat(LIVE)
    finally:
        use_transport(before)

    run.refresh_from_db()
    assert (run.step_attempts, tries) == (0, [str(run.pk), str(run.pk)])
    # Its take-back held the run's row: a worker turned away meanwhile left its event to
    # it, so it wakes the run, whose start still waits.
    assert advances.sent == [str(run.pk)]


@pytest.mark.django_db(transaction=True)  # a step hands its taken action over on commit
def test_an_advance_task_that_took_an_action_and_then_failed_hands_it_back_at_the_next_beat(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    run = runs.create_run(resolve_graphs(fork_of(1)), "fork", {})
    monkeypatch.setattr(leases, "current", lambda: LIVE)
    advance = step.advance

    def took_then_failed(run_id: str, take: object = None, counted: bool = False) -> int:
        advance(run_id, take, counted)  # type: ignore[arg-type]  # takes the fork's action
        raise OperationalError("server closed the connection unexpectedly")

    monkeypatch.setattr(step, "advance", took_then_failed)
    with pytest.raises(OperationalError):
        tasks.advance_run(str(run.pk))

    claims = Dispatch.objects.values_list("claimed_by", "completed_at")
    assert list(claims.all()) == [(LIVE, None)]  # taken in the step's commit, never run
    WorkerLease.objects.create(name=LIVE, beat_at=timezone.now())
    leases.beat(LIVE)
    assert list(claims.all()) == [("", None)]
    assert leases.amend() == 0
