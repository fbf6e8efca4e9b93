"""The chaos invariant "no event unapplied longer than one sweep interval": the live
sampler measures each inbox event's wait on the database's clock, and a wait counts
unless an injected fault's window explains it."""

import datetime as dt
import time
from collections.abc import Sequence
from pathlib import Path

import pytest
from django.db import connection

from chaos.check import log_lines, timeline
from chaos.waits import Calibration, EventWaits, Wait, Window, classify, fault_windows, spans
from engine.core.events import Cancel
from engine.models import PendingEvent
from engine.runtime import clock, runs, step
from engine.runtime.transport import use_transport
from runs.services import resolve_graphs
from tests.django.test_durable__dispatch import fork_of

T0 = dt.datetime(2026, 12, 6, 12, 0, tzinfo=dt.UTC)


def at(seconds: float) -> dt.datetime:
    return T0 + dt.timedelta(seconds=seconds)


def wait(event: int, start: float, end: float) -> Wait:
    return Wait(event, "run", f"key{event}", at(start), at(end), True)


def fault(kind: str, start: float, end: float, detail: str = "done") -> dict[str, object]:
    return {"kind": kind, "actual_s": start, "ended_s": end, "detail": detail}


RECOVERY = {"stop": 3.0, "kill-child": 3.0, "crash-after-commit": 3.0, "redis-restart": 7.0,
            "worker restart": 3.0}  # fmt: skip


def test_fault_windows_run_from_each_fault_to_its_end_and_recovery() -> None:
    pinned = Calibration(round_trip=0.001, database=T0, monotonic=100.0)
    faults = [
        fault("stop", 10.0, 16.0),
        fault("kill-child", 30.0, 30.0, "skipped: w1 had no pool process for 15 s"),
        fault("crash-after-commit", 40.0, 40.0, "armed: the next step to commit ..."),
        fault("redis-restart", 80.0, 82.5),
    ]
    windows = fault_windows(faults, fired_s=[55.0], restarts=[(70.0, 74.5)], clock=pinned,
                            started=100.0, recovery=RECOVERY)  # fmt: skip
    assert windows == [
        Window("stop", at(10.0), at(19.0)),
        Window("redis-restart", at(80.0), at(89.5)),
        Window("crash-after-commit", at(55.0), at(58.0)),  # from when it fired, not armed
        Window("worker restart", at(70.0), at(77.5)),  # until its log said it was ready
    ]


def test_a_wait_counts_unless_it_ends_in_a_fault_window_and_began_within_the_limit() -> None:
    windows = [Window("stop", at(10.0), at(19.0)), Window("kill-main", at(18.0), at(24.0)),
               Window("pg-restart", at(40.0), at(47.0))]  # fmt: skip
    waits = [
        wait(1, 12.0, 14.5),  # inside the stop
        wait(2, 9.2, 11.0),  # began 0.8 s before the stop: the limit covers that part
        wait(3, 8.0, 11.0),  # began 2 s before the stop: over the limit before any fault
        wait(4, 17.0, 23.5),  # across two faults in a row, ends in the second's recovery
        wait(5, 23.0, 25.5),  # outlasted the recovery of the faults it began in
        wait(6, 30.0, 32.0),  # no fault near: a lost wake-up
        wait(7, 25.0, 41.0),  # began in the quiet before the restart, long before it
        wait(8, 46.5, 48.0),  # began in the recovery, still waiting after it
    ]
    counted, exempt = classify(reversed(waits), windows, limit_s=1.0)
    assert [w.event for w in counted] == [3, 5, 6, 7, 8]
    assert [w.event for w in exempt] == [1, 2, 4]
    assert [w.seconds for w in counted] == [3.0, 2.5, 2.0, 16.0, 1.5]


def test_a_late_waits_report_quotes_the_log_lines_naming_its_run(tmp_path: Path) -> None:
    (tmp_path / "daphne.log").write_text('{"message": "send_advance of run-a failed"}\nother\n')
    (tmp_path / "worker-1.log").write_text(
        "".join(f'{{"message": "sweep: advancing run-a ({n})"}}\n' for n in range(3))
        + "run-b "
        + "x" * 500
        + "\n"
    )
    (tmp_path / "notes.txt").write_text("run-a, not a log\n")

    assert log_lines(tmp_path, {"run-a", "run-b"}, limit=4) == [
        'daphne: {"message": "send_advance of run-a failed"}',
        'worker-1: {"message": "sweep: advancing run-a (0)"}',
        'worker-1: {"message": "sweep: advancing run-a (1)"}',
        'worker-1: {"message": "sweep: advancing run-a (2)"}',
    ]
    assert log_lines(tmp_path, {"run-b"}) == ["worker-1: run-b " + "x" * 394]


def test_faults_in_a_row_join_into_one_span() -> None:
    joined = spans([Window("b", at(18.0), at(24.0)), Window("a", at(10.0), at(19.0)),
                    Window("c", at(24.5), at(26.0))])  # fmt: skip
    assert joined == [Window("a, b", at(10.0), at(24.0)), Window("c", at(24.5), at(26.0))]


