"""Sending actions: chunked messages for wide fan-outs, batched results, worker leases."""

import datetime as dt
import itertools
import os
import re
import threading
from collections.abc import Iterator, Sequence
from typing import Any

import pytest
from celery.signals import before_task_publish
from django.db import connection
from django.utils import timezone
from pytest_django import Settings

from engine import tasks
from engine.core.events import ActionCompleted
from engine.core.runtime import ManualClock
from engine.models import Dispatch, PendingEvent, Run, WorkerLease
from engine.runtime import (
    attempts,
    clock,
    inbox,
    leases,
    outbox,
    records,
    results,
    runs,
    step,
    sweep,
)
from engine.runtime.transport import use_transport
from runs.services import resolve_graphs
from tests.django.durable_driver import drain, row_of


def fork_of(n: int) -> dict[str, object]:
    """A fork of n noop tasks gathered into one continuation."""
    slots = [f"b{i}" for i in range(n)]
    return {
        "format": "braid.graph/1",
        "name": f"Fork of {n}",
        "state": {"hits": {"reducer": "sum"}},
        "nodes": [
            {"id": "start", "type": "start"},
            {"id": "split", "type": "fork", "branches": slots},
            *[{"id": f"t{i}", "type": "task", "action": "noop", "params": {"value": 1},
               "output": "hits"} for i in range(n)],
            {"id": "join", "type": "gather", "slots": slots},
            {"id": "done", "type": "end"},
        ],
        "edges": [
            {"source": "start", "target": "split"},
            *[{"source": "split", "branch": s, "target": f"t{i}"} for i, s in enumerate(slots)],
            *[{"source": f"t{i}", "target": "join", "slot": s} for i, s in enumerate(slots)],
            {"source": "join", "target": "done"},
        ],
    }  # fmt: skip


def test_streams_split_items_into_contiguous_chunks_of_nearly_equal_size() -> None:
    assert outbox.streams([], 4) == []
    assert outbox.streams([1, 2, 3], 4) == [[1], [2], [3]]
    assert outbox.streams(list(range(10)), 4) == [[0, 1, 2], [3, 4, 5], [6, 7], [8, 9]]
    assert outbox.streams(list(range(5)), 0) == [[0, 1, 2, 3, 4]]


type Published = list[tuple[str, Any]]
"""(task name, args) of each message published; Celery's message bodies are untyped."""


@pytest.fixture
def published() -> Iterator[Published]:
    """Record (task name, args) of every message published during the test."""
    sent: Published = []

    def record(sender: str, body: object, **_: object) -> None:
        sent.append((sender, body[0] if isinstance(body, tuple) else body))

    before_task_publish.connect(record, weak=False)
    yield sent
    before_task_publish.disconnect(record)


@pytest.mark.django_db(transaction=True)
def test_a_fork_of_100_sends_its_actions_as_32_messages_and_completes(
    published: Published, settings: Settings
) -> None:
    settings.BRAID_DISPATCH_STREAMS = 32
    settings.BRAID_STREAMS_PER_SLOT = 0  # no limit by the live workers' slots
    run = runs.create_run(resolve_graphs(fork_of(100)), "fork", {})
    step.advance(str(run.pk))
    chunks = [args[0] for name, args in published if name == "braid.run_actions"]
    assert [len(c) for c in chunks] == [4] * 4 + [3] * 28
    assert sorted(i for c in chunks for i in c) == sorted(
        Dispatch.objects.filter(run=run).values_list("pk", flat=True)
    )
    for chunk in chunks:
        assert tasks.run_actions(chunk) == len(chunk)
    run = drain(run)
    assert (run.status, run.state) == ("completed", {"hits": 100})


class InProcessTransport:
    """Carries each message out at once in this process, instead of sending it to Celery."""

    def __init__(self) -> None:
        self.sent: list[str] = []

    def send_advance(self, run_id: str) -> None:
        self.sent.append("advance")
        step.advance(run_id)

    def send_actions(self, dispatch_ids: Sequence[int]) -> None:
        self.sent.append(f"actions {len(dispatch_ids)}")
        results.run_actions(dispatch_ids)

    def send_timer(self, run_id: str, key: str, countdown: float) -> None:
        self.sent.append(f"timer {key}")


