"""Durable Braid on PostgreSQL, Redis and real worker processes, against raw Celery and psycopg.

Usage: python -m bench.durable [--quick] [--out bench/DURABLE.md] [--only fork,peer,...]

One run creates a fresh PostgreSQL database (dropped at the end), migrates it, loads the
demo flows and measures, in this order:

1. in this process, before any worker starts: database round trips per node step (the
   tasks' own code called from here under `connection.execute_wrapper`), the snapshot's size
   and cost against the number of frames, and the physical limit (raw psycopg 3 conditional
   UPDATEs against `engine.runtime.store.write_rows` at the same batch sizes), and a foreach
   of 1,000 approvals decided one by one through `runs.services.decide` (first vs last 100),
   and (`flatness`) one decision through the approvals API plus its step, and the inbox's
   first page, at 100, 1,000 and 10,000 open requests, alternated over four rounds;
2. on two `celery -A braid worker --concurrency=2` processes (one with `--beat`): runs/s of
   the demo flows without approvals, node steps/s, the latency from an action's completion
   to the next action's dispatch on a chain of noop tasks, and a wide fork into one gather;
3. with those stopped, on two `celery -A bench.durable worker --concurrency=2` processes: a
   raw Celery chord of as many no-op tasks and a raw Celery chain, over the same Redis.

With --only and --out, sections of their own (not the fork, chain or peer) replace theirs
in the earlier report, with their goal lines; the rest is kept as it was.

Runs are created in this process with `engine.runtime.runs.create_run`, whose transaction
publishes `advance_run` on commit. Every process started here is stopped at the end, also
on errors. This module is also the raw peer's Celery app (`app`), so it must stay importable
without Django.
"""

from __future__ import annotations

import argparse
import collections
import dataclasses
import datetime as dt
import itertools
import json
import math
import os
import platform
import secrets
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psycopg
from celery import Celery, chain, chord
from psycopg import waiting

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
PG = "postgres://postgres@127.0.0.1:5432"
REDIS = "redis://127.0.0.1:6379"
# Another checkout benchmarking on this machine sets other databases (e.g. /10 and /11).
BROKER_URL = os.environ.get("BRAID_BENCH_BROKER_URL", f"{REDIS}/13")
PEER_BACKEND_URL = os.environ.get("BRAID_BENCH_BACKEND_URL", f"{REDIS}/12")
PEER_QUEUE = "bench-peer"
FINISHED = ("completed", "failed", "cancelled")

# ---------------------------------------------------------------- the raw Celery peer

app = Celery("bench_peer", broker=BROKER_URL, backend=PEER_BACKEND_URL, set_as_current=False)
app.conf.update(
    task_default_queue=PEER_QUEUE,
    broker_connection_retry_on_startup=True,
    result_expires=3600,
    worker_hijack_root_logger=False,
)


@app.task(name="bench.peer.noop")
def peer_noop() -> None:
    """Do nothing: one task of the raw chord or chain."""


@app.task(name="bench.peer.gathered")
def peer_gathered(results: list[object]) -> int:
    """The chord's callback: count what the header returned."""
    return len(results)


# ---------------------------------------------------------------- plan and statistics


@dataclass(frozen=True, slots=True)
class Plan:
    """What one run measures and the time each measurement may take (warm-up included)."""

    quick: bool
    repetitions: int  # timed runs after the warm-up
    demo_runs: int  # runs per throughput repetition
    chain_tasks: int  # noop tasks in the latency chain
    fork_width: int  # branches of the wide fork, tasks of the raw chord
    wide_width: int  # one fork of this many against one chord of as many (0: skipped)
    peer_chain: int  # tasks of the raw Celery chain
    snapshot_widths: tuple[int, ...]
    foreach_items: int
    limit_rows: int  # rows per repetition of a batched write measurement
    budgets: dict[str, float]
    decisions: int = 1000  # approvals of the foreach decided one by one
    fork_repetitions: int = 9  # the fork and the chord: their ratio is a goal, and cheap
    flat_levels: tuple[int, ...] = (100, 1000, 10_000)  # open requests
    flat_rounds: int = 4  # rounds over the levels, up and down in turn
    flat_decisions: int = 40  # decisions per level and round (the first one untimed)
    flat_page_every: int = 8  # one read of the inbox page's limit=500 per this many decisions


FULL = Plan(
    quick=False,
    repetitions=5,
    demo_runs=200,
    chain_tasks=100,
    fork_width=1000,
    wide_width=10_000,
    peer_chain=100,
    snapshot_widths=(10, 100, 1000),
    foreach_items=100,
    limit_rows=3000,
    budgets={
        "round_trips": 40,
        "snapshots": 60,
        "limit": 50,
        "throughput": 110,
        "latency": 60,
        "fork": 200,
        "chord": 70,
        "chain": 40,
        "wide": 150,
    },
)
QUICK = Plan(
    quick=True,
    repetitions=5,
    demo_runs=40,
    chain_tasks=20,
    fork_width=200,
    wide_width=0,
    peer_chain=100,
    snapshot_widths=(10, 100),
    foreach_items=100,
    limit_rows=600,
    decisions=300,
    flat_levels=(100, 1000),
    flat_rounds=2,
    flat_decisions=20,
    budgets={
        "round_trips": 15,
        "snapshots": 15,
        "limit": 15,
        "throughput": 25,
        "latency": 15,
        "fork": 30,
        "chord": 15,
        "chain": 15,
        "wide": 0,
    },
)


@dataclass(frozen=True, slots=True)
class Spread:
    """Repeated measurements of one quantity: median, min and max."""

    values: tuple[float, ...]

    @property
    def median(self) -> float:
        return statistics.median(self.values) if self.values else float("nan")

    @property
    def low(self) -> float:
        return min(self.values) if self.values else float("nan")

    @property
    def high(self) -> float:
        return max(self.values) if self.values else float("nan")

    def text(self, digits: int = 1, unit: str = "") -> str:
        """Return `median (min-max, n=runs)`."""
        return (
            f"{self.median:,.{digits}f}{unit} ({self.low:,.{digits}f}-{self.high:,.{digits}f}, "
            f"n={len(self.values)})"
        )


def spread(values: Sequence[float]) -> Spread:
    """Return the spread of some values."""
    return Spread(tuple(values))


def percentile(values: Sequence[float], fraction: float) -> float:
    """Return the nearest-rank percentile of the values."""
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    # The rank is ceil(fraction x n): round(x + 0.5) rounded 99.5 to 100 (half to even), so
    # the p99 of 100 values was the largest.
    return ordered[min(len(ordered) - 1, max(0, math.ceil(fraction * len(ordered)) - 1))]


def repeat[T](
    run: Callable[[], T], plan: Plan, budget_s: float, warm_up: Callable[[], object] | None = None
) -> list[T]:
    """Warm up once, then run up to `plan.repetitions` times while the budget allows."""
    started = time.monotonic()
    (warm_up or run)()
    results: list[T] = []
    while len(results) < plan.repetitions:
        results.append(run())
        used = time.monotonic() - started
        if used + used / (len(results) + 1) > budget_s:
            break
    return results


class BenchError(Exception):
    """A measurement that could not be taken."""


# ---------------------------------------------------------------- processes