def test_the_sampler_keeps_the_longest_wait_and_those_over_its_limit() -> None:
    waits = EventWaits(limit_s=1.0)
    for each in (wait(1, 0.0, 0.4), wait(2, 0.0, 1.0), wait(3, 5.0, 6.5), wait(4, 9.0, 9.9)):
        waits.note(each)
    assert waits.longest == wait(3, 5.0, 6.5)
    assert list(waits.over) == [3]  # exactly the limit (event 2) is not longer than it


class Advances:
    """A transport that notes the advances sent (none must be, for a lost wake-up)."""

    def __init__(self) -> None:
        self.sent: list[str] = []

    def send_advance(self, run_id: str) -> None:
        self.sent.append(run_id)

    def send_actions(self, dispatch_ids: Sequence[int]) -> None:
        self.sent.append(f"actions {list(dispatch_ids)}")

    def send_timer(self, run_id: str, key: str, countdown: float) -> None:
        self.sent.append(f"timer {key}")


@pytest.mark.django_db(transaction=True)
def test_the_sampler_reports_an_event_nobody_woke_its_run_for() -> None:
    """What a lost wake-up leaves: an event recorded with no advance sent. The sampler
    reports it once its wait passes the limit, still unapplied, and its whole wait (to
    the step's stamp, on the database's clock) once a step applies it."""
    if connection.vendor != "postgresql":
        pytest.skip("the chaos sampler reads PostgreSQL's clock; run with DATABASE_URL")
    advances = Advances()
    before = use_transport(advances)
    try:
        run = runs.create_run(resolve_graphs(fork_of(2)), "fork", {})
        run_id = str(run.pk)
        step.advance(run_id)  # the start is applied; the two actions are dispatched
        waits = EventWaits(limit_s=0.3)
        waits.sample()
        assert (waits.measured, waits.over) == (1, {})  # the start, applied at once
        sent = list(advances.sent)
        cancel = Cancel(at=clock.now_text(), by="t").to_json()
        lost = PendingEvent.objects.create(run_id=run_id, key="cancel", event=cancel)
        waits.sample()
        assert lost.pk in waits.open and waits.over == {}
        time.sleep(0.5)
        waits.sample()
        late = waits.over[lost.pk]
        assert (late.run, late.key, late.applied) == (run_id, "cancel", False)
        assert 0.5 <= late.seconds < 5.0
        assert classify(waits.over.values(), [], limit_s=0.3) == ([late], [])
        assert advances.sent == sent  # nobody was asked to advance the run
        assert step.advance(run_id) == 1
        waits.sample()
        applied = PendingEvent.objects.get(pk=lost.pk)
        assert applied.applied_at is not None
        assert waits.over[lost.pk] == Wait(lost.pk, run_id, "cancel", applied.created_at,
                                           applied.applied_at, True)  # fmt: skip
        assert (waits.open, waits.measured, waits.longest) == ({}, 2, waits.over[lost.pk])
        # The report shows the run's events around the wait: here it was not stepped at
        # all until the late advance (the start was applied before the cancel came).
        start = PendingEvent.objects.get(run_id=run_id, key="start")
        assert timeline(waits.over[lost.pk]) == (
            f"run {run_id}: {start.created_at:%H:%M:%S.%f} -> {start.applied_at:%H:%M:%S.%f} "
            f"start; {applied.created_at:%H:%M:%S.%f} -> {applied.applied_at:%H:%M:%S.%f} cancel"
        )
    finally:
        use_transport(before)


@pytest.mark.django_db(transaction=True)
def test_an_event_applied_between_two_samples_is_measured_from_its_stamps() -> None:
    """A sample a second apart never sees an event applied within that second unapplied:
    it is read from its stamps, so a wait longer than the limit is not missed."""
    if connection.vendor != "postgresql":
        pytest.skip("the chaos sampler reads PostgreSQL's clock; run with DATABASE_URL")
    before = use_transport(Advances())
    try:
        run = runs.create_run(resolve_graphs(fork_of(2)), "fork", {})
        step.advance(str(run.pk))
        waits = EventWaits(limit_s=1.0)
        waits.sample()
        created = clock.now() - dt.timedelta(seconds=1.5)
        lost = PendingEvent.objects.create(run=run, key="cancel", event={"kind": "cancel"})
        PendingEvent.objects.filter(pk=lost.pk).update(created_at=created, applied_at=clock.now())
        waits.sample()
        stored = PendingEvent.objects.get(pk=lost.pk)
        assert stored.applied_at is not None
        assert list(waits.over) == [lost.pk] and waits.over[lost.pk].applied
        expected = (stored.applied_at - created).total_seconds()
        assert waits.over[lost.pk].seconds == expected and expected >= 1.5
    finally:
        use_transport(before)