@pytest.mark.django_db(transaction=True)
def test_a_run_goes_by_the_transport_registered_and_never_by_celery(
    published: Published, settings: Settings
) -> None:
    settings.BRAID_STREAMS_PER_SLOT = 0  # no limit by the live workers' slots
    in_process = InProcessTransport()
    before = use_transport(in_process)
    try:
        run = runs.create_run(resolve_graphs(fork_of(3)), "fork", {})
    finally:
        use_transport(before)
    run.refresh_from_db()
    assert (run.status, run.state) == ("completed", {"hits": 3})
    assert in_process.sent == ["advance", "actions 1", "actions 1", "actions 1"]
    assert published == []


def beating(name: str, worker: str, slots: int, seconds_ago: float = 0) -> None:
    at = timezone.now() - dt.timedelta(seconds=seconds_ago)
    WorkerLease.objects.create(name=name, beat_at=at, worker=worker, slots=slots)


@pytest.mark.django_db
def test_live_slots_count_each_live_worker_once_with_its_concurrency(settings: Settings) -> None:
    assert leases.live_slots(fresh=True) == 0
    beating("h:1:a", "one@h", 4)
    beating("h:2:b", "one@h", 4)  # a second process of the same worker
    beating("h:3:c", "two@h", 2)
    beating("h:4:d", "", 1)  # a lease from before leases named their worker
    beating("h:5:e", "three@h", 8, seconds_ago=settings.BRAID_LEASE_DEAD_S + 5)  # dead
    assert leases.live_slots(fresh=True) == 4 + 2 + 1
    WorkerLease.objects.all().delete()
    assert leases.live_slots() == 7  # read again only after a beat interval
    assert leases.live_slots(fresh=True) == 0


@pytest.mark.django_db
def test_a_wide_fan_out_leaves_as_two_messages_per_live_slot_at_most(settings: Settings) -> None:
    settings.BRAID_DISPATCH_STREAMS, settings.BRAID_STREAMS_PER_SLOT = 32, 2
    leases.live_slots(fresh=True)
    assert outbox.stream_count(1000) == 32  # no lease beats: the setting alone
    beating("h:1:a", "one@h", 2)
    beating("h:2:b", "two@h", 2)
    leases.live_slots(fresh=True)
    assert (outbox.stream_count(1000), outbox.stream_count(5)) == (8, 8)
    assert outbox.stream_count(1) == 32  # one action: no count is read
    beating("h:3:c", "three@h", 16)
    leases.live_slots(fresh=True)
    assert outbox.stream_count(1000) == 32
    settings.BRAID_STREAMS_PER_SLOT = 0
    beating("h:4:d", "", 1)
    assert outbox.stream_count(1000) == 32
    WorkerLease.objects.all().delete()
    leases.live_slots(fresh=True)