@dataclass
class Processes:
    """The processes this benchmark started, each in its own process group."""

    env: dict[str, str]
    logs: Path
    started: list[subprocess.Popen[bytes]] = field(default_factory=list)

    def start(self, name: str, command: list[str]) -> subprocess.Popen[bytes]:
        """Start a process logging to `<logs>/<name>.log`."""
        with (self.logs / f"{name}.log").open("wb") as log:
            process = subprocess.Popen(
                command,
                cwd=ROOT,
                env=self.env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        self.started.append(process)
        return process

    def wait_ready(self, name: str, process: subprocess.Popen[bytes], seconds: float = 90) -> None:
        """Wait until a Celery worker logs that it is ready."""
        log = self.logs / f"{name}.log"
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise BenchError(f"{name} exited with {process.returncode}:\n{log.read_text()}")
            if " ready." in log.read_text(errors="replace"):
                return
            time.sleep(0.2)
        raise BenchError(f"{name} was not ready within {seconds:.0f} s")

    def stop(self, process: subprocess.Popen[bytes]) -> None:
        """Stop one process and its children (TERM, then KILL after 20 s)."""
        if process.poll() is None:
            try:
                os.killpg(process.pid, signal.SIGTERM)
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
            except ProcessLookupError:
                pass
        if process in self.started:
            self.started.remove(process)

    def stop_all(self) -> None:
        """Stop every process still running."""
        for process in list(self.started):
            self.stop(process)


def worker_command(app_name: str, name: str, *extra: str) -> list[str]:
    """Return a `celery -A APP worker --concurrency=2` command line."""
    return [
        str(BIN / "celery"),
        "-A",
        app_name,
        "worker",
        f"--hostname={name}@%h",
        "--concurrency=2",
        "--loglevel=INFO",
        *extra,
    ]


def start_workers(
    procs: Processes, app_name: str, names: Sequence[str], extra: Sequence[Sequence[str]]
) -> list[subprocess.Popen[bytes]]:
    """Start workers and wait until each is ready."""
    started = [
        procs.start(n, worker_command(app_name, n, *e)) for n, e in zip(names, extra, strict=True)
    ]
    for name, process in zip(names, started, strict=True):
        procs.wait_ready(name, process)
    return started


def manage(env: dict[str, str], *args: str) -> float:
    """Run `manage.py ARGS` on the benchmark database; return its wall time."""
    started = time.perf_counter()
    result = subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    if result.returncode:
        raise BenchError(f"manage.py {' '.join(args)}:\n{result.stdout}{result.stderr}")
    return time.perf_counter() - started


# ---------------------------------------------------------------- databases


def admin_execute(sql: str) -> None:
    """Run one statement on the `postgres` database in autocommit mode."""
    with psycopg.connect(f"{PG}/postgres", autocommit=True) as conn:
        conn.execute(sql)


def flush_redis() -> None:
    """Empty the broker database and the peer's result database."""
    import redis

    for url in (BROKER_URL, PEER_BACKEND_URL):
        redis.Redis.from_url(url).flushdb()


def configure_django(env: dict[str, str]) -> None:
    """Point Django at the benchmark database and Redis, then set it up."""
    os.environ.update(env)
    os.environ["DJANGO_SETTINGS_MODULE"] = "braid.settings"
    os.environ["BRAID_LOG_LEVEL"] = "WARNING"
    import django

    django.setup()


def pg_counters(conn: psycopg.Connection[Any], name: str) -> dict[str, int]:
    """Return the database's commit and session counters (read ~1 s after the work)."""
    row = conn.execute(
        "SELECT xact_commit, sessions FROM pg_stat_database WHERE datname = %s", (name,)
    ).fetchone()
    assert row is not None
    return {"xact_commit": int(row[0]), "sessions": int(row[1])}


# ---------------------------------------------------------------- flow documents


def flow(name: str, nodes: list[dict[str, Any]], edges: list[dict[str, Any]]) -> dict[str, Any]:
    """Return a `braid.graph/1` document with an append field `log`."""
    return {
        "format": "braid.graph/1",
        "name": name,
        "state": {"log": {"reducer": "append"}},
        "nodes": [{"id": "start", "type": "start"}, *nodes, {"id": "end", "type": "end"}],
        "edges": edges,
    }


def noop(node_id: str, value: object = None) -> dict[str, Any]:
    """Return a task node calling the noop action (appending `value` to `log` when given)."""
    node: dict[str, Any] = {"id": node_id, "type": "task", "action": "noop"}
    if value is not None:
        node |= {"params": {"value": value}, "output": "log"}
    return node


def chain_doc(n: int) -> dict[str, Any]:
    """start -> t1 -> ... -> tN -> end, each a noop task."""
    ids = ["start", *[f"t{i}" for i in range(1, n + 1)], "end"]
    edges = [{"source": a, "target": b} for a, b in itertools.pairwise(ids)]
    return flow(f"chain-{n}", [noop(i) for i in ids[1:-1]], edges)


def fork_doc(n: int, appending: bool = True) -> dict[str, Any]:
    """start -> fork(b1..bN) -> one noop task per branch (appending [i], or writing nothing)
    -> gather -> end."""
    slots = [f"b{i}" for i in range(1, n + 1)]
    nodes = [
        {"id": "split", "type": "fork", "branches": slots},
        *[noop(f"t{i}", [i] if appending else None) for i in range(1, n + 1)],
        {"id": "join", "type": "gather", "slots": slots, "conflicts": "error"},
    ]
    edges = [{"source": "start", "target": "split"}, {"source": "join", "target": "end"}]
    for i, slot in enumerate(slots, 1):
        edges += [
            {"source": "split", "branch": slot, "target": f"t{i}"},
            {"source": f"t{i}", "target": "join", "slot": slot},
        ]
    return flow(f"fork-{n}", nodes, edges)


def foreach_doc(concurrency: int) -> dict[str, Any]:
    """A foreach over `input.items` whose body is one noop task appending the item."""
    nodes = [
        {
            "id": "each",
            "type": "foreach",
            "items": "input.items",
            "as": "item",
            "concurrency": concurrency,
        },
        noop("body", "${[item]}"),
    ]
    edges = [
        {"source": "start", "target": "each"},
        {"source": "each", "outcome": "item", "target": "body"},
        {"source": "body", "target": "each"},
        {"source": "each", "outcome": "done", "target": "end"},
    ]
    return flow(f"foreach-{concurrency}", nodes, edges)


DEMO_CASES: tuple[tuple[str, dict[str, Any]], ...] = (
    ("staged-gathers", {}),
    ("b-and-d-or-e", {"urgent": True}),
    ("a-risk-score", {"amount": 1000, "new_vendor": True}),
    ("vendor-payment", {"vendor": "V", "amount": 100, "new_vendor": False}),
)
_RESOLVED: dict[str, Any] = {}


def resolved(doc: dict[str, Any]) -> Any:
    """Validate a document once and return its graphs (validation is never timed)."""
    from runs.services import resolve_graphs

    key = json.dumps(doc, sort_keys=True)
    if key not in _RESOLVED:
        _RESOLVED[key] = resolve_graphs(doc)
    return _RESOLVED[key]


# ---------------------------------------------------------------- runs on the database


def start_run(graphs: Any, label: str, input_value: Any, version: Any = None) -> str:
    """Create a run; its transaction publishes advance_run on commit."""
    from engine.runtime import runs

    return str(runs.create_run(graphs, label, input_value, version).pk)


def wait_finished(
    ids: Sequence[str], seconds: float, on_poll: Callable[[], None] | None = None
) -> float:
    """Wait until every run finished; return the wall time (epoch s) of the last commit."""
    from django.db.models import Max

    from engine.models import Run

    runs = Run.objects.filter(pk__in=ids)
    deadline = time.monotonic() + seconds
    while (left := runs.exclude(status__in=FINISHED).count()) > 0:
        if time.monotonic() > deadline:
            raise BenchError(f"{left} of {len(ids)} runs unfinished after {seconds:.0f} s")
        if on_poll is not None:
            on_poll()
        time.sleep(0.05)
    statuses = collections.Counter(runs.values_list("status", flat=True))
    if set(statuses) != {"completed"}:
        errors = sorted(set(runs.exclude(status="completed").values_list("error", flat=True)))
        raise BenchError(f"runs did not all complete: {dict(statuses)}; errors: {errors[:3]}")
    end: dt.datetime = runs.aggregate(end=Max("updated_at"))["end"]
    return end.timestamp()


@dataclass(frozen=True, slots=True)
class RunCounts:
    """What a set of finished runs wrote."""

    node_rows: int
    node_completed: int
    steps: int  # advance commits that applied events
    events: int
    dispatches: int


def run_counts(ids: Sequence[str]) -> RunCounts:
    """Count node rows, node.completed events, steps, events and dispatches of runs."""
    from engine.models import Dispatch, NodeState, PendingEvent, TraceEvent

    events = PendingEvent.objects.filter(run_id__in=ids)
    return RunCounts(
        node_rows=NodeState.objects.filter(run_id__in=ids).count(),
        node_completed=TraceEvent.objects.filter(run_id__in=ids, event="node.completed").count(),
        steps=events.values("run_id", "applied_at").distinct().count(),
        events=events.count(),
        dispatches=Dispatch.objects.filter(run_id__in=ids).count(),
    )


# ---------------------------------------------------------------- round trips (in-process)


@dataclass
class QueryCount:
    """Statements and transactions seen on Django's connection, and Celery messages sent."""

    statements: int = 0
    executemany_rows: int = 0
    transactions: int = 0
    messages: int = 0
    round_trips: int = 0
    sql: list[str] = field(default_factory=list)

    def add(self, other: QueryCount) -> None:
        self.statements += other.statements
        self.executemany_rows += other.executemany_rows
        self.transactions += other.transactions
        self.messages += other.messages
        self.round_trips += other.round_trips

    def __call__(
        self, execute: Callable[..., Any], sql: str, params: Any, many: bool, context: Any
    ) -> Any:
        self.statements += 1
        if many:
            self.executemany_rows += len(params)
        self.sql.append(" ".join(sql.split())[:110] + (f"  [{len(params)} rows]" if many else ""))
        return execute(sql, params, many, context)


_COUNTING: list[QueryCount] = []
PRIVATE_COMMIT = "_commit"  # Django's hook around one COMMIT; django-stubs leave it out


def count_message(**_: Any) -> None:
    """before_task_publish receiver: count a message for the active counter."""
    if _COUNTING:
        _COUNTING[-1].messages += 1


@contextmanager
def counting(counter: QueryCount) -> Iterator[QueryCount]:
    """Count every statement, commit and published message inside the block.

    Blocks nest: what an inner block sees counts for the inner counter only.
    """
    from django.db import connections

    if _COUNTING:
        _COUNTING.append(counter)
        try:
            yield counter
        finally:
            _COUNTING.pop()
        return
    wrapper = connections["default"]
    original = getattr(wrapper, PRIVATE_COMMIT)

    def commit() -> None:
        _COUNTING[-1].transactions += 1
        original()

    def execute(*args: Any) -> Any:
        return _COUNTING[-1](*args)

    def wait(gen: Any, *args: Any, **kwargs: Any) -> Any:
        return real_wait(answers_awaited(gen), *args, **kwargs)

    real_wait = waiting.wait
    setattr(wrapper, PRIVATE_COMMIT, commit)
    waiting.wait = wait
    _COUNTING.append(counter)
    try:
        with wrapper.execute_wrapper(execute):
            yield counter
    finally:
        _COUNTING.pop()
        delattr(wrapper, PRIVATE_COMMIT)
        waiting.wait = real_wait


def answers_awaited(gen: Any) -> Any:
    """Pass a psycopg generator through, counting each time it waits for the server's
    answer (a read wait: psycopg asks for one only when no answer is buffered). That is a
    round trip; statements sent together in a pipeline wait once."""
    try:
        state = next(gen)
        while True:
            if state == waiting.Wait.R:
                _COUNTING[-1].round_trips += 1
            state = gen.send((yield state))
    except StopIteration as stop:
        return stop.value


def drive(run_id: str) -> dict[str, Any]:
    """Run one run to the end in this process, one action per task, counting each part.

    An action task advances the run itself after recording its result; those steps count
    as steps, the rest of the task as the action.
    """
    from engine import tasks
    from engine.models import Dispatch
    from engine.runtime import results, step

    steps, actions = QueryCount(), QueryCount()
    first_sql: list[list[str]] = []
    real_advance = step.advance

    def counted_advance(run_id: str, take: Any = None, counted: bool = False) -> int:
        step = QueryCount()
        with counting(step):
            applied = real_advance(run_id, take, counted)
        if applied:
            steps.add(step)
            first_sql.append(step.sql)
        return applied

    def counted_recording(dispatch: Any, event: Any, take: Any) -> None:
        step = QueryCount()
        with counting(step):
            real_recording(dispatch, event, take)
        steps.add(step)
        first_sql.append(step.sql)

    real_recording = results.record_and_advance
    step.advance = counted_advance
    results.record_and_advance = counted_recording
    try:
        for _ in range(10_000):
            applied = step.advance(run_id)
            open_ids = list(
                Dispatch.objects.filter(run_id=run_id, completed_at=None)
                .order_by("id")
                .values_list("pk", flat=True)
            )
            if not applied and not open_ids:
                break
            for dispatch_id in open_ids:
                with counting(actions):
                    tasks.run_actions([dispatch_id])
    finally:
        step.advance = real_advance
        results.record_and_advance = real_recording
    return {
        "steps": steps,
        "actions": actions,
        "advance_calls": len(first_sql),
        "sql": first_sql[len(first_sql) // 2] if first_sql else [],
    }


def round_trip_case(
    label: str, doc: dict[str, Any], input_value: Any, version: Any = None
) -> dict[str, Any]:
    """Create and drive one run; return its counts per node step."""
    graphs = resolved(doc)
    create = QueryCount()
    with counting(create):
        run_id = start_run(graphs, label, input_value, version)
    driven = drive(run_id)
    ended_completed(run_id, label)
    counts = run_counts([run_id])
    return {"label": label, "create": create, "counts": counts, **driven}


def measure_round_trips(plan: Plan) -> dict[str, Any]:
    """Round trips per node step for the demo flows, a chain and a fork, driven here."""
    from celery.signals import before_task_publish

    from runs.services import latest_version

    before_task_publish.connect(count_message, weak=False)
    try:
        cases = []
        for slug, input_value in DEMO_CASES:
            version = latest_version(slug)
            cases.append(round_trip_case(slug, version.graph, input_value, version))
        cases.append(round_trip_case("chain of 20 noop tasks", chain_doc(20), {}))
        cases.append(round_trip_case("fork of 100 noop tasks", fork_doc(100), {}))
    finally:
        before_task_publish.disconnect(count_message)
    return {"cases": cases}


# ---------------------------------------------------------------- decisions (in-process)

DECISION_GOAL = 1.5  # the last tenth of the decisions may cost at most this times the first


def approvals_doc(n: int) -> dict[str, Any]:
    """A foreach over `input.items`, all at once, whose body is one approval by finance."""
    nodes: list[dict[str, Any]] = [
        {"id": "each", "type": "foreach", "items": "input.items", "as": "item",
         "concurrency": n},
        {"id": "ask", "type": "approval", "groups": ["finance"], "policy": "any",
         "title": "Item ${string(item)}"},
    ]  # fmt: skip
    edges = [
        {"source": "start", "target": "each"},
        {"source": "each", "outcome": "item", "target": "ask"},
        {"source": "ask", "outcome": "approved", "target": "each"},
        {"source": "each", "outcome": "done", "target": "end"},
    ]
    return flow(f"approvals-{n}", nodes, edges)


def decider() -> Any:
    """Return a user of the finance group (the demo's, or one made here)."""
    from django.contrib.auth.models import Group, User

    found = User.objects.filter(groups__name="finance", is_active=True).first()
    if found is not None:
        return found
    user = User.objects.create(username="bench-finance")
    user.groups.add(Group.objects.get_or_create(name="finance")[0])
    return user


def opened_approvals(n: int) -> tuple[str, list[str], float]:
    """Start a foreach of N approvals and take its first step, which opens all of them.

    Return the run's id, the execution ids of its open approvals in the order they
    opened, and the seconds the start and the first step took.
    """
    from approvals.models import ApprovalRequest, ApprovalStatus
    from engine.runtime import step

    started = time.perf_counter()
    run_id = start_run(resolved(approvals_doc(n)), f"approvals-{n}", {"items": list(range(n))})
    step.advance(run_id)
    opened_s = time.perf_counter() - started
    open_ids = ApprovalRequest.objects.filter(run_id=run_id, status=ApprovalStatus.OPEN)
    eids = list(open_ids.order_by("id").values_list("execution_id", flat=True))
    if len(eids) != n:
        raise BenchError(f"{len(eids)} approvals opened, not {n}")
    return run_id, eids, opened_s


def ended_completed(run_id: str, what: str) -> None:
    """Raise BenchError unless the run named by `what` has completed."""
    from engine.models import Run

    status = Run.objects.get(pk=run_id).status
    if status != "completed":
        raise BenchError(f"{what} ended {status}")


def measure_decisions(plan: Plan) -> dict[str, Any]:
    """A foreach of N approvals, decided one by one through the service function.

    Each decision is `runs.services.decide` (the API's and the CLI's path) and then the
    step a worker would take, `engine.runtime.step.advance`, timed together in this process.
    """
    from engine.core.events import Decision
    from engine.runtime import step
    from runs import services

    n, user = plan.decisions, decider()
    run_id, eids, opened_s = opened_approvals(n)
    times = []
    for eid in eids:
        begun = time.perf_counter()
        services.decide(run_id, "ask", user, Decision.APPROVE, execution_id=eid)
        step.advance(run_id)
        times.append((time.perf_counter() - begun) * 1e3)
    ended_completed(run_id, f"the run of {n} approvals")
    tenth = max(1, n // 10)
    first, last = sum(times[:tenth]), sum(times[-tenth:])
    # The goal is the issue's: the cost (sum) of the last tenth against the first. The
    # medians are shown beside it: one busy second of a shared machine moves a sum of 100
    # decisions, not their median.
    typical = statistics.median(times[-tenth:]) / statistics.median(times[:tenth])
    return {"n": n, "tenth": tenth, "first_ms": first, "last_ms": last, "ratio": last / first,
            "first_median_ms": statistics.median(times[:tenth]),
            "last_median_ms": statistics.median(times[-tenth:]), "typical": typical,
            "median_ms": statistics.median(times), "opened_s": opened_s,
            "total_s": sum(times) / 1e3}  # fmt: skip


def decisions_table(part: dict[str, Any]) -> list[str]:
    """Return the table of the decisions measurement."""
    tenth = part["tenth"]
    return [
        f"| approvals | open all (create + first step) | first {tenth} decisions | last "
        f"{tenth} decisions | last ÷ first | median of the first {tenth} → last {tenth} | "
        "median per decision | all decisions |",
        "|---|---|---|---|---|---|---|---|",
        f"| {part['n']:,} | {part['opened_s']:.2f} s | {part['first_ms']:,.0f} ms | "
        f"{part['last_ms']:,.0f} ms | {part['ratio']:.2f}x | {part['first_median_ms']:.1f} → "
        f"{part['last_median_ms']:.1f} ms ({part['typical']:.2f}x) | "
        f"{part['median_ms']:.1f} ms | {part['total_s']:.1f} s |",
    ]


def decisions_goal(part: dict[str, Any]) -> str:
    """Return the goal line of the decisions measurement."""
    met = "MET" if part["ratio"] <= DECISION_GOAL else "MISSED"
    return (
        f"- **{met}** — foreach of {part['n']:,} approvals decided one by one: the last "
        f"{part['tenth']} decisions cost {part['last_ms']:,.0f} ms vs the first "
        f"{part['tenth']} {part['first_ms']:,.0f} ms ({part['ratio']:.2f}x; goal ≤ "
        f"{DECISION_GOAL}x); a typical decision (median) {part['last_median_ms']:.1f} vs "
        f"{part['first_median_ms']:.1f} ms ({part['typical']:.2f}x)."
    )


def measure_workers(plan: Plan) -> dict[str, Any]:
    """The same foreach of N approvals, its decisions landing on three workers in turn.

    Each worker process keeps its own cached states (`engine.runtime.state_cache._STATES`, swapped
    here), so every step finds its state two versions old and catches up from the parts
    the two steps before it changed. Every tenth decision lands on a worker that holds
    nothing of the run (its cache emptied): that step reads every part, as any step of a
    stale cache did before catching up was built.
    """
    import collections

    from engine.core.events import Decision
    from engine.runtime import state_cache, step
    from runs import services

    n, user = plan.decisions, decider()
    run_id, eids, _ = opened_approvals(n)
    workers = [collections.OrderedDict[str, Any]() for _ in range(3)]
    workers[0].update(state_cache._STATES)  # the process that opened them holds the run
    kept, caught_up = state_cache._STATES, state_cache.caught_up
    counted = {"caught": 0}

    def counting(run: Any, version: int, state: Any) -> bool:
        done = caught_up(run, version, state)
        counted["caught"] += done
        return done

    warm: list[tuple[int, float]] = []
    cold: list[tuple[int, float]] = []
    state_cache.caught_up = counting
    try:
        for index, eid in enumerate(eids):
            state_cache._STATES = workers[index % 3]
            empty = index % 10 == 9
            if empty:
                state_cache._STATES.clear()
            begun = time.perf_counter()
            services.decide(run_id, "ask", user, Decision.APPROVE, execution_id=eid)
            step.advance(run_id)
            elapsed = (time.perf_counter() - begun) * 1e3
            (cold if empty else warm).append((index, elapsed))
    finally:
        state_cache._STATES, state_cache.caught_up = kept, caught_up
    ended_completed(run_id, f"the run of {n} approvals on three workers")
    tenth = max(1, n // 10)

    def median_of(times: list[tuple[int, float]], last: bool) -> float:
        picked = [t for i, t in times if (i >= n - tenth if last else i < tenth)]
        return statistics.median(picked) if picked else float("nan")

    return {"n": n, "tenth": tenth, "caught": counted["caught"], "steps": len(eids),
            "warm_first": median_of(warm, False), "warm_last": median_of(warm, True),
            "cold_first": median_of(cold, False), "cold_last": median_of(cold, True),
            "warm_median": statistics.median(t for _, t in warm),
            "cold_median": statistics.median(t for _, t in cold)}  # fmt: skip


def workers_table(part: dict[str, Any]) -> list[str]:
    """Return the table of the decisions on three workers."""
    tenth = part["tenth"]
    return [
        f"| approvals | steps that caught up | caught up: median, first {tenth} → last {tenth} "
        f"| read every part: median, first {tenth} → last {tenth} | read every part ÷ caught "
        "up |",
        "|---|---|---|---|---|",
        f"| {part['n']:,} | {part['caught']:,} of {part['steps']:,} | "
        f"{part['warm_median']:.1f} ms, {part['warm_first']:.1f} → {part['warm_last']:.1f} ms | "
        f"{part['cold_median']:.1f} ms, {part['cold_first']:.1f} → {part['cold_last']:.1f} ms | "
        f"{part['cold_median'] / part['warm_median']:.2f}x |",
    ]


# ---------------------------------------------------------------- flatness (in-process)

FLAT_GOAL = 1.1  # a decision (and an inbox read) at the most open requests, at most this
# times its cost at the fewest
FLAT_INBOX = "/api/approvals/"  # the inbox list's first page (the API's page size, 50)
FLAT_PAGE = "/api/approvals/?limit=500"  # what the inbox page itself asks for
FLATNESS_TITLE = "Approvals flat across open requests"


def flat_doc() -> dict[str, Any]:
    """start -> one approval by finance (any one member) -> end: a run waiting on a person."""
    nodes = [{"id": "ask", "type": "approval", "groups": ["finance"], "policy": "any",
              "title": "Invoice ${string(input.n)}"}]  # fmt: skip
    edges = [
        {"source": "start", "target": "ask"},
        {"source": "ask", "outcome": "approved", "target": "end"},
    ]
    return flow("flat-approval", nodes, edges)


def level_order(levels: Sequence[int], rounds: int) -> list[tuple[int, int]]:
    """Return each level with its round, in the order measured: up the levels in odd
    rounds, down in even ones (100, 1,000, 10,000, 10,000, 1,000, 100, ...), so a drift of
    the machine during the run reaches every level alike."""
    order = []
    for number in range(1, rounds + 1):
        walk = levels if number % 2 else list(reversed(levels))
        order += [(level, number) for level in walk]
    return order


def spread_picks(size: int, count: int) -> list[int]:
    """Return `count` distinct indices into `size` items, evenly spread (the middle of each
    of `count` equal stretches); all of them when there are fewer items."""
    if count >= size:
        return list(range(size))
    return [(2 * i + 1) * size // (2 * count) for i in range(count)]


def open_flat_runs(count: int) -> list[str]:
    """Start `count` runs of the flat flow and take each one's first step, which opens its
    approval request; return their ids in the order started."""
    from engine.runtime import step

    graphs = resolved(flat_doc())
    ids = []
    with unsynced_commits():
        for n in range(count):
            run_id = start_run(graphs, "flat", {"n": n})
            step.advance(run_id)
            ids.append(run_id)
    return ids


@contextmanager
def unsynced_commits() -> Iterator[None]:
    """Let this connection's commits return before their WAL reaches the disk, for the
    untimed building of a level (on a shared disk each commit waited ~8 ms for its fsync)."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SET synchronous_commit TO off")
    try:
        yield
    finally:
        with connection.cursor() as cursor:
            cursor.execute("SET synchronous_commit TO on")


def open_request_ids(run_ids: Sequence[str]) -> dict[str, int]:
    """Return the open request of each run, by run id; raise BenchError when one is missing."""
    from approvals.models import ApprovalRequest, ApprovalStatus

    found = ApprovalRequest.objects.filter(run_id__in=run_ids, status=ApprovalStatus.OPEN)
    pairs = {str(run): pk for run, pk in found.values_list("run_id", "pk")}
    if len(pairs) != len(run_ids):
        raise BenchError(f"{len(run_ids) - len(pairs)} of {len(run_ids)} runs have no open request")
    return pairs


def count_open() -> int:
    """Return how many approval requests are open in the whole database."""
    from approvals.models import ApprovalRequest, ApprovalStatus

    return ApprovalRequest.objects.filter(status=ApprovalStatus.OPEN).count()


def get_ok(client: Any, url: str) -> float:
    """GET a URL through Django's handler in this process; return the milliseconds."""
    begun = time.perf_counter()
    response = client.get(url, secure=True)
    elapsed = (time.perf_counter() - begun) * 1e3
    if response.status_code != 200:
        raise BenchError(f"GET {url} answered {response.status_code}: {response.content[:200]!r}")
    return elapsed


def decide_and_step(client: Any, run_id: str, request_id: int) -> float:
    """POST a decision to the API, then take the step a worker would; return the milliseconds."""
    from engine.runtime import step

    begun = time.perf_counter()
    response = client.post(f"/api/approvals/{request_id}/decide/", {"decision": "approve"},
                           content_type="application/json", secure=True)  # fmt: skip
    step.advance(run_id)
    elapsed = (time.perf_counter() - begun) * 1e3
    if response.status_code != 202:
        raise BenchError(f"deciding request {request_id} answered {response.status_code}: "
                         f"{response.content[:200]!r}")  # fmt: skip
    return elapsed


def queries_of(run: Callable[[], object]) -> int:
    """Return how many SQL statements one call sends."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as captured:
        run()
    return len(captured)


def flat_sample(client: Any, opened: list[str], plan: Plan) -> dict[str, Any]:
    """Decide requests spread over the open ones, each followed by an inbox read; return
    the timings and the runs decided (their requests are closed now)."""
    from engine.models import Run

    picked = [opened[i] for i in spread_picks(len(opened), plan.flat_decisions)]
    requests = open_request_ids(picked)
    decide_ms, inbox_ms, page_ms = [], [], []
    queries = {"decision": queries_of(lambda: decide_and_step(client, picked[0],
                                                              requests[picked[0]])),
               "inbox": queries_of(lambda: get_ok(client, FLAT_INBOX))}  # fmt: skip
    for index, run_id in enumerate(picked[1:]):
        decide_ms.append(decide_and_step(client, run_id, requests[run_id]))
        inbox_ms.append(get_ok(client, FLAT_INBOX))
        if index % plan.flat_page_every == 0:
            page_ms.append(get_ok(client, FLAT_PAGE))
    count_ms = inbox_count_ms(plan.flat_decisions // 4)
    done = Run.objects.filter(pk__in=picked, status="completed").count()
    if done != len(picked):
        raise BenchError(f"{len(picked) - done} of {len(picked)} decided runs did not complete")
    return {"decide_ms": decide_ms, "inbox_ms": inbox_ms, "page_ms": page_ms,
            "count_ms": count_ms, "queries": queries, "decided": picked}  # fmt: skip


def inbox_count_ms(times: int) -> list[float]:
    """Time the inbox's count of the finance user's open requests alone (the pagination's
    `COUNT(*)`, which reads every request it counts), `times` times."""
    from approvals import services

    user, samples = decider(), []
    for _ in range(times):
        begun = time.perf_counter()
        services.open_requests(user).count()
        samples.append((time.perf_counter() - begun) * 1e3)
    return samples


def set_level(population: Sequence[str], level: int) -> tuple[list[str], float]:
    """Leave the requests of `level` runs spread over the population open and park the
    rest; return the open runs and the seconds it took.

    Parking closes a request with a plain UPDATE of its status, and unparking opens it
    again the same way: its run still waits, and no inbox, count or decision sees it
    meanwhile. Switching levels so costs two statements, which lets the rounds alternate
    the levels; the parked requests stay in the table, as closed ones do in production.
    """
    from approvals.models import ApprovalRequest, ApprovalStatus

    started = time.perf_counter()
    opened = [population[i] for i in spread_picks(len(population), level)]
    parked = sorted(set(population) - set(opened))
    ApprovalRequest.objects.filter(run_id__in=opened).update(status=ApprovalStatus.OPEN)
    ApprovalRequest.objects.filter(run_id__in=parked).update(status=ApprovalStatus.CLOSED)
    if (found := count_open()) != level:
        raise BenchError(f"{found:,} requests open, not {level:,}")
    moved = time.perf_counter() - started
    analyze_approvals()
    return opened, moved


def analyze_approvals() -> None:
    """Refresh the planner's statistics of the tables the inbox reads, as autovacuum does
    after enough rows change: a level built in seconds is otherwise planned as if it held
    the last level's rows (the inbox then sorted every open request for its first page)."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("ANALYZE approvals_approvalrequest, engine_run")


def measure_flatness(plan: Plan) -> dict[str, Any]:
    """One decision and one inbox read against the number of open requests, the levels
    alternated round by round (level_order).

    The population holds as many waiting runs as the highest level, built once; a level
    leaves that many of their requests open and parks the rest (set_level). A decision is
    `POST /api/approvals/<id>/decide/` through Django's test client, logged in as a finance
    user, and the step a worker would take next (`step.advance`), timed together; the
    inbox read is the list API's first page, right after each decision. The decided runs
    are replaced by as many new waiting ones (untimed) before the next level.
    """
    from django.test import Client

    load_before = os.getloadavg()
    client = Client(HTTP_HOST="127.0.0.1")
    client.force_login(decider())
    population = open_flat_runs(max(plan.flat_levels))
    passes = []
    print(f"   load {' '.join(f'{x:.2f}' for x in load_before)}", flush=True)
    for level, number in level_order(plan.flat_levels, plan.flat_rounds):
        opened, moved_s = set_level(population, level)
        sample = flat_sample(client, opened, plan)
        decided = set(sample.pop("decided"))
        population = [run_id for run_id in population if run_id not in decided]
        population += open_flat_runs(len(decided))
        passes.append({"level": level, "pass": f"round {number}", "moved_s": moved_s, **sample})
        print(f"   {level:,} round {number}: decision "
              f"{statistics.median(sample['decide_ms']):.1f} ms, inbox "
              f"{statistics.median(sample['inbox_ms']):.1f} ms", flush=True)  # fmt: skip
    return {"passes": passes, "load_before": load_before, "load_after": os.getloadavg(),
            "at": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M"),
            "decisions": plan.flat_decisions, "commit": machine_facts()["commit"]}  # fmt: skip


def pooled(passes: Sequence[dict[str, Any]], key: str) -> dict[int, list[float]]:
    """Return every sample of `key` by level, every round together."""
    found: dict[int, list[float]] = {}
    for one in passes:
        found.setdefault(one["level"], []).extend(one[key])
    return found


def median_text(values: Sequence[float]) -> str:
    """Return `median ms [95% bootstrap interval] (n)`."""
    from bench.measure import bootstrap_interval

    interval = bootstrap_interval(values)
    shown = f" [{interval[0]:.1f}-{interval[1]:.1f}]" if interval else ""
    return f"{statistics.median(values):.1f} ms{shown} (n={len(values)})"


def flat_ratio(passes: Sequence[dict[str, Any]], key: str) -> tuple[int, float, int, float]:
    """Return the fewest open requests and the median there, the most and the median there
    (all the samples of a level, every round)."""
    by_level = pooled(passes, key)
    low, high = min(by_level), max(by_level)
    return low, statistics.median(by_level[low]), high, statistics.median(by_level[high])


def flatness_table(part: dict[str, Any]) -> list[str]:
    """Return the tables of the flatness measurement."""
    lines = [
        f"Measured on {part['at']} UTC at commit {part['commit']}; load average before "
        f"{' '.join(f'{x:.2f}' for x in part['load_before'])}, after "
        f"{' '.join(f'{x:.2f}' for x in part['load_after'])}.",
        "",
        "| open requests | round | switching to it | one decision (API + step) | inbox first page "
        "(50) | its `COUNT(*)` alone | the inbox page's read (`limit=500`) | statements per "
        "decision, per inbox read |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for one in part["passes"]:
        lines.append(
            f"| {one['level']:,} | {one['pass']} | {one['moved_s']:.1f} s | "
            f"{median_text(one['decide_ms'])} | {median_text(one['inbox_ms'])} | "
            f"{median_text(one['count_ms'])} | {median_text(one['page_ms'])} | "
            f"{one['queries']['decision']}, {one['queries']['inbox']} |"
        )
    lines += ["", "| open requests | one decision, every round | inbox first page, every round |",
              "|---|---|---|"]  # fmt: skip
    decisions, reads = pooled(part["passes"], "decide_ms"), pooled(part["passes"], "inbox_ms")
    for level in sorted(decisions):
        lines.append(f"| {level:,} | {median_text(decisions[level])} | "
                     f"{median_text(reads[level])} |")  # fmt: skip
    return lines


def flatness_goals(part: dict[str, Any]) -> list[str]:
    """Return the goal lines of the flatness measurement."""
    lines = []
    for key, what in (("decide_ms", "one decision (API + step)"),
                      ("inbox_ms", "the inbox list's first page")):  # fmt: skip
        low, at_low, high, at_high = flat_ratio(part["passes"], key)
        ratio = at_high / at_low
        lines.append(
            f"- **{verdict(ratio <= FLAT_GOAL)}** — flat across open requests, {what}: median "
            f"{at_high:.1f} ms at {high:,} open vs {at_low:.1f} ms at {low:,} ({ratio:.2f}x; "
            f"goal ≤ {FLAT_GOAL}x)."
        )
    return lines


# ---------------------------------------------------------------- snapshots (in-process)


def timed_ms(run: Callable[[], object], times: int = 5) -> float:
    """Return the median wall time of a call, in milliseconds."""
    samples = []
    for _ in range(times):
        started = time.perf_counter()
        run()
        samples.append((time.perf_counter() - started) * 1e3)
    return statistics.median(samples)


def half_done(graphs: Any, input_value: Any) -> tuple[Any, list[Any]]:
    """Start a run in the pure core and complete half of its first actions."""
    from engine.actions import ACTIONS
    from engine.core.events import RunAction, Start
    from engine.core.runtime import perform
    from engine.core.scheduler import step
    from engine.core.state import RunState
    from engine.runtime.clock import now_text

    state = RunState(run_id=str(uuid.uuid4()), graphs=graphs)
    state, commands = step(state, Start(at=now_text(), input=input_value))
    actions = [c for c in commands if isinstance(c, RunAction)]
    results = [perform(ACTIONS, a, state.run_id, now_text) for a in actions]
    for event in results[: len(results) // 2]:
        state, _ = step(state, event)
    return state, results[len(results) // 2 :]


def changed_entities(before: dict[str, Any], after: dict[str, Any]) -> dict[str, int]:
    """Count what one step changed, as a row-per-entity design would have to write it."""

    def keyed(items: list[dict[str, Any]]) -> dict[Any, str]:
        return {item["id"]: json.dumps(item, sort_keys=True) for item in items}

    counts = {}
    for part in ("frames", "lineages"):
        old, new = keyed(before[part]), keyed(after[part])
        counts[part] = sum(old.get(k) != v for k, v in new.items()) + len(old.keys() - new)
    old_tokens = {
        (g, c, s)
        for g, (_, b) in before["gathers"].items()
        for c, slots in b.items()
        for s in slots
    }
    new_tokens = {
        (g, c, s) for g, (_, b) in after["gathers"].items() for c, slots in b.items() for s in slots
    }
    counts["gather tokens"] = len(old_tokens ^ new_tokens)
    counts["waits"] = len(set(before["waits"].items()) ^ set(after["waits"].items()))
    counts["ready queue"] = int(before["ready"] != after["ready"])
    return counts


def snapshot_case(label: str, doc: dict[str, Any], input_value: Any) -> dict[str, Any]:
    """Size and cost of the snapshot with half of a run's first actions completed."""
    from django.db import transaction

    from engine.core.graph import Graph
    from engine.core.scheduler import step
    from engine.core.state import RunState
    from engine.models import Run
    from engine.runtime.store import DjangoStore

    graphs = resolved(doc)
    state, rest = half_done(graphs, input_value)
    snapshot = state.to_json()
    text = json.dumps(snapshot)
    stored_graphs = {key: g.to_json() for key, g in graphs.items()}
    run_id = str(uuid.uuid4())
    DjangoStore().create(run_id, label, input_value, stored_graphs)

    def save() -> None:
        with transaction.atomic():
            Run.objects.filter(pk=run_id).update(snapshot=snapshot)

    def one_step() -> dict[str, Any]:
        copy = RunState.from_json(snapshot, graphs)
        started = time.perf_counter()
        step(copy, rest[0])
        elapsed = time.perf_counter() - started
        return {"ms": elapsed * 1e3, "after": copy.to_json()}

    steps = [one_step() for _ in range(5)]
    return {
        "label": label,
        "frames": len(state.frames),
        "lineages": len(state.lineages.all),
        "tokens": sum(len(list(b.pending())) for b in state.gathers.values()),
        "bytes": len(text),
        "graph_bytes": len(json.dumps(stored_graphs)),
        "to_json_ms": timed_ms(state.to_json),
        "dumps_ms": timed_ms(lambda: json.dumps(snapshot)),
        "from_json_ms": timed_ms(lambda: RunState.from_json(snapshot, graphs)),
        "graph_decode_ms": timed_ms(lambda: [Graph.from_json(d) for d in stored_graphs.values()]),
        "load_ms": timed_ms(lambda: Run.objects.get(pk=run_id)),
        "save_ms": timed_ms(save),
        "step_ms": statistics.median(s["ms"] for s in steps),
        "changed": changed_entities(snapshot, steps[0]["after"]),
    }


def measure_snapshots(plan: Plan) -> dict[str, Any]:
    """The snapshot against the number of frames: forks and a foreach."""
    cases = [snapshot_case(f"fork of {n}", fork_doc(n), {}) for n in plan.snapshot_widths]
    items = plan.foreach_items
    cases.append(
        snapshot_case(
            f"foreach of {items} (concurrency {items})",
            foreach_doc(items),
            {"items": list(range(items))},
        )
    )
    cases.append(snapshot_case("chain of 100", chain_doc(100), {}))
    return {"cases": cases, "rtt_ms": round_trip_ms()}


def round_trip_ms() -> float:
    """Return the median time of one `SELECT 1` on Django's connection (a bare round trip)."""
    from django.db import connection

    with connection.cursor() as cursor:

        def ping() -> None:
            cursor.execute("SELECT 1")
            cursor.fetchone()

        ping()
        return statistics.median(timed_ms(ping, 20) for _ in range(5))


# ---------------------------------------------------------------- physical limit


RAW_UPDATE = (
    "UPDATE bench_nodes SET status = %s, status_detail = %s "
    "WHERE run_id = %s AND node_id = %s AND status_detail <= %s"
)
RAW_UNNEST = (
    "UPDATE bench_nodes AS n SET status = u.status, status_detail = u.detail "
    "FROM unnest(%s::text[], %s::text[], %s::text[]) AS u(node_id, status, detail) "
    "WHERE n.run_id = %s AND n.node_id = u.node_id AND n.status_detail <= u.detail"
)


@dataclass(frozen=True, slots=True)
class LimitRows:
    """The rows every write mode writes: the same nodes, ids and statuses."""

    run_id: str
    nodes: tuple[str, ...]
    execution_ids: tuple[str, ...]
    details: tuple[str, ...]


def limit_rows(n: int) -> LimitRows:
    """Return n node rows with fork-branch execution ids and their comparable form."""
    from engine.core.execution_ids import ExecutionId

    eids = tuple(f"root:1:split.b{i}:1" for i in range(n))
    return LimitRows(
        str(uuid.uuid4()),
        tuple(f"t{i}" for i in range(n)),
        eids,
        tuple(ExecutionId.parse(e).encode() for e in eids),
    )


def raw_setup(conn: psycopg.Connection[Any], rows: LimitRows) -> None:
    """Create the raw table and its rows."""
    conn.execute("DROP TABLE IF EXISTS bench_nodes")
    conn.execute(
        "CREATE TABLE bench_nodes (run_id uuid, node_id text, status text, "
        'status_detail text COLLATE "C", PRIMARY KEY (run_id, node_id))'
    )
    with conn.cursor() as cur:
        cur.executemany(
            "INSERT INTO bench_nodes VALUES (%s, %s, 'running', %s)",
            [(rows.run_id, n, d) for n, d in zip(rows.nodes, rows.details, strict=True)],
        )


def raw_params(rows: LimitRows, start: int, stop: int) -> list[tuple[str, ...]]:
    """Parameters of the raw conditional UPDATE for rows [start, stop)."""
    return [
        ("running", rows.details[i], rows.run_id, rows.nodes[i], rows.details[i])
        for i in range(start, stop)
    ]


def raw_writer(
    conn: psycopg.Connection[Any], rows: LimitRows, mode: str, batch: int
) -> Callable[[int], None]:
    """Return a function writing the first n rows in one raw mode."""
    cur = conn.cursor()

    def write(n: int) -> None:
        for start in range(0, n, batch):
            params = raw_params(rows, start, min(n, start + batch))
            if mode == "autocommit":
                cur.execute(RAW_UPDATE, params[0])
            elif mode == "executemany":
                with conn.transaction():
                    cur.executemany(RAW_UPDATE, params)
            elif mode == "pipeline":
                with conn.transaction(), conn.pipeline():
                    for p in params:
                        cur.execute(RAW_UPDATE, p)
            else:  # one UPDATE ... FROM unnest of the whole batch
                with conn.transaction():
                    cur.execute(
                        RAW_UNNEST,
                        (
                            [p[3] for p in params],
                            [p[0] for p in params],
                            [p[1] for p in params],
                            rows.run_id,
                        ),
                    )

    return write


def braid_writer(
    rows: LimitRows, batch: int, raw_sql: bool = False, conn: psycopg.Connection[Any] | None = None
) -> Callable[[int], None]:
    """Return a function writing the first n rows through Braid's fenced upsert."""
    from django.db import connection, transaction
    from django.utils import timezone

    from engine.core.events import RowStatus, WriteRow
    from engine.runtime.backends import backend
    from engine.runtime.fence import fenced_upsert_sql
    from engine.runtime.store import write_rows

    writes = [
        WriteRow(node=n, status=RowStatus.RUNNING, execution_id=e)
        for n, e in zip(rows.nodes, rows.execution_ids, strict=True)
    ]
    sql = fenced_upsert_sql(1, backend().collate)
    connection.ensure_connection()

    def write(n: int) -> None:
        for start in range(0, n, batch):
            part = writes[start : min(n, start + batch)]
            if raw_sql and conn is not None:
                now = timezone.now()
                params = [
                    (
                        rows.run_id,
                        w.node,
                        w.status.value,
                        rows.details[start + i],
                        w.execution_id,
                        "null",
                        1,
                        now,
                    )
                    for i, w in enumerate(part)
                ]
                with conn.transaction(), conn.cursor() as cur:
                    cur.executemany(sql, params)
            elif batch == 1:
                write_rows(rows.run_id, part)
            else:
                with transaction.atomic():
                    write_rows(rows.run_id, part)

    return write


LIMIT_ROUNDS = 9  # rounds of the write paths when the budget allows (at least the plan's)


def rows_per_s(
    cases: Sequence[tuple[str, Callable[[int], None], int]], plan: Plan, budget_s: float
) -> dict[str, Spread]:
    """Warm every write path up, then time them in turns, one repetition of each per round.

    Taking the paths in turns puts a passing disturbance of the machine (a checkpoint, an
    autovacuum, a neighbour's burst) on all of them alike instead of on whichever path
    happened to be measured then: the ratios compare like with like.
    """
    for _label, write, n in cases:
        write(n)
    values: dict[str, list[float]] = {label: [] for label, _write, _n in cases}
    started = time.monotonic()
    for done in range(1, LIMIT_ROUNDS + 1):
        for label, write, n in cases:
            begun = time.perf_counter()
            write(n)
            values[label].append(n / (time.perf_counter() - begun))
        used = time.monotonic() - started
        if done >= plan.repetitions and used + used / done > budget_s:
            break
    return {label: spread(v) for label, v in values.items()}


def measure_limit(plan: Plan, database: str) -> dict[str, Any]:
    """Raw psycopg 3 conditional UPDATEs against Braid's write path, at equal batch sizes."""
    from engine.runtime.store import DjangoStore

    rows = limit_rows(plan.limit_rows)
    DjangoStore().create(rows.run_id, "limit", None, {})
    single = max(100, plan.limit_rows // 10)
    with psycopg.connect(f"{PG}/{database}", autocommit=True) as conn:
        raw_setup(conn, rows)
        cases: list[tuple[str, Callable[[int], None], int]] = [
            ("raw autocommit, 1 row/tx", raw_writer(conn, rows, "autocommit", 1), single),
            ("braid write_rows, 1 row/tx", braid_writer(rows, 1), single),
            (
                "raw executemany, 100 rows/tx",
                raw_writer(conn, rows, "executemany", 100),
                plan.limit_rows,
            ),
            ("raw pipeline, 100 rows/tx", raw_writer(conn, rows, "pipeline", 100), plan.limit_rows),
            ("braid write_rows, 100 rows/tx", braid_writer(rows, 100), plan.limit_rows),
            (
                "braid's upsert SQL via raw executemany, 100 rows/tx",
                braid_writer(rows, 100, raw_sql=True, conn=conn),
                plan.limit_rows,
            ),
            (
                "raw UPDATE … FROM unnest, 1,000 rows/statement",
                raw_writer(conn, rows, "unnest", 1000),
                plan.limit_rows,
            ),
        ]
        results = rows_per_s(cases, plan, plan.budgets["limit"])
    return {"results": results}


# ---------------------------------------------------------------- on the braid workers


class ActivitySampler:
    """Samples pg_stat_activity while runs execute: who works, who waits on a lock."""

    def __init__(self, database: str) -> None:
        self.database = database
        self.conn = psycopg.connect(f"{PG}/{database}", autocommit=True)
        self.samples = 0
        self.seen: collections.Counter[str] = collections.Counter()

    def __call__(self) -> None:
        rows = self.conn.execute(
            "SELECT wait_event_type, query FROM pg_stat_activity WHERE datname = %s "
            "AND state = 'active' AND pid <> pg_backend_pid()",
            (self.database,),
        ).fetchall()
        self.samples += 1
        for wait, query in rows:
            self.seen[f"{'waits on a lock' if wait == 'Lock' else 'runs'}: {kind(query)}"] += 1

    def averages(self) -> dict[str, float]:
        """Return the mean number of backends per activity over the samples."""
        return {k: v / max(1, self.samples) for k, v in self.seen.most_common()}

    def close(self) -> None:
        self.conn.close()


def kind(query: str) -> str:
    """Name a statement by what it does."""
    text = " ".join(query.split())
    if "FOR UPDATE" in text or "FOR NO KEY UPDATE" in text:
        return "SELECT … FOR UPDATE of the run (advance)"
    for table in ("pendingevent", "dispatch", "nodestate", "traceevent", "run", "timer"):
        if f'"engine_{table}"' in text or f"engine_{table} " in text:
            return f"{text.split()[0]} engine_{table}"
    return text[:40]


@dataclass(frozen=True, slots=True)
class Batch:
    """One timed set of runs on the workers."""

    elapsed_s: float
    create_s: float
    counts: RunCounts
    pg: dict[str, int]


def create_runs(starts: Sequence[Callable[[], str]], together: bool) -> tuple[list[str], float]:
    """Create runs; `together` creates them in one transaction, published at its commit.

    Returns the ids and the wall time (epoch s) from which the workers' work is timed: the
    first create, or the moment just before the shared transaction commits.
    """
    from django.db import transaction

    if not together:
        return [start() for start in starts], time.time()
    with transaction.atomic():
        ids = [start() for start in starts]
        released = time.time()
    return ids, released


def run_batch(
    starts: Sequence[Callable[[], str]],
    database: str,
    timeout_s: float,
    sampler: ActivitySampler | None = None,
    together: bool = False,
) -> Batch:
    """Start runs, wait for them, and return the wall time from their release to the end."""
    with psycopg.connect(f"{PG}/{database}", autocommit=True) as conn:
        before = pg_counters(conn, database)
        started = time.time()
        ids, released = create_runs(starts, together)
        timed_from = released if together else started
        end = wait_finished(ids, timeout_s, sampler)
        time.sleep(1.2)  # backends flush their statistics about once a second
        after = pg_counters(conn, database)
    return Batch(
        end - timed_from,
        released - started,
        run_counts(ids),
        {k: after[k] - before[k] for k in after},
    )


def measure_throughput(plan: Plan, database: str) -> dict[str, Any]:
    """Runs/s and node steps/s of the demo flows without approvals on the two workers."""
    from runs.services import latest_version

    cases = []
    for slug, input_value in DEMO_CASES:
        version = latest_version(slug)
        cases.append((slug, resolved(version.graph), input_value, version))

    def starter(case: tuple[str, Any, Any, Any]) -> Callable[[], str]:
        return lambda: start_run(case[1], case[0], case[2], case[3])

    def starts(n: int) -> list[Callable[[], str]]:
        return [starter(cases[i % len(cases)]) for i in range(n)]

    def batch(n: int) -> Callable[[], Batch]:
        return lambda: run_batch(starts(n), database, plan.budgets["throughput"], together=True)

    batches = repeat(
        batch(plan.demo_runs),
        plan,
        plan.budgets["throughput"],
        warm_up=batch(max(8, plan.demo_runs // 5)),
    )
    return {"batches": batches, "runs": plan.demo_runs}


def chain_gaps(run_id: str) -> dict[str, list[float]]:
    """Per hop of a chain run: completion -> next dispatch, dispatch -> publish -> completion."""
    from engine.models import Dispatch

    rows = list(
        Dispatch.objects.filter(run_id=run_id)
        .order_by("id")
        .values_list("created_at", "published_at", "completed_at")
    )

    def ms(a: dt.datetime | None, b: dt.datetime | None) -> float:
        assert a is not None and b is not None, "each hop was dispatched, published and done"
        return (b - a).total_seconds() * 1e3

    return {
        "next": [ms(a[2], b[0]) for a, b in itertools.pairwise(rows)],
        "publish": [ms(r[0], r[1]) for r in rows],
        "action": [ms(r[1], r[2]) for r in rows],
        "hop": [ms(a[2], b[2]) for a, b in itertools.pairwise(rows)],
    }


def measure_latency(plan: Plan, database: str) -> dict[str, Any]:
    """Completion-to-next-dispatch latency on a chain of noop tasks, one run at a time."""
    graphs = resolved(chain_doc(plan.chain_tasks))
    warm = resolved(chain_doc(5))

    def once() -> dict[str, Any]:
        started = time.time()
        run_id = start_run(graphs, f"chain-{plan.chain_tasks}", {})
        end = wait_finished([run_id], plan.budgets["latency"])
        return {"elapsed_s": end - started, **chain_gaps(run_id)}

    runs = repeat(
        once,
        plan,
        plan.budgets["latency"],
        warm_up=lambda: wait_finished([start_run(warm, "chain-5", {})], 30),
    )
    return {"runs": runs, "tasks": plan.chain_tasks}


def measure_fork(plan: Plan, database: str) -> dict[str, Any]:
    """A fork of N branches (one noop task each) into one gather, on the workers."""
    graphs = resolved(fork_doc(plan.fork_width))
    small = resolved(fork_doc(max(10, plan.fork_width // 10)))
    sampler = ActivitySampler(database)
    try:

        def once() -> Batch:
            return run_batch(
                [lambda: start_run(graphs, "fork", {})], database, plan.budgets["fork"], sampler
            )

        batches = repeat(
            once,
            dataclasses.replace(plan, repetitions=plan.fork_repetitions),
            plan.budgets["fork"],
            warm_up=lambda: run_batch([lambda: start_run(small, "fork", {})], database, 60),
        )
        activity = sampler.averages()
    finally:
        sampler.close()
    found = {"batches": batches, "width": plan.fork_width, "activity": activity}
    if plan.wide_width:  # one run: it takes tens of seconds
        from engine.core.graph import Graph
        from engine.core.validation import ProblemCode
        from runs.services import RunRefused

        try:
            wide = resolved(fork_doc(plan.wide_width))
        except RunRefused as refused:  # the graph limit (docs/validation.md) is the product's
            problems = refused.report.errors if refused.report else ()
            if not problems or any(p.code is not ProblemCode.GRAPH_TOO_LARGE for p in problems):
                found["wide_refused"] = "; ".join(p.message for p in problems) or str(refused)
                return found
            # As bench.run does above the limit: size is the graph's only problem, and the
            # engine runs a graph it is handed; a flow of the product is refused there.
            found["wide_remark"] = problems[0].message
            wide = {"main": Graph.from_json(fork_doc(plan.wide_width))}
        try:
            found["wide"] = run_batch(
                [lambda: start_run(wide, "fork", {})], database, plan.budgets["wide"]
            )
        except BenchError as error:
            found["wide_failed"] = str(error)
    return found


# ---------------------------------------------------------------- raw Celery peer


def measure_peer(plan: Plan) -> dict[str, Any]:
    """A raw chord of N no-op tasks and a raw chain, on two peer worker processes."""

    def run_chord(n: int, timeout_s: float = plan.budgets["chord"]) -> float:
        started = time.perf_counter()
        result = chord([peer_noop.si() for _ in range(n)], app=app)(peer_gathered.s())
        if result.get(timeout=timeout_s) != n:
            raise BenchError("the chord's callback saw the wrong number of results")
        return time.perf_counter() - started

    def run_chain(n: int) -> float:
        started = time.perf_counter()
        chain(*[peer_noop.si() for _ in range(n)], app=app).apply_async().get(
            timeout=plan.budgets["chain"]
        )
        return time.perf_counter() - started

    chords = repeat(
        lambda: run_chord(plan.fork_width),
        dataclasses.replace(plan, repetitions=plan.fork_repetitions),
        plan.budgets["chord"],
        warm_up=lambda: run_chord(max(10, plan.fork_width // 10)),
    )
    chains = repeat(
        lambda: run_chain(plan.peer_chain),
        plan,
        plan.budgets["chain"],
        warm_up=lambda: run_chain(10),
    )
    found: dict[str, Any] = {
        "chord": spread(chords),
        "chain": spread(chains),
        "width": plan.fork_width,
        "chain_tasks": plan.peer_chain,
    }
    if plan.wide_width:  # one run, as for Braid's fork of as many
        found["wide"] = run_chord(plan.wide_width, plan.budgets["wide"])
    return found


# ---------------------------------------------------------------- the whole run


@dataclass
class Results:
    """Everything one run measured."""

    plan: Plan
    database: str
    started: dt.datetime
    facts: dict[str, str] = field(default_factory=dict)
    setup: dict[str, float] = field(default_factory=dict)
    parts: dict[str, dict[str, Any]] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)
    total_s: float = 0.0


def section(results: Results, name: str, measure: Callable[[], dict[str, Any]]) -> None:
    """Run one measurement; keep its error instead of losing the other measurements."""
    started = time.monotonic()
    print(f"-- {name} ...", flush=True)
    try:
        results.parts[name] = measure()
    except Exception as error:
        results.errors[name] = f"{type(error).__name__}: {error}"
        print(f"   failed: {results.errors[name]}", flush=True)
    print(f"   {time.monotonic() - started:.1f} s", flush=True)


def machine_facts() -> dict[str, str]:
    """Return what the numbers depend on."""
    import celery
    import django

    def output(*command: str) -> str:
        try:
            return subprocess.run(
                command, cwd=ROOT, capture_output=True, text=True, timeout=10
            ).stdout.strip()
        except OSError:
            return "?"

    with psycopg.connect(f"{PG}/postgres") as conn:
        row = conn.execute("SHOW server_version").fetchone()
    return {
        "cpus": str(os.cpu_count()),
        "load": " ".join(f"{x:.2f}" for x in os.getloadavg()),
        "python": platform.python_version(),
        "django": django.get_version(),
        "celery": celery.__version__,
        "psycopg": psycopg.__version__,
        "postgresql": str(row[0] if row else "?"),
        "commit": output("git", "rev-parse", "--short", "HEAD"),
        "dirty": str(bool(output("git", "status", "--porcelain", "--untracked-files=no"))),
    }


def worker_env(database: str, var_dir: str) -> dict[str, str]:
    """Return the environment of manage.py and every worker."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "BRAID_"))}
    env |= {
        "DATABASE_URL": f"{PG}/{database}",
        "REDIS_URL": BROKER_URL,
        "BRAID_BENCH_BROKER_URL": BROKER_URL,  # the peer workers' app reads these
        "BRAID_BENCH_BACKEND_URL": PEER_BACKEND_URL,
        "BRAID_VAR_DIR": var_dir,
        "BRAID_SWEEP_INTERVAL_S": "1",
        # No mail server here: the approval emails go nowhere instead of failing one by one
        # (a refused SMTP connection and its logged traceback per request opened).
        "BRAID_EMAIL_BACKEND": "django.core.mail.backends.dummy.EmailBackend",
        # As in production: DEBUG would log (and format) every statement.
        "DJANGO_DEBUG": "0",
        "DJANGO_SECRET_KEY": "bench-only-secret-key-not-for-any-deployment-0123456789",
        "PYTHONPATH": str(ROOT),
        "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
    }
    return env


SECTIONS = (
    "round_trips", "snapshots", "limit", "decisions", "workers", "throughput", "latency",
    "fork", "peer", "flatness",
)  # fmt: skip


def run_everything(results: Results, procs: Processes, only: set[str]) -> None:
    """Set up, measure in-process, then on the Braid workers, then on the peer workers."""
    plan, database, env = results.plan, results.database, procs.env
    results.setup["migrate_s"] = manage(env, "migrate", "--noinput")
    results.setup["demo_s"] = manage(env, "braid", "demo")
    measures: dict[str, Callable[[], dict[str, Any]]] = {
        "round_trips": lambda: measure_round_trips(plan),
        "snapshots": lambda: measure_snapshots(plan),
        "limit": lambda: measure_limit(plan, database),
        "decisions": lambda: measure_decisions(plan),
        "workers": lambda: measure_workers(plan),
        "flatness": lambda: measure_flatness(plan),
        "throughput": lambda: measure_throughput(plan, database),
        "latency": lambda: measure_latency(plan, database),
        "fork": lambda: measure_fork(plan, database),
        "peer": lambda: measure_peer(plan),
    }
    for name in ("round_trips", "snapshots", "limit", "decisions", "workers", "flatness"):
        if name in only:
            section(results, name, measures[name])
    flush_redis()  # the in-process runs published messages nobody needs
    on_workers(results, procs, "braid", {"throughput", "latency", "fork"} & only, measures)
    on_workers(results, procs, "bench.durable", {"peer"} & only, measures)


def on_workers(results: Results, procs: Processes, app_name: str, names: set[str],
               measures: dict[str, Callable[[], dict[str, Any]]]) -> None:  # fmt: skip
    """Start two workers of an app, take the measurements in order, stop the workers."""
    if not names:
        return
    started = time.monotonic()
    if app_name == "braid":
        workers = start_workers(procs, app_name, ["braid-one", "braid-two"], [["--beat"], []])
    else:
        workers = start_workers(procs, app_name, ["peer-one", "peer-two"],
                                [["-Q", PEER_QUEUE]] * 2)  # fmt: skip
    label = "braid_workers_ready_s" if app_name == "braid" else "peer_workers_ready_s"
    results.setup[label] = time.monotonic() - started
    try:
        for name in (n for n in SECTIONS if n in names):
            section(results, name, measures[name])
    finally:
        for process in workers:
            procs.stop(process)


def terminate(signum: int, frame: object) -> None:
    """Turn SIGTERM into an exception, so every `finally` runs."""
    raise SystemExit(128 + signum)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes and fewer repeats")
    parser.add_argument("--out", type=Path, help="write the markdown report here")
    parser.add_argument("--only", default=",".join(SECTIONS), help="comma-separated sections")
    parser.add_argument("--database-prefix", default="braid_bench",
                        help="the benchmark's PostgreSQL database is PREFIX_<random>")  # fmt: skip
    args = parser.parse_args(argv)
    signal.signal(signal.SIGTERM, terminate)
    plan = QUICK if args.quick else FULL
    only = set(args.only.split(","))
    if unknown := only - set(SECTIONS):
        parser.error(f"unknown sections {sorted(unknown)}; choose from {', '.join(SECTIONS)}")
    database = f"{args.database_prefix}_{secrets.token_hex(4)}"
    var_dir = tempfile.mkdtemp(prefix="braid-durable-")
    results = Results(plan, database, dt.datetime.now(dt.UTC), machine_facts())
    began = time.monotonic()
    procs = Processes(worker_env(database, var_dir), Path(var_dir))
    started = time.monotonic()
    admin_execute(f"CREATE DATABASE {database}")
    results.setup["createdb_s"] = time.monotonic() - started
    try:
        flush_redis()
        configure_django(procs.env)
        run_everything(results, procs, only)
    finally:
        procs.stop_all()
        cleanup(database)
    results.total_s = time.monotonic() - began
    results.facts["load after"] = " ".join(f"{x:.2f}" for x in os.getloadavg())
    earlier = args.out.read_text() if args.out and args.out.exists() else None
    report = report_text(results, only, earlier)
    print(headline(results))
    if args.out:
        args.out.write_text(report)
        print(f"wrote {args.out}")
    print(f"worker logs: {var_dir}")
    return 1 if results.errors else 0


def cleanup(database: str) -> None:
    """Close this process's connections, drop the database and empty the Redis databases."""
    try:
        from django.db import connections

        connections.close_all()
    except Exception:
        pass
    admin_execute(f"DROP DATABASE IF EXISTS {database} WITH (FORCE)")
    flush_redis()


# ---------------------------------------------------------------- the report


def fmt(value: float, digits: int = 1) -> str:
    return f"{value:,.{digits}f}"


def ratio(a: float, b: float) -> str:
    return f"{a / b:.2f}x" if b else "-"


def throughput_table(part: dict[str, Any]) -> list[str]:
    batches: list[Batch] = part["batches"]
    runs = part["runs"]
    rate = spread([runs / b.elapsed_s for b in batches])
    steps = spread([b.counts.node_completed / b.elapsed_s for b in batches])
    rows_s = spread([b.counts.node_rows / b.elapsed_s for b in batches])
    first = batches[0].counts
    return [
        f"{runs} runs per repetition ({runs // len(DEMO_CASES)} of each flow, interleaved), "
        "created with `create_run` in one transaction of this process, so that every "
        "`advance_run` is published at its commit; the time runs from just before that commit "
        "to the last run's final commit (creating the runs is not timed).",
        "",
        "| quantity | median (min-max, n) |",
        "| --- | --- |",
        f"| runs/s | {rate.text(1)} |",
        f"| node steps/s (`node.completed` trace events) | {steps.text(0)} |",
        f"| node rows/s (NodeState rows) | {rows_s.text(0)} |",
        f"| wall time per repetition | {spread([b.elapsed_s for b in batches]).text(2, ' s')} |",
        f"| creating the runs (untimed) | {spread([b.create_s for b in batches]).text(2, ' s')} |",
        f"| per run: node steps, node rows, events, steps (commits) | "
        f"{first.node_completed / runs:.2f}, {first.node_rows / runs:.2f}, "
        f"{first.events / runs:.2f}, {first.steps / runs:.2f} |",
        f"| PostgreSQL commits per node step (pg_stat_database) | "
        f"{spread([b.pg['xact_commit'] / b.counts.node_completed for b in batches]).text(2)} |",
        f"| PostgreSQL sessions opened per run | "
        f"{spread([b.pg['sessions'] / runs for b in batches]).text(2)} |",
    ]


def latency_table(part: dict[str, Any]) -> list[str]:
    runs = part["runs"]
    every = {k: [x for r in runs for x in r[k]] for k in ("next", "publish", "action", "hop")}
    per_run = spread([statistics.median(r["next"]) for r in runs])

    def row(label: str, key: str) -> str:
        values = every[key]
        return (
            f"| {label} | {fmt(statistics.median(values))} | {fmt(percentile(values, 0.95))}"
            f" | {fmt(min(values))} | {fmt(max(values))} |"
        )

    per_task = spread([r["elapsed_s"] / part["tasks"] * 1e3 for r in runs])
    return [
        f"A chain of {part['tasks']} noop tasks, one run at a time, {len(runs)} runs "
        f"({len(every['next'])} hops). Times from the Dispatch rows, in ms.",
        "",
        "| interval (ms) | median | p95 | min | max |",
        "| --- | --- | --- | --- | --- |",
        row("action completed → next action's dispatch row", "next"),
        row("dispatch row → message published", "publish"),
        row("published → action completed (pickup + action)", "action"),
        row("one hop: completion → next completion", "hop"),
        "",
        f"Median of the per-run medians, completion → next dispatch: {per_run.text(1, ' ms')}; "
        f"whole chain per task: {per_task.text(1, ' ms')}.",
    ]


def round_trip_table(part: dict[str, Any]) -> list[str]:
    lines = [
        "| flow | node steps | steps | round trips / step | statements / step | "
        "round trips / action | round trips / node step | messages / node step |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for case in part["cases"]:
        steps, actions, counts = case["steps"], case["actions"], case["counts"]
        n_steps = max(1, case["advance_calls"])
        per_node = steps.round_trips + actions.round_trips + case["create"].round_trips
        messages = steps.messages + actions.messages + case["create"].messages
        lines.append(
            f"| {case['label']} | {counts.node_completed} | {n_steps} | "
            f"{steps.round_trips / n_steps:.1f} | {steps.statements / n_steps:.1f} | "
            f"{per_action(actions, counts)} | "
            f"{per_node / max(1, counts.node_completed):.1f} | "
            f"{messages / max(1, counts.node_completed):.2f} |"
        )
    chain_case = next(c for c in part["cases"] if c["label"].startswith("chain"))
    lines += [
        "",
        "The statements of one step (an `advance` in the middle of the chain):",
        "",
        "```",
        *chain_case["sql"],
        "```",
    ]
    return lines


def per_action(actions: QueryCount, counts: RunCounts) -> str:
    """Round trips per action, or a dash for flows without actions."""
    return f"{actions.round_trips / counts.dispatches:.1f}" if counts.dispatches else "-"


def limit_table(part: dict[str, Any]) -> list[str]:
    results: dict[str, Spread] = part["results"]
    lines = ["| write path | rows/s median (min-max, n) |", "| --- | --- |"]
    lines += [f"| {label} | {s.text(0)} |" for label, s in results.items()]
    return lines


def snapshot_table(part: dict[str, Any]) -> list[str]:
    rtt = part["rtt_ms"]
    lines = [
        "| shape (half of the first actions done) | frames | lineages | tokens | snapshot KB | "
        "to_json ms | from_json ms | graphs decode ms | one step ms |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for c in part["cases"]:
        lines.append(
            f"| {c['label']} | {c['frames']} | {c['lineages']} | {c['tokens']} | "
            f"{c['bytes'] / 1024:,.0f} | {c['to_json_ms']:.2f} | {c['from_json_ms']:.2f} | "
            f"{c['graph_decode_ms']:.2f} | {c['step_ms']:.2f} |"
        )
    lines += [
        "",
        "| shape | load row ms | save ms | snapshot work per step ms | rows a normalized "
        "step changes | normalized round trips (model) | at bare round trips, ms |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for c in part["cases"]:
        kinds = [k for k, v in c["changed"].items() if v]
        work = sum(c[k] for k in ("load_ms", "graph_decode_ms", "from_json_ms", "step_ms",
                                  "to_json_ms", "save_ms"))  # fmt: skip
        changed = ", ".join(f"{k} {c['changed'][k]}" for k in kinds)
        lines.append(
            f"| {c['label']} | {c['load_ms']:.2f} | {c['save_ms']:.2f} | {work:.2f} | "
            f"{changed} | {2 * len(kinds)} | {2 * len(kinds) * rtt:.2f} |"
        )
    lines += ["", f"One bare round trip (`SELECT 1`): {rtt:.3f} ms."]
    return lines


def fork_table(results: Results) -> list[str]:
    fork, peer = results.parts.get("fork"), results.parts.get("peer")
    lines = ["| subject | seconds median (min-max, n) | per task ms |", "| --- | --- | --- |"]
    if fork:
        braid = spread([b.elapsed_s for b in fork["batches"]])
        lines.append(
            f"| Braid durable, fork of {fork['width']} → gather | {braid.text(2)} | "
            f"{braid.median / fork['width'] * 1e3:.1f} |"
        )
    if peer:
        lines.append(
            f"| raw Celery chord of {peer['width']} no-op tasks | "
            f"{peer['chord'].text(2)} | {peer['chord'].median / peer['width'] * 1e3:.1f} |"
        )
    if fork and "wide" in fork:
        wide = fork["wide"].elapsed_s
        lines.append(
            f"| Braid durable, fork of {results.plan.wide_width:,} → gather (one run) | "
            f"{wide:.2f} | {wide / results.plan.wide_width * 1e3:.1f} |"
        )
    if peer and "wide" in peer:
        lines.append(
            f"| raw Celery chord of {results.plan.wide_width:,} no-op tasks (one run) | "
            f"{peer['wide']:.2f} | {peer['wide'] / results.plan.wide_width * 1e3:.1f} |"
        )
    if fork and peer:
        counts = fork["batches"][0].counts
        lines += [
            "",
            f"Braid ÷ raw chord: **{ratio(braid.median, peer['chord'].median)}** "
            f"(goal: ≤ {FORK_GOAL:.1f}x). Per run: {counts.events} events applied in "
            f"{counts.steps} steps "
            f"({counts.events / max(1, counts.steps):.0f} events per step), "
            f"{spread([b.pg['sessions'] for b in fork['batches']]).median:.0f} PostgreSQL "
            f"sessions opened, {spread([b.pg['xact_commit'] for b in fork['batches']]).median:.0f}"
            " commits.",
            "",
            "Mean number of worker backends per activity, sampled from pg_stat_activity "
            "every ~50 ms during the timed runs:",
            "",
            "| activity | backends |",
            "| --- | --- |",
            *[f"| {k} | {v:.2f} |" for k, v in fork["activity"].items()],
        ]
    return lines


def chain_table(results: Results) -> list[str]:
    latency, peer = results.parts.get("latency"), results.parts.get("peer")
    lines = ["| subject | per task ms, median (min-max, n) |", "| --- | --- |"]
    braid = None
    if latency:
        braid = spread([r["elapsed_s"] / latency["tasks"] * 1e3 for r in latency["runs"]])
        lines.append(f"| Braid durable chain of {latency['tasks']} noop tasks | {braid.text(1)} |")
    if peer:
        raw = spread([v / peer["chain_tasks"] * 1e3 for v in peer["chain"].values])
        lines.append(f"| raw Celery chain of {peer['chain_tasks']} no-op tasks | {raw.text(1)} |")
        if braid:
            lines += ["", f"Braid ÷ raw chain, per task: {ratio(braid.median, raw.median)}."]
    return lines


CHAIN_GOAL = 1.0  # Braid's durable chain per task, at most this times a raw Celery chain's
FORK_GOAL = 0.2  # Braid's durable fork of 1,000, at most this times a raw chord's


def verdict(met: bool) -> str:
    """Return MET or MISSED."""
    return "MET" if met else "MISSED"


def goals(results: Results) -> list[str]:
    """Return the goal lines: met or missed, with the numbers."""
    lines = []
    fork, peer, limit = (results.parts.get(k) for k in ("fork", "peer", "limit"))
    latency = results.parts.get("latency")
    if latency and peer:
        braid = spread([r["elapsed_s"] / latency["tasks"] * 1e3 for r in latency["runs"]]).median
        raw = spread([v / peer["chain_tasks"] * 1e3 for v in peer["chain"].values]).median
        lines.append(
            f"- **{verdict(braid <= CHAIN_GOAL * raw)}** — chain, cost per task: Braid "
            f"{braid:.1f} ms vs raw Celery chain {raw:.1f} ms (Braid ÷ raw {ratio(braid, raw)}; "
            f"goal ≤ {CHAIN_GOAL:.1f}x)."
        )
    if "decisions" in results.parts:
        lines.append(decisions_goal(results.parts["decisions"]))
    if "flatness" in results.parts:
        lines += flatness_goals(results.parts["flatness"])
    if fork and peer:
        braid = spread([b.elapsed_s for b in fork["batches"]]).median
        chord_s = peer["chord"].median
        lines.append(
            f"- **{verdict(braid <= FORK_GOAL * chord_s)}** — fork of {fork['width']}: Braid "
            f"{braid:.2f} s vs raw chord {chord_s:.2f} s (Braid ÷ chord {ratio(braid, chord_s)};"
            f" goal ≤ {FORK_GOAL:.1f}x)."
        )
    if fork and peer and "wide" in fork and "wide" in peer:
        braid, chord_s = fork["wide"].elapsed_s, peer["wide"]
        lines.append(
            f"- Figure — fork of {results.plan.wide_width:,}: Braid {braid:.2f} s vs raw chord "
            f"of as many {chord_s:.2f} s (Braid ÷ chord {ratio(braid, chord_s)}; one run each)."
        )
    if fork and "wide_remark" in fork:
        lines.append(
            f"- The fork of {results.plan.wide_width:,} is above validate()'s limit, its only "
            f'problem ("{fork["wide_remark"]}"): it was handed to the engine compiled, as '
            "bench.run does above the limit; a flow that large is refused in the product."
        )
    if fork and "wide_failed" in fork:
        lines.append(
            f"- Figure — fork of {results.plan.wide_width:,}: did not finish: {fork['wide_failed']}"
        )
    if fork and "wide_refused" in fork:
        lines.append(
            f"- Figure — fork of {results.plan.wide_width:,}: not run, Braid refuses the graph: "
            f"{fork['wide_refused']} (a foreach of as many items is the way to fan out that wide)."
        )
    if limit:
        r = limit["results"]
        for braid_key, raw_key in (
            ("braid write_rows, 1 row/tx", "raw autocommit, 1 row/tx"),
            ("braid write_rows, 100 rows/tx", "raw executemany, 100 rows/tx"),
        ):
            b, w = r[braid_key].median, r[raw_key].median
            lines.append(
                f"- **{verdict(b >= w / 2)}** — {braid_key}: {b:,.0f} rows/s vs {raw_key} "
                f"{w:,.0f} (Braid ÷ raw {ratio(b, w)}; goal ≥ 0.5x)."
            )
    return lines


PARTS: tuple[tuple[str, str, Callable[[dict[str, Any]], list[str]]], ...] = (
    ("throughput", "Durable Braid on 2 workers: demo flows without approvals", throughput_table),
    ("latency", "Latency from an action's completion to the next dispatch", latency_table),
    ("round_trips", "Database round trips per node step (counted in-process)", round_trip_table),
    ("limit", "The physical limit: fenced status writes on PostgreSQL", limit_table),
    ("snapshots", "The snapshot against the number of frames", snapshot_table),
    ("decisions", "A foreach of approvals decided one by one", decisions_table),
    ("workers", "The same decisions landing on three workers in turn", workers_table),
    ("flatness", FLATNESS_TITLE, flatness_table),
)
# The goal lines of a section, told apart from the others' by these words.
GOAL_MARKS = {
    "limit": "— braid write_rows",
    "decisions": "approvals decided one by one",
    "flatness": "flat across open requests",
}
# Sections that a run with --only can put into an earlier report: their section and goal
# lines are theirs alone (the fork's, the chain's and the peer's are shared).
SPLICED = frozenset({"throughput", "round_trips", "limit", "snapshots", "decisions", "workers",
                     "flatness"})  # fmt: skip


def render(results: Results) -> str:
    """Return the markdown report."""
    plan = results.plan
    facts = ", ".join(f"{k} {v}" for k, v in results.facts.items())
    setup = ", ".join(f"{k.removesuffix('_s')} {v:.1f} s" for k, v in results.setup.items())
    out = [
        "# Durable Braid: measured",
        "",
        f"`python -m bench.durable{' --quick' if plan.quick else ''}` on "
        f"{results.started:%Y-%m-%d %H:%M} UTC, {results.total_s:.0f} s in all. {facts}.",
        "",
        "Each figure is the median of the timed repetitions after one warm-up, with min-max "
        "and n. The machine is shared and noisy: compare side by side, not across runs.",
        "",
        "Setup: a fresh database, `manage.py migrate` and `manage.py braid demo` on it, Redis "
        "db 13 as broker (db 12 the raw peer's result backend), two `celery -A braid worker "
        "--concurrency=2` processes (one with `--beat`, `BRAID_SWEEP_INTERVAL_S=1`), "
        "`DJANGO_DEBUG=0` "
        "for them and for this process. "
        f"{setup}.",
        "",
        "## Goals",
        "",
        *goals(results),
    ]
    for key, title, table in PARTS:
        out += ["", f"## {title}", ""]
        out += (
            table(results.parts[key])
            if key in results.parts
            else [f"Failed: {results.errors[key]}" if key in results.errors else "Not measured."]
        )
        out += METHODS.get(key, [])
    out += ["", "## Wide fork vs a raw Celery chord", "", *fork_table(results)]
    out += ["", "## Chains: Braid vs a raw Celery chain", "", *chain_table(results)]
    if results.errors:
        out += ["", "## Errors", "", *[f"- {k}: {v}" for k, v in results.errors.items()]]
    return "\n".join(out) + "\n"


def markdown_sections(text: str) -> list[tuple[str, list[str]]]:
    """Split a report at its `## ` headings: (heading, its lines, heading included), the
    text before the first one under the heading ''."""
    sections: list[tuple[str, list[str]]] = [("", [])]
    for line in text.splitlines():
        if line.startswith("## "):
            sections.append((line.removeprefix("## ").strip(), []))
        sections[-1][1].append(line)
    return sections


def spliced_goals(earlier: list[str], fresh: list[str], marks: Sequence[str]) -> list[str]:
    """Return the earlier Goals section with its lines holding a mark replaced by the fresh
    section's lines holding one (where the first one stood, else after the last goal)."""
    marked = [line for line in fresh if any(mark in line for mark in marks)]
    kept: list[str] = []
    at: int | None = None
    for line in earlier:
        if any(mark in line for mark in marks):
            at = len(kept) if at is None else at
            continue
        kept.append(line)
    if at is None:
        goals = [i for i, line in enumerate(kept) if line.startswith("- ")]
        at = goals[-1] + 1 if goals else len(kept)
    return kept[:at] + marked + kept[at:]


def splice_report(earlier: str, fresh: str, titles: Sequence[str], marks: Sequence[str]) -> str:
    """Return the earlier report with the sections titled `titles` and the goal lines
    holding one of `marks` taken from the fresh report; the rest as the earlier had them.

    A section the earlier report lacks goes after the one before it in the fresh report.
    """
    old, new = markdown_sections(earlier), dict(markdown_sections(fresh))
    if "Goals" in new:
        old = [(t, spliced_goals(lines, new["Goals"], marks) if t == "Goals" else lines)
               for t, lines in old]  # fmt: skip
    for title in titles:
        present = [t for t, _ in old]
        if title in present:
            old[present.index(title)] = (title, new[title])
            continue
        earlier_in_fresh = list(new)[: list(new).index(title)]
        after = max((present.index(t) for t in earlier_in_fresh if t in present), default=-1)
        old.insert(after + 1 if after >= 0 else len(old), (title, new[title]))
    return "\n".join(line for _, lines in old for line in lines) + "\n"


def report_text(results: Results, only: set[str], earlier: str | None) -> str:
    """Return the report to write: the whole of it, or with --only of sections that can be
    spliced, the earlier report with those sections (and their goal lines) replaced."""
    fresh = render(results)
    if earlier is None or only >= set(SECTIONS) or not only <= SPLICED:
        return fresh
    titles = [title for key, title, _ in PARTS if key in only]
    return splice_report(earlier, fresh, titles, [GOAL_MARKS[k] for k in only if k in GOAL_MARKS])


METHODS: dict[str, list[str]] = {
    "flatness": [
        "",
        "In this process, before any worker runs. The population is as many durable runs "
        "as the highest level, of start → one approval by finance (policy any) → end, each "
        "started with `create_run` and stepped once with `engine.runtime.step.advance`, so "
        "that each has an open request (built once, untimed, its commits unsynced). A level "
        "of N leaves the requests of N runs spread over the population open and parks the "
        "rest: an UPDATE of their status to closed, undone by the next level that needs "
        "them, so their runs still wait and no inbox or count sees them; every switch ends "
        "with an ANALYZE of the requests and runs tables, as autovacuum would after that "
        "many rows changed. Switching costs two statements, so the levels alternate round "
        "by round (up the levels in odd rounds, down in even ones) and a drift of the "
        "machine over the run reaches every level alike (until 2026-12-06 the levels were "
        "walked up and down once, reached by starting and cancelling runs, and one level "
        "moved 2.2x between its two passes). "
        "At each level and round, requests spread evenly over the open ones are decided: "
        "`POST /api/approvals/<id>/decide/` through Django's test client (the whole "
        "middleware stack, no server), logged in as a finance user, then the step a worker "
        "would take, timed together; each decision is followed by one read of the inbox "
        "list's first page (`GET /api/approvals/`, the API's page of 50), and every eighth "
        "by the inbox page's own read (`limit=500`, which returns min(N, 500) requests, so "
        "it is shown, not judged). `COUNT(*)` alone is the inbox's count of the finance "
        "user's open requests (`approvals.services.open_requests(user).count()`, what the "
        "pagination runs), timed on its own after the decisions. The first decision and "
        "read of a round are untimed (they "
        "count the statements); the decided runs are replaced by as many new ones before "
        "the next level. Medians with a 95% bootstrap interval of the median (n samples); "
        "the goal compares the median at the most open requests with that at the fewest, "
        "every round together.",
    ],
    "workers": [
        "",
        "In this process, like the decisions above, on a second run of the same size: decision "
        "k is applied by worker k mod 3, each with its own cache of states "
        "(`engine.runtime.state_cache._STATES`), so each step finds the state it holds two "
        "versions old "
        "and catches it up from the parts the two steps before it changed "
        "(`engine.core.parts.catch_up`). Every tenth decision goes to a worker whose cache "
        "was emptied, which reads every part of the run, as every stale step did before. "
        "Both columns are medians of the decision and its step, timed together.",
    ],
    "decisions": [
        "",
        "In this process, before any worker runs: a durable run of a foreach over N items "
        "(concurrency N) whose body is one approval, advanced until all N requests are open; "
        "then each request, in the order opened, is decided with `runs.services.decide` "
        "and applied with `engine.runtime.step.advance` (what a worker does next), timed "
        "together. A step writes only the parts it changed (docs/durable.md), so the last "
        "decisions should cost what the first ones do. The goal is judged on the median "
        "decision of each tenth (the sums are shown too): a busy moment of the shared "
        "machine moves a sum of 100 decisions by half, their median hardly.",
    ],
    "round_trips": [
        "",
        "Method: each run is created and driven in this process with the tasks' own code "
        "(`engine.runtime.step.advance`, `engine.tasks.run_actions` with one action each, which "
        "advances the run itself after recording the result), before any worker runs. "
        "Steps are the `advance` calls that applied events and the action tasks' "
        "`record_and_advance` (which records a result and applies it in one transaction), "
        "wherever they ran; an action is the rest of its task. `connection.execute_wrapper` "
        "counts statements (an executemany counts once). A round trip is a wait for the "
        "server's answer: psycopg's wait function is wrapped and counts each read wait "
        "(statements sent together in a pipeline, BEGIN included, wait once). Messages are "
        "`before_task_publish` signals. Round trips per node step = (create + steps + "
        "actions) ÷ `node.completed` events.",
    ],
    "limit": [
        "",
        "Raw: psycopg 3 on its own connection, `UPDATE bench_nodes SET status, status_detail "
        "WHERE run_id AND node_id AND status_detail <= %s` on a table with the same key. "
        "Braid: `engine.runtime.store.write_rows(run_id, rows)` (the fenced `INSERT … ON "
        "CONFLICT DO UPDATE … WHERE`) on engine_nodestate, outside a transaction for 1 row/tx, "
        "inside "
        "`transaction.atomic()` for 100 rows/tx. Every write lands (same id, running). "
        "Each path is warmed up once, then the paths are timed in turns, one repetition of "
        "each per round, so that a passing disturbance (a checkpoint, an autovacuum) falls "
        "on all of them alike.",
    ],
    "snapshots": [
        "",
        "Pure core: `step(Start)`, then half of the dispatched actions completed. Sizes of "
        "`RunState.to_json()`; load row = `Run.objects.get` (snapshot and graphs columns); "
        "save = one `UPDATE engine_run SET snapshot` in a transaction; graphs decode = "
        "`Graph.from_json` of the stored graphs, which `load_state` does on every step. "
        "Snapshot work per step = load row + graphs decode + from_json + step + to_json + "
        "save: what the snapshot costs one step that applies one event. The normalized "
        "model counts the rows a row-per-frame design would change for one more completed "
        "action (by diffing the snapshots) and charges one read and one batched write per "
        "kind of row changed; it leaves out the inbox, outbox, node rows and trace, which "
        "both designs write.",
    ],
}


def headline(results: Results) -> str:
    """Return the headline numbers and ratios for the terminal."""
    lines = ["", "== Durable Braid: headline"]
    parts = results.parts
    if "throughput" in parts:
        batches = parts["throughput"]["batches"]
        runs = parts["throughput"]["runs"]
        lines.append(
            f"runs/s {spread([runs / b.elapsed_s for b in batches]).text(1)}; node "
            f"steps/s {spread([b.counts.node_completed / b.elapsed_s for b in batches]).text(0)}"
        )
    if "latency" in parts:
        gaps = [x for r in parts["latency"]["runs"] for x in r["next"]]
        lines.append(
            f"completion → next dispatch: median {statistics.median(gaps):.1f} ms, "
            f"p95 {percentile(gaps, 0.95):.1f} ms"
        )
    if "round_trips" in parts:
        chain_case = next(
            c for c in parts["round_trips"]["cases"] if c["label"].startswith("chain")
        )
        total = (
            chain_case["steps"].round_trips
            + chain_case["actions"].round_trips
            + chain_case["create"].round_trips
        )
        lines.append(
            f"round trips per node step (chain): "
            f"{total / max(1, chain_case['counts'].node_completed):.1f}"
        )
    lines += goals(results)
    for name, error in results.errors.items():
        lines.append(f"ERROR {name}: {error}")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