def test_chunks_follow_the_setting_when_the_leases_cannot_be_read(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    from django.db import OperationalError

    def unreachable(fresh: bool = False) -> int:
        raise OperationalError("the database is away")

    settings.BRAID_DISPATCH_STREAMS, settings.BRAID_STREAMS_PER_SLOT = 32, 2
    monkeypatch.setattr(leases, "live_slots", unreachable)
    assert outbox.stream_count(1000) == 32


@pytest.mark.django_db(transaction=True)
def test_a_fork_of_100_on_two_workers_of_two_slots_is_8_messages(
    published: Published, settings: Settings
) -> None:
    settings.BRAID_DISPATCH_STREAMS, settings.BRAID_STREAMS_PER_SLOT = 32, 2
    beating("h:1:a", "one@h", 2)
    beating("h:2:b", "two@h", 2)
    leases.live_slots(fresh=True)
    try:
        run = runs.create_run(resolve_graphs(fork_of(100)), "fork", {})
        step.advance(str(run.pk))
    finally:
        WorkerLease.objects.all().delete()
        leases.live_slots(fresh=True)
    chunks = [args[0] for name, args in published if name == "braid.run_actions"]
    assert [len(c) for c in chunks] == [13] * 4 + [12] * 4
    for chunk in chunks:
        assert tasks.run_actions(chunk) == len(chunk)
    run = drain(run)
    assert (run.status, run.state) == ("completed", {"hits": 100})


def test_the_worker_init_signal_notes_the_workers_name_and_concurrency() -> None:
    from braid.celery import note_capacity

    class Worker:
        hostname = "one@h"
        concurrency: int | str = 3
        autoscale: tuple[int, int] | None = None
        options: dict[str, object] = {}

    before = leases._capacity
    try:
        note_capacity(Worker())
        assert leases._capacity == ("one@h", 3)
        Worker.options = {"autoscale": "12,2"}  # as the command line gives it
        note_capacity(Worker())
        assert leases._capacity == ("one@h", 12)
        Worker.autoscale = (10, 2)
        note_capacity(Worker())
        assert leases._capacity == ("one@h", 10)
        Worker.autoscale, Worker.options, Worker.concurrency = None, {}, "auto"
        note_capacity(Worker())
        assert leases._capacity == ("one@h", os.cpu_count() or 1)
    finally:
        leases._capacity = before


@pytest.mark.django_db
def test_a_lease_says_which_worker_it_belongs_to_and_its_slots() -> None:
    before = leases._capacity
    try:
        leases.set_capacity("one@h", 4)
        leases.beat("h:9:z")
    finally:
        leases._capacity = before
    lease = WorkerLease.objects.get(name="h:9:z")
    assert (lease.worker, lease.slots) == ("one@h", 4)


@pytest.mark.django_db
def test_a_duplicate_chunk_runs_nothing_again_and_records_nothing_twice() -> None:
    run = runs.create_run(resolve_graphs(fork_of(3)), "fork", {})
    step.advance(str(run.pk))
    ids = list(Dispatch.objects.filter(run=run).order_by("pk").values_list("pk", flat=True))
    assert tasks.run_actions(ids) == 3  # and applies their results right after
    assert tasks.run_actions(ids) == 0
    results = PendingEvent.objects.filter(run=run).exclude(key="start")
    assert (results.count(), results.filter(applied_at=None).count()) == (3, 0)
    run.refresh_from_db()
    assert (run.status, run.state) == ("completed", {"hits": 3})


@pytest.mark.django_db
def test_results_are_recorded_together_once_the_flush_time_passed() -> None:
    run = runs.create_run(resolve_graphs(fork_of(3)), "fork", {})
    step.advance(str(run.pk))
    dispatches = list(Dispatch.objects.filter(run=run).order_by("pk"))
    kept = results.Results(flush_after_s=3600)
    for dispatch in dispatches[:2]:
        kept.add(row_of(dispatch), ActionCompleted(at=clock.now_text(), key=dispatch.key, output=1))
    recorded = PendingEvent.objects.filter(run=run).exclude(key="start")
    assert recorded.count() == 0
    kept.flush()
    assert (recorded.count(), recorded.filter(applied_at=None).count()) == (2, 0)
    assert Dispatch.objects.filter(run=run, completed_at=None).count() == 1
    at_once = results.Results(flush_after_s=0)
    last = dispatches[2]
    at_once.add(row_of(last), ActionCompleted(at=clock.now_text(), key=last.key, output=1))
    assert Dispatch.objects.filter(run=run, completed_at=None).count() == 0


def claimed(run: Run, by: str, minutes_ago: float) -> Dispatch:
    """Mark the run's first dispatch as sent and claimed by `by` some minutes ago."""
    dispatch = Dispatch.objects.filter(run=run).order_by("pk").first()
    assert dispatch is not None
    moment = timezone.now() - dt.timedelta(minutes=minutes_ago)
    Dispatch.objects.filter(pk=dispatch.pk).update(
        published_at=moment, claimed_by=by, claimed_at=moment
    )
    return dispatch


@pytest.mark.django_db
def test_an_action_of_a_live_worker_is_left_alone_however_long_it_takes(settings: Settings) -> None:
    settings.BRAID_LEASE_DEAD_S = 10
    run = runs.create_run(resolve_graphs(fork_of(1)), "fork", {})
    step.advance(str(run.pk))
    WorkerLease.objects.create(name="host:1:alive", beat_at=timezone.now())
    claimed(run, "host:1:alive", minutes_ago=60)
    assert sweep.lost_dispatches(timezone.now(), timezone.now()) == []


@pytest.mark.django_db
def test_an_action_of_a_worker_whose_lease_stopped_beating_is_sent_again(
    settings: Settings,
) -> None:
    settings.BRAID_LEASE_DEAD_S = 10
    run = runs.create_run(resolve_graphs(fork_of(1)), "fork", {})
    step.advance(str(run.pk))
    silent = timezone.now() - dt.timedelta(seconds=11)
    WorkerLease.objects.create(name="host:2:dead", beat_at=silent)
    dispatch = claimed(run, "host:2:dead", minutes_ago=0.2)
    stale = timezone.now() - dt.timedelta(hours=1)  # far longer than it has been out
    assert sweep.lost_dispatches(stale, stale) == [dispatch.pk]
    assert sweep.sweep(stale_after_s=3600)["actions"] == 1
    assert drain(run).state == {"hits": 1}


@pytest.mark.django_db
def test_an_unclaimed_message_counts_as_lost_only_after_the_stale_time() -> None:
    run = runs.create_run(resolve_graphs(fork_of(1)), "fork", {})
    step.advance(str(run.pk))
    dispatch = claimed(run, "", minutes_ago=1)
    now = timezone.now()
    assert sweep.lost_dispatches(now, now - dt.timedelta(minutes=2)) == []
    assert sweep.lost_dispatches(now, now - dt.timedelta(seconds=30)) == [dispatch.pk]


@pytest.mark.django_db
def test_a_lease_beats_and_names_this_process(settings: Settings) -> None:
    settings.BRAID_LEASE_BEAT_S = 3600  # only the first, synchronous beat happens here
    name = leases.start_beating()
    try:
        assert leases.current() == name
        assert leases.start_beating() == name
        assert list(leases.alive_names().values_list("name", flat=True)) == [name]
    finally:
        leases.stop_beating()  # later tests claim nothing
    assert leases.current() == ""
    WorkerLease.objects.filter(name=name).update(beat_at=timezone.now() - dt.timedelta(hours=2))
    assert leases.forget_dead() == 1


def chain_of(n: int) -> dict[str, object]:
    """A chain of n noop tasks."""
    tasks_ = [{"id": f"t{i}", "type": "task", "action": "noop", "params": {"value": 1},
               "output": "hits"} for i in range(n)]  # fmt: skip
    ids = ["start", *[t["id"] for t in tasks_], "done"]
    return {
        "format": "braid.graph/1",
        "name": f"Chain of {n}",
        "state": {"hits": {"reducer": "sum"}},
        "nodes": [{"id": "start", "type": "start"}, *tasks_, {"id": "done", "type": "end"}],
        "edges": [{"source": a, "target": b} for a, b in itertools.pairwise(ids)],
    }


@pytest.mark.django_db(transaction=True)
def test_an_action_task_runs_the_rest_of_a_chain_itself_without_a_message(
    published: Published, settings: Settings
) -> None:
    settings.BRAID_INLINE_ACTIONS = 100
    run = runs.create_run(resolve_graphs(chain_of(3)), "chain", {})
    step.advance(str(run.pk))
    ((_, (first,)),) = [(n, a) for n, a in published if n == "braid.run_actions"]
    assert tasks.run_actions(first) == 3
    run.refresh_from_db()
    assert (run.status, run.state) == ("completed", {"hits": 3})
    assert [n for n, _ in published if n == "braid.run_actions"] == ["braid.run_actions"]
    assert Dispatch.objects.filter(run=run, completed_at=None).count() == 0


@pytest.mark.django_db(transaction=True)
def test_past_its_inline_limit_an_action_task_sends_the_next_action(
    published: Published, settings: Settings
) -> None:
    settings.BRAID_INLINE_ACTIONS = 1
    run = runs.create_run(resolve_graphs(chain_of(3)), "chain", {})
    step.advance(str(run.pk))
    ((_, (first,)),) = [(n, a) for n, a in published if n == "braid.run_actions"]
    assert tasks.run_actions(first) == 1
    sent = [a[0] for n, a in published if n == "braid.run_actions"]
    assert len(sent) == 2 and sent[1] != first
    assert tasks.run_actions(sent[1]) == 1
    run.refresh_from_db()
    assert (run.status, run.state) == ("running", {"hits": 2})


@pytest.mark.django_db(transaction=True)
def test_the_advance_task_runs_the_action_it_opens_itself_and_the_chain_after_it(
    published: Published, settings: Settings
) -> None:
    settings.BRAID_INLINE_ACTIONS = 100
    run = runs.create_run(resolve_graphs(chain_of(3)), "chain", {})
    published.clear()  # create_run's own advance message
    assert tasks.advance_run(str(run.pk)) == 1  # the start event; the rest ran inline
    run.refresh_from_db()
    assert (run.status, run.state) == ("completed", {"hits": 3})
    assert [name for name, _ in published] == []
    assert Dispatch.objects.filter(run=run, completed_at=None).count() == 0
    assert Dispatch.objects.filter(run=run).count() == 3


def as_sent(sql: str) -> str:
    """Return a statement's text as psycopg sends it to the server: `%s` and `%(name)s`
    numbered `$1`, `$2`... (a repeated name keeps its number), whitespace folded."""
    names: dict[str, int] = {}

    def number(found: re.Match[str]) -> str:
        if found.group(0) == "%%":
            return "%"
        name = found.group(1) or f"#{len(names)}"
        return f"${names.setdefault(name, len(names) + 1)}"

    return " ".join(re.sub(r"%\((\w+)\)s|%s|%%", number, sql).split())


@pytest.mark.django_db(transaction=True)
def test_every_statement_of_a_chain_run_by_its_worker_is_prepared_on_the_server(
    published: Published, settings: Settings
) -> None:
    """A worker's statements are parsed and planned once per connection. One sent with its
    parameters bound on the client is parsed and planned at every step: the step's first,
    `begin_step`, cost the server 0.48 ms of CPU a run so, against 0.07 ms prepared."""
    if connection.vendor != "postgresql":
        pytest.skip("the engine prepares its statements on PostgreSQL only")
    settings.BRAID_INLINE_ACTIONS = 100
    graphs = resolve_graphs(chain_of(3))
    first, run = (runs.create_run(graphs, "chain", {}) for _ in range(2))
    tasks.advance_run(str(first.pk))  # this process reads and keeps the graphs once
    sent: list[str] = []

    def note(execute: Any, sql: str, *args: Any) -> Any:
        sent.append(sql)
        return execute(sql, *args)

    with connection.execute_wrapper(note):
        assert tasks.advance_run(str(run.pk)) == 1
    with connection.cursor() as cursor:
        cursor.execute("SELECT statement FROM pg_prepared_statements")
        prepared = {" ".join(text.split()) for (text,) in cursor.fetchall()}
    # begin_step; the start's step: lock and take, write, dispatch the first action,
    # COMMIT, look for events; then each action's step, computed before its lock: the lock
    # with the result, the writes and the next dispatch, COMMIT, look.
    assert len(sent) == 1 + 5 + 3 + 3 + 3
    assert {as_sent(sql) for sql in sent} - prepared == {"COMMIT"}
    run.refresh_from_db()
    assert (run.status, run.state) == ("completed", {"hits": 3})


@pytest.mark.django_db(transaction=True)
def test_the_advance_task_takes_one_action_of_a_fork_and_sends_the_others(
    published: Published, settings: Settings
) -> None:
    settings.BRAID_INLINE_ACTIONS = 100
    settings.BRAID_STREAMS_PER_SLOT = 0  # no limit by the live workers' slots
    run = runs.create_run(resolve_graphs(fork_of(3)), "fork", {})
    published.clear()
    tasks.advance_run(str(run.pk))
    sent = [args[0] for name, args in published if name == "braid.run_actions"]
    assert [len(chunk) for chunk in sent] == [1, 1]
    done = Dispatch.objects.filter(run=run).exclude(completed_at=None)
    assert done.count() == 1 and done.get().pk not in {pk for chunk in sent for pk in chunk}
    for chunk in sent:
        assert tasks.run_actions(chunk) == 1
    run = drain(run)
    assert (run.status, run.state) == ("completed", {"hits": 3})


@pytest.mark.django_db(transaction=True)
def test_with_no_inline_actions_the_advance_task_sends_the_action_it_opens(
    published: Published, settings: Settings
) -> None:
    settings.BRAID_INLINE_ACTIONS = 0
    run = runs.create_run(resolve_graphs(chain_of(2)), "chain", {})
    published.clear()
    assert tasks.advance_run(str(run.pk)) == 1
    ((name, (first,)),) = published
    assert name == "braid.run_actions" and len(first) == 1
    run.refresh_from_db()
    assert (run.status, run.state) == ("running", {"hits": 0})


@pytest.mark.django_db
def test_recording_dispatches_returns_the_open_rows_and_keeps_a_key_stored_before() -> None:
    run = runs.create_run(resolve_graphs(fork_of(3)), "fork", {})
    actions = [
        outbox.action_command({"kind": "run_action", **command})
        for command in [
            {"key": f"k{i}", "node": f"t{i}", "execution_id": f"e{i}", "action": "noop",
             "params": {}, "attempt": 1}
            for i in range(3)
        ]
    ]  # fmt: skip
    kept = Dispatch.objects.create(run=run, key="k1", command={"earlier": True})
    found = outbox.record_dispatches(run, actions, room=2)
    assert [(d.key, d.pk == kept.pk) for d in found] == [("k1", True), ("k0", False),
                                                         ("k2", False)]  # fmt: skip
    stored = {d.key: d for d in Dispatch.objects.filter(run=run)}
    assert stored["k1"].command == {"earlier": True}  # a stored key keeps its row
    assert [stored[key].claimed_at is not None for key in ("k0", "k1", "k2")] == [
        True, True, False,
    ]  # fmt: skip
    assert all(d.run_id == run.pk and d.command for d in found)


@pytest.mark.django_db(transaction=True)
def test_a_step_marks_no_inbox_event_of_a_run_another_worker_holds() -> None:
    from django.db import connection, transaction

    run = runs.create_run(resolve_graphs(fork_of(1)), "fork", {})
    if connection.vendor != "postgresql":
        pytest.skip("SQLite has no row locks to skip")
    import psycopg

    settings = connection.settings_dict
    other = psycopg.connect(host=settings["HOST"], port=settings["PORT"],
                            user=settings["USER"], dbname=settings["NAME"])  # fmt: skip
    try:
        other.execute("SELECT 1 FROM engine_run WHERE id = %s FOR NO KEY UPDATE", [run.pk])
        with transaction.atomic():
            assert inbox.lock_and_take(str(run.pk)) == (None, [])
        other.rollback()
        with transaction.atomic():
            locked, pending = inbox.lock_and_take(str(run.pk))
            assert locked is not None and locked.pk == run.pk and locked.snapshot == {}
            assert [event.key for event in pending] == ["start"]
    finally:
        other.close()
    assert PendingEvent.objects.get(run=run, key="start").applied_at is not None


@pytest.mark.django_db(transaction=True)
def test_a_result_recorded_with_the_lock_is_applied_only_when_the_lock_is_taken() -> None:
    """record_and_advance's statement: held by another worker, the result still goes into
    the inbox (pending) and its dispatch closes; free, the result comes back applied."""
    from django.db import connection, transaction

    from engine.core.events import ActionCompleted

    if connection.vendor != "postgresql":
        pytest.skip("the result goes with the lock on PostgreSQL only")
    run = runs.create_run(resolve_graphs(fork_of(2)), "fork", {})
    step.advance(str(run.pk))
    first, second = Dispatch.objects.filter(run=run).order_by("pk")
    import psycopg

    settings = connection.settings_dict
    other = psycopg.connect(host=settings["HOST"], port=settings["PORT"],
                            user=settings["USER"], dbname=settings["NAME"])  # fmt: skip

    def done(dispatch: Dispatch) -> ActionCompleted:
        command = outbox.action_command(dispatch.command)
        return ActionCompleted(at="2026-12-04T00:00:00Z", key=command.key, output={"n": 1})

    try:
        other.execute("SELECT 1 FROM engine_run WHERE id = %s FOR NO KEY UPDATE", [run.pk])
        with transaction.atomic():
            assert inbox.lock_and_take(str(run.pk), (row_of(first), done(first))) == (None, [])
        other.rollback()
        held = PendingEvent.objects.get(run=run, key=done(first).key)
        assert held.applied_at is None
        with transaction.atomic():
            locked, pending = inbox.lock_and_take(str(run.pk), (row_of(second), done(second)))
            assert locked is not None and locked.pk == run.pk
            assert [event.key for event in pending] == [done(first).key, done(second).key]
            assert [event.event for event in pending] == [done(first).to_json(),
                                                          done(second).to_json()]  # fmt: skip
        again = inbox.lock_and_take  # a result recorded before inserts nothing
        with transaction.atomic():
            _, pending = again(str(run.pk), (row_of(second), done(second)))
            assert pending == []
    finally:
        other.close()
    assert PendingEvent.objects.filter(run=run, applied_at=None).count() == 0
    assert Dispatch.objects.filter(run=run, completed_at=None).count() == 0


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("holder", ["rolls back", "commits a step"])
def test_an_attempt_taken_back_while_a_step_holds_the_run_waits_on_a_thread(
    holder: str, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """forget_attempt does not wait on a run whose row another step holds; a thread takes
    the attempt back once that step ends, unless it committed (a commit resets the count,
    and a count made after it is another worker's)."""
    from django.db import connection

    if connection.vendor != "postgresql":
        pytest.skip("SQLite has no row locks to skip")
    import psycopg

    leases.amend()  # the process-wide list may hold what an earlier test's thread left
    run = runs.create_run(resolve_graphs(fork_of(1)), "fork", {})
    Run.objects.filter(pk=run.pk).update(step_attempts=2)  # this worker's and the holder's
    settings = connection.settings_dict
    other = psycopg.connect(host=settings["HOST"], port=settings["PORT"],
                            user=settings["USER"], dbname=settings["NAME"])  # fmt: skip
    tried: list[threading.Event] = []
    real = leases.amend_soon
    monkeypatch.setattr(leases, "amend_soon", lambda fix: tried.append(real(fix)))
    try:
        other.execute("SELECT 1 FROM engine_run WHERE id = %s FOR NO KEY UPDATE", [run.pk])
        with connection.cursor() as cursor:
            cursor.execute("SET lock_timeout = '5s'")  # waiting would raise, not hang
        attempts.forget_attempt(str(run.pk))
        assert "taken back at the next beat" not in caplog.text  # no lock time-out
        assert Run.objects.get(pk=run.pk).step_attempts == 2  # not waited for
        if holder == "rolls back":
            other.rollback()
            expected = 1  # the holder's own attempt is left
        else:  # the step's commit resets the count; another worker counted since
            other.execute("UPDATE engine_run SET snapshot_version = snapshot_version + 1, "
                          "step_attempts = 1 WHERE id = %s", [run.pk])  # fmt: skip
            other.commit()
            expected = 1  # the other worker's attempt stays
        assert len(tried) == 1 and tried[0].wait(10)
    finally:
        other.close()
        with connection.cursor() as cursor:
            cursor.execute("SET lock_timeout = 0")
    assert Run.objects.get(pk=run.pk).step_attempts == expected
    assert leases.amend() == 0


@pytest.mark.django_db(transaction=True)
def test_marking_dispatches_sent_skips_one_a_worker_is_claiming() -> None:
    from django.db import connection

    if connection.vendor != "postgresql":
        pytest.skip("SQLite has no row locks to skip")
    import psycopg

    run = runs.create_run(resolve_graphs(fork_of(3)), "fork", {})
    rows = [Dispatch.objects.create(run=run, key=f"k{i}", command={}) for i in range(3)]
    settings = connection.settings_dict
    other = psycopg.connect(host=settings["HOST"], port=settings["PORT"],
                            user=settings["USER"], dbname=settings["NAME"])  # fmt: skip
    try:
        other.execute("UPDATE engine_dispatch SET claimed_by = 'host:2:other' WHERE id = %s",
                      [rows[1].pk])  # fmt: skip
        with connection.cursor() as cursor:
            cursor.execute("SET lock_timeout = '5s'")  # waiting would raise, not hang
        outbox.mark_published([row.pk for row in rows])
        other.commit()
    finally:
        other.close()
        with connection.cursor() as cursor:
            cursor.execute("SET lock_timeout = 0")
    stored = {d.key: d for d in Dispatch.objects.filter(run=run)}
    assert [stored[k].published_at is not None for k in ("k0", "k1", "k2")] == [True, False, True]
    assert stored["k1"].claimed_by == "host:2:other"  # claimed: never taken for unsent


@pytest.mark.django_db(transaction=True)
def test_a_wide_forks_chunk_finds_its_dispatches_by_id_not_among_all_open_ones() -> None:
    """A fork of 10,000 sends its actions in chunks of 313. Under plans cached while the
    outbox was young, claiming a chunk searched its 313 ids for each open dispatch (0.13 s)
    and closing it for each dispatch (0.17 s). The plans executed must hash the ids and
    read each row at most twice."""
    from django.db import connection

    if connection.vendor != "postgresql":
        pytest.skip("the one-statement claim and close are PostgreSQL's")
    from tests.django.plans import examined, executed_plans, parameter_arrays

    run = runs.create_run(resolve_graphs(fork_of(1)), "fork", {})
    now = timezone.now()

    def write_outbox(count: int, first: int) -> list[int]:
        rows = Dispatch.objects.bulk_create(
            Dispatch(run=run, key=f"k{first + i}", command={"key": f"k{first + i}"},
                     created_at=now)
            for i in range(count)
        )  # fmt: skip
        return [row.pk for row in rows]

    def chunk() -> None:
        for first in range(0, 12, 2):  # planned while the outbox holds a few rows
            outbox.claim(write_outbox(1, first))
            results.record_results([(records.DispatchRow(pk, run.pk, "k", {}),
                                     ActionCompleted(at=clock.now_text(), key=f"k{pk}"))
                                    for pk in write_outbox(1, first + 1)])  # fmt: skip
        ids = write_outbox(3000, 12)[::10]
        claimed, _ = outbox.claim(ids)
        assert [row.pk for row in claimed] == ids
        results.record_results([(row, ActionCompleted(at=clock.now_text(), key=row.key))
                                for row in claimed])  # fmt: skip

    plans = executed_plans(chunk)
    claims = [plan for text, plan in plans if "SET claimed_by" in text]
    closes = [plan for text, plan in plans if "SET completed_at" in text]
    for plan in (claims[-1], closes[-1]):
        assert parameter_arrays(plan) == []
        assert examined(plan, "Update") <= 2 * 3012
    assert Dispatch.objects.filter(completed_at__isnull=False).count() == 306


@pytest.mark.django_db(transaction=True)
def test_a_step_stamps_its_events_after_the_step_before_whatever_its_workers_clock_says() -> None:
    """The chaos oracle replays a run's events in `applied_at` order. A worker stopped
    between reading its clock and taking the run stamped its step 6 s before the step that
    ran in between, and the oracle replayed the two in the wrong order."""
    from django.db import connection, transaction

    run = runs.create_run(resolve_graphs(fork_of(1)), "fork", {})
    if connection.vendor != "postgresql":
        pytest.skip("SQLite steps one at a time, stamped by the one writer")
    step.advance(str(run.pk))
    first = PendingEvent.objects.get(run=run, key="start").applied_at
    assert first is not None
    PendingEvent.objects.create(run=run, key="late", event={"kind": "start", "at": "x"})
    stale = first - dt.timedelta(seconds=6)
    with clock.use_clock(ManualClock(stale)), transaction.atomic():
        locked, pending = inbox.lock_and_take(str(run.pk))
    assert locked is not None and [event.key for event in pending] == ["late"]
    late = PendingEvent.objects.get(run=run, key="late").applied_at
    assert late is not None and late > first
