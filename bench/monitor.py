"""The live monitor's costs: the color walk, the execution tree, the read endpoints, push
latency under sustained load, and what publishing costs.

Usage: python -m bench.monitor [--quick] [--only walk,tree,latency,hot_path,publishing]
                               [--out bench/MONITOR.md] [--database-prefix braid_monitor]

1. `walk`: `engine.core.colors.explain`, pure, on chains and forks of 1,000, 10,000 and
   100,000 nodes with half the nodes completed; then on rows and traces of real runs
   stepped here by the scheduler with the registry's actions (a fork of 10,000 branches
   and a foreach of 10,000 items whose body is four nodes), finished and half-way, with
   `engine.core.executions.executions` over the same traces. Subjects are interleaved.
2. `tree`: `GET /api/runs/<id>/tree/` on PostgreSQL through Django's handler in this
   process (server-side time: the SELECTs, the walk, the JSON) for a chain of 10,000 node
   rows and for durable runs of the fork and the foreach above, driven to the end in this
   process; `GET /api/runs/<id>/executions/` on the fork and the foreach. Interleaved;
   an endpoint that misses its target is profiled once.
3. `latency`: push latency on scaled mode (Daphne plus two `celery worker --concurrency=2`
   over PostgreSQL and Redis) while a steady stream of demo runs keeps the workers busy
   the whole time: from the commit of a node's completed row (its `updated_at`) to a real
   websocket client receiving the delta that shows it completed.
4. `publishing`: runs/s of the demo flows with live publishing on (BRAID_LIVE=1, a
   runs-list socket open) against off (BRAID_LIVE=0), alternating, with fresh workers.
5. `hot_path`: the engine's own cost of publishing, demo runs driven in this process.

With --only and --out, the sections measured replace theirs in the file and the others
are kept as they were, each with the date, machine and load average it was measured at;
a marked section of another name (notes written by hand) is kept at the end.
Every process started here is stopped at the end.
"""

from __future__ import annotations

import argparse
import cProfile
import datetime as dt
import gc
import json
import os
import pstats
import re
import secrets
import signal
import statistics
import tempfile
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from bench.durable import (
    BIN,
    DEMO_CASES,
    FINISHED,
    ROOT,
    Processes,
    admin_execute,
    chain_doc,
    cleanup,
    configure_django,
    flush_redis,
    fork_doc,
    manage,
    percentile,
    resolved,
    start_run,
    start_workers,
    terminate,
    wait_finished,
    worker_env,
)

WALK_SIZES = (1_000, 10_000, 100_000)
TREE_ROWS = 10_000
WIDE = 10_000  # branches of the fork and items of the foreach measured as real runs
WALK_TARGET_MS = 100  # issue 30: the walk and the tree endpoint at 10,000 rows
EXECUTIONS_TARGET_MS = 250  # the execution tree endpoint on a foreach of 10,000
P99_TARGET_MS = 500  # issue 30: push latency under sustained load
P95_TARGET_MS = 250  # the earlier push-latency target, kept
SECTIONS = ("walk", "tree", "latency", "publishing", "hot_path")
SERVED = ("latency", "publishing")  # the sections that need Daphne and workers


@dataclass(frozen=True)
class Plan:
    walk_repeats: int  # timings of each walk subject under 100,000 nodes
    big_walk_repeats: int  # of each subject of 100,000 nodes
    tree_repeats: int
    latency_samples: int  # at least this many, unless the chains run out
    latency_chains: int  # at most this many watched chains
    chain_length: int
    in_flight: int  # demo runs kept unfinished while latency is measured
    background_runs: int
    batch_runs: int
    batches: int
    publish_rounds: int
    hot_runs: int
    hot_rounds: int


FULL = Plan(walk_repeats=21, big_walk_repeats=5, tree_repeats=21, latency_samples=300,
            latency_chains=30, chain_length=20, in_flight=40, background_runs=40,
            batch_runs=100, batches=3, publish_rounds=16, hot_runs=40,
            hot_rounds=20)  # fmt: skip
QUICK = Plan(walk_repeats=3, big_walk_repeats=2, tree_repeats=5, latency_samples=20,
             latency_chains=2, chain_length=10, in_flight=16, background_runs=16,
             batch_runs=24, batches=2, publish_rounds=2, hot_runs=16,
             hot_rounds=4)  # fmt: skip


# ---------------------------------------------------------------- where and when


def machine() -> str:
    """Return the machine in a few words: cores and processor."""
    model = "unknown processor"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.partition(":")[2].strip()
                break
    except OSError:
        pass
    return f"{os.cpu_count()} cores, {model}"


def load_average() -> str:
    """Return the 1, 5 and 15 minute load averages."""
    return ", ".join(f"{value:.2f}" for value in os.getloadavg())


@contextmanager
def stamped(results: dict[str, Any], section: str) -> Iterator[dict[str, Any]]:
    """Record when a section ran and the machine's load before and after it."""
    found: dict[str, Any] = {"at": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
                             "load_before": load_average()}  # fmt: skip
    yield found
    found["load_after"] = load_average()
    results[section] = found


def spread_ms(times: Sequence[float]) -> dict[str, float]:
    """Return the median, p95 (nearest rank) and extremes of times in seconds, in ms."""
    return {"median_ms": statistics.median(times) * 1e3,
            "p95_ms": percentile(times, 0.95) * 1e3, "min_ms": min(times) * 1e3,
            "max_ms": max(times) * 1e3, "n": len(times)}  # fmt: skip


def interleaved(
    subjects: dict[str, Callable[[], object]], repeats: dict[str, int]
) -> dict[str, list[float]]:
    """Time each subject its number of times, one of each per round (the same clock and
    the same drift of the machine for all), after one untimed call of each."""
    for run in subjects.values():
        run()
    times: dict[str, list[float]] = {name: [] for name in subjects}
    for round_number in range(max(repeats.values())):
        for name, run in subjects.items():
            if round_number >= repeats[name]:
                continue
            gc.collect()  # no subject pays for the garbage of the one before
            started = time.perf_counter()
            run()
            times[name].append(time.perf_counter() - started)
    return times


OURS = ("engine/", "monitor/", "braid/")


def profiled(run: Callable[[], object]) -> dict[str, Any]:
    """Run once under cProfile; return the functions of Braid's code with the most
    cumulative time and the functions (anyone's) with the most own time."""
    profile = cProfile.Profile()
    profile.enable()
    run()
    profile.disable()
    stats = vars(pstats.Stats(profile))  # typeshed leaves out `stats` and `total_tt`
    rows = []
    for (filename, line, function), (_, _, own, cumulative, _) in stats["stats"].items():
        where = filename.split("/site-packages/")[-1].removeprefix(str(ROOT) + "/")
        rows.append({"function": f"{where}:{line}({function})", "own_s": own,
                     "cumulative_s": cumulative, "ours": where.startswith(OURS)})  # fmt: skip
    ours = sorted((r for r in rows if r["ours"]), key=lambda r: r["cumulative_s"], reverse=True)
    return {"profiled_ms": stats["total_tt"] * 1e3,
            "ours": ours[:12],
            "own": sorted(rows, key=lambda r: r["own_s"], reverse=True)[:10]}  # fmt: skip


# ---------------------------------------------------------------- flows of 10,000


def foreach_doc(n_items_hint: int = WIDE, concurrency: int = 10) -> dict[str, Any]:
    """A foreach over `input.items` whose body is four nodes: a task whose output is
    appended, an `if`, then a `set` adding to a sum or another task, back to the foreach."""
    nodes = [
        {"id": "start", "type": "start"},
        {"id": "each", "type": "foreach", "items": "input.items", "as": "item",
         "concurrency": concurrency},
        {"id": "score", "type": "task", "action": "noop", "params": {"value": "${[item * 2]}"},
         "output": "scores"},
        {"id": "check", "type": "if", "condition": "item % 3 == 0"},
        {"id": "flag", "type": "set", "values": {"total": "item"}},
        {"id": "note", "type": "task", "action": "noop"},
        {"id": "end", "type": "end"},
    ]  # fmt: skip
    edges = [
        {"source": "start", "target": "each"},
        {"source": "each", "outcome": "item", "target": "score"},
        {"source": "score", "target": "check"},
        {"source": "check", "outcome": "true", "target": "flag"},
        {"source": "check", "outcome": "false", "target": "note"},
        {"source": "flag", "target": "each"},
        {"source": "note", "target": "each"},
        {"source": "each", "outcome": "done", "target": "end"},
    ]
    return {"format": "braid.graph/1", "name": f"foreach-body-of-4 ({n_items_hint:,} items)",
            "state": {"scores": {"reducer": "append"}, "total": {"reducer": "sum"}},
            "nodes": nodes, "edges": edges}  # fmt: skip


def items_input(n: int) -> dict[str, Any]:
    return {"items": list(range(1, n + 1))}


def wide_graphs(doc: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """Return a document's graphs, and a remark when only the product's graph-size limit
    refuses it: the engine runs a graph it is handed (as bench.durable does above it)."""
    from engine.core.graph import Graph
    from engine.core.validation import ProblemCode
    from runs.services import RunRefused

    try:
        return resolved(doc), ""
    except RunRefused as refused:
        problems = refused.report.errors if refused.report else ()
        if not problems or any(p.code is not ProblemCode.GRAPH_TOO_LARGE for p in problems):
            raise
        return {"main": Graph.from_json(doc)}, problems[0].message


@dataclass
class SteppedRun:
    """A run stepped here by the scheduler, its actions carried out by the registry's in
    the order they were asked for, and held until answered: so it can stop part-way and
    show its rows and trace as a live run's stand (the adapters' work, without a store)."""

    graphs: dict[str, Any]
    input: Any
    rows: dict[str, Any] = field(default_factory=dict)
    trace: list[Any] = field(default_factory=list)
    held: dict[str, Any] = field(default_factory=dict)
    kinds: Counter[str] = field(default_factory=Counter)

    def __post_init__(self) -> None:
        from engine.core.events import Start
        from engine.core.state import RunState

        self.state = RunState(run_id=str(uuid.uuid4()), graphs=self.graphs)
        self.send(Start(at=self.stamp(), input=self.input))

    @staticmethod
    def stamp() -> str:
        from engine.core.timestamps import format_timestamp

        return format_timestamp(dt.datetime.now(dt.UTC))

    def send(self, event: Any) -> None:
        from engine.core.events import RunAction, Trace, WriteRow
        from engine.core.rows import apply_write
        from engine.core.scheduler import step

        self.state, commands = step(self.state, event)
        for command in commands:
            if isinstance(command, Trace):
                self.trace.append(command)
                self.kinds[command.event] += 1
            elif isinstance(command, WriteRow):
                apply_write(self.rows, command)
            elif isinstance(command, RunAction):
                self.held[command.key] = command

    def answer_until(self, enough: Callable[[SteppedRun], bool]) -> None:
        """Carry out held actions, oldest first, until `enough` holds or none is held."""
        from engine.actions import ACTIONS
        from engine.core.runtime import perform

        while self.held and not enough(self):
            key = next(iter(self.held))
            self.send(perform(ACTIONS, self.held.pop(key), self.state.run_id, self.stamp))


def stepped_cases() -> list[tuple[str, SteppedRun]]:
    """The fork and the foreach of 10,000 stepped here, each finished and half-way."""
    half = WIDE // 2
    fork_graphs, _ = wide_graphs(fork_doc(WIDE))
    foreach_graphs, _ = wide_graphs(foreach_doc(WIDE))
    cases = []
    for label, graphs, input_value, enough in (
        (f"fork of {WIDE:,}, half the branches done", fork_graphs, {},
         lambda r: r.kinds["node.completed"] >= half + 2),  # start and split, then tasks
        (f"fork of {WIDE:,}, finished", fork_graphs, {}, lambda r: False),
        (f"foreach of {WIDE:,} items, half done", foreach_graphs, items_input(WIDE),
         lambda r: r.kinds["item.finished"] >= half),
        (f"foreach of {WIDE:,} items, finished", foreach_graphs, items_input(WIDE),
         lambda r: False),
    ):  # fmt: skip
        run = SteppedRun(graphs, input_value)
        run.answer_until(enough)
        cases.append((label, run))
    return cases


# ---------------------------------------------------------------- 1. the walk


def synthetic_case(shape: str, n: int) -> tuple[dict[str, Any], dict[str, Any], int]:
    """Return graphs and rows of a run where half the nodes completed and the rest wait."""
    from engine.core.events import RowStatus
    from engine.core.graph import Graph
    from engine.core.rows import NodeRow

    doc = chain_doc(n) if shape == "chain" else fork_doc(n)
    graphs = {"main": Graph.from_json(doc)}
    rows: dict[str, NodeRow] = {}
    for node in doc["nodes"][: len(doc["nodes"]) // 2]:
        eid = "root:1"
        if shape == "fork" and node["id"].startswith("t"):
            eid = f"root:1:split.b{node['id'][1:]}:1"
        rows[node["id"]] = NodeRow(node["id"], RowStatus.COMPLETED, eid, None, 1)
    return graphs, rows, len(doc["nodes"])


def measure_walk(plan: Plan) -> dict[str, Any]:
    """Time explain() on the synthetic shapes and explain() and executions() on the runs
    stepped here, every subject interleaved with the others."""
    from engine.core.colors import explain
    from engine.core.events import RunStatus
    from engine.core.executions import executions

    subjects: dict[str, Callable[[], object]] = {}
    repeats: dict[str, int] = {}
    synthetic: list[dict[str, Any]] = []
    for shape in ("chain", "fork"):
        for n in WALK_SIZES:
            graphs, rows, nodes = synthetic_case(shape, n)
            name = f"walk {shape} {n}"
            subjects[name] = partial(explain, graphs, rows, RunStatus.RUNNING)
            repeats[name] = plan.big_walk_repeats if n >= 100_000 else plan.walk_repeats
            synthetic.append({"shape": shape, "nodes": nodes, "subject": name})
    runs: list[dict[str, Any]] = []
    for label, run in stepped_cases():
        status = run.state.status
        assert status in (RunStatus.RUNNING, RunStatus.COMPLETED), (label, status)
        graphs, rows, trace = run.graphs, run.rows, run.trace
        subjects[f"walk {label}"] = partial(explain, graphs, rows, status)
        subjects[f"executions {label}"] = partial(executions, trace, status)
        repeats[f"walk {label}"] = repeats[f"executions {label}"] = plan.walk_repeats
        runs.append({"label": label, "status": status.value, "rows": len(rows),
                     "events": len(trace), "executions": len(executions(trace, status)),
                     "nodes": sum(len(g.nodes) for g in graphs.values())})  # fmt: skip
    times = interleaved(subjects, repeats)
    for case in synthetic:
        case |= spread_ms(times[case["subject"]])
        case["us_per_node"] = case["median_ms"] * 1e3 / case["nodes"]
    for case in runs:
        case["walk"] = spread_ms(times[f"walk {case['label']}"])
        case["executions_time"] = spread_ms(times[f"executions {case['label']}"])
    missed = [(f"`explain` on the {c['label']}", f"walk {c['label']}") for c in runs
              if c["walk"]["median_ms"] >= WALK_TARGET_MS]  # fmt: skip
    missed += [(f"`explain` on the synthetic {c['shape']} of {c['nodes']:,}", c["subject"])
               for c in synthetic
               if c["nodes"] <= 10_100 and c["median_ms"] >= WALK_TARGET_MS]  # fmt: skip
    profiles = [{"title": title, **profiled(subjects[name])} for title, name in missed]
    return {"synthetic": synthetic, "runs": runs, "profiles": profiles}


# ---------------------------------------------------------------- 2. the read endpoints


def chain_rows_run() -> str:
    """A run with a chain of 10,000 nodes and a completed row for each but the end."""
    from django.utils import timezone

    from engine.models import NodeState, Run

    doc = chain_doc(TREE_ROWS - 2)
    run = Run.objects.create(label="tree", graphs={"main": doc}, status="running")
    now = timezone.now()
    NodeState.objects.bulk_create(
        NodeState(run=run, node=node["id"], status="completed", status_detail="root:0000000001",
                  execution_id="root:1", result={"ok": True}, attempt=1, updated_at=now)
        for node in doc["nodes"][:-1]
    )  # fmt: skip
    return str(run.pk)


def durable_run(graphs: dict[str, Any], label: str, input_value: Any) -> tuple[str, float]:
    """Start a durable run and drive it to the end in this process; return its id and the
    seconds it took."""
    from engine.models import Run

    started = time.perf_counter()
    run_id = start_run(graphs, label, input_value)
    drain_here(run_id, rounds=5000)
    status = Run.objects.get(pk=run_id).status
    if status != "completed":
        raise RuntimeError(f"the {label} run ended {status}")
    return run_id, time.perf_counter() - started


def sql_and_profile(client: Any, url: str) -> dict[str, Any]:
    """Time one request and its SQL, then profile another (see `profiled`)."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as queries:
        started = time.perf_counter()
        client.get(url)
        plain = time.perf_counter() - started
    captured = list(queries.captured_queries)  # the next request empties the log
    return {"plain_ms": plain * 1e3, "queries": len(captured),
            "sql_ms": sum(float(q["time"]) for q in captured) * 1e3,
            **profiled(lambda: client.get(url))}  # fmt: skip


def measure_tree(plan: Plan) -> dict[str, Any]:
    """Server-side times of GET tree/ and executions/ on PostgreSQL, interleaved."""
    from django.contrib.auth.models import User
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    from engine.models import NodeState, TraceEvent

    fork_graphs, remark = wide_graphs(fork_doc(WIDE))
    fork_id, fork_s = durable_run(fork_graphs, "tree-fork", {})
    foreach_id, foreach_s = durable_run(resolved(foreach_doc(WIDE)), "tree-foreach",
                                        items_input(WIDE))  # fmt: skip
    chain_id = chain_rows_run()
    runs = {
        f"chain of {TREE_ROWS:,} (rows written here)": chain_id,
        f"fork of {WIDE:,} branches (durable run)": fork_id,
        f"foreach of {WIDE:,} items (durable run)": foreach_id,
    }
    subjects = {f"tree/ {label}": f"/api/runs/{run_id}/tree/" for label, run_id in runs.items()}
    subjects |= {f"executions/ {label}": f"/api/runs/{run_id}/executions/"
                 for label, run_id in list(runs.items())[1:]}  # fmt: skip
    client = Client(HTTP_HOST="127.0.0.1")
    client.force_login(User.objects.get(username="admin"))

    def get(url: str) -> None:
        response = client.get(url)
        assert response.status_code == 200, (url, response.status_code)

    times = interleaved({name: partial(get, url) for name, url in subjects.items()},
                        dict.fromkeys(subjects, plan.tree_repeats))  # fmt: skip
    cases = []
    for name, url in subjects.items():
        with CaptureQueriesContext(connection) as queries:
            response = client.get(url)
        endpoint, _, label = name.partition(" ")
        run_id = url.split("/")[3]
        target = EXECUTIONS_TARGET_MS if endpoint == "executions/" else WALK_TARGET_MS
        case: dict[str, Any] = {"endpoint": endpoint, "label": label, "target_ms": target,
                "rows": NodeState.objects.filter(run_id=run_id).count(),
                "events": TraceEvent.objects.filter(run_id=run_id).count(),
                "queries": len(queries), "bytes": len(response.content),
                **spread_ms(times[name])}  # fmt: skip
        if case["median_ms"] >= target:
            case["profile"] = sql_and_profile(client, url)
        cases.append(case)
    return {"cases": cases, "fork_s": fork_s, "foreach_s": foreach_s, "remark": remark}


# ---------------------------------------------------------------- 3. push latency


def session_cookie(username: str) -> str:
    """Return a session id logged in as the user, stored in the benchmark database."""
    from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY
    from django.contrib.auth.models import User
    from django.contrib.sessions.backends.db import SessionStore

    user = User.objects.get(username=username)
    session = SessionStore()
    session[SESSION_KEY] = str(user.pk)
    session[BACKEND_SESSION_KEY] = "django.contrib.auth.backends.ModelBackend"
    session[HASH_SESSION_KEY] = user.get_session_auth_hash()
    session.save()
    assert session.session_key is not None
    return session.session_key


def connect(base: str, path: str, session: str) -> Any:
    from websockets.sync.client import connect as ws_connect

    headers = {"Origin": base, "Cookie": f"sessionid={session}"}
    url = base.replace("http://", "ws://") + path
    return ws_connect(url, open_timeout=10, additional_headers=headers)


def watch_latencies(base: str, session: str, run_id: str, seconds: float) -> list[float]:
    """Watch one run; return receive time minus commit time for each node seen completed."""
    from engine.models import NodeState

    seen: dict[str, float] = {}
    deadline = time.monotonic() + seconds
    with connect(base, f"/ws/runs/{run_id}/", session) as socket:
        first = json.loads(socket.recv(timeout=10))
        done = {p for p, c in first["colors"].items() if c == "completed"}
        status = first["status"]
        while status not in FINISHED and time.monotonic() < deadline:
            message = json.loads(socket.recv(timeout=max(0.1, deadline - time.monotonic())))
            received = time.time()
            status = message.get("status", status)
            for path, row in message.get("nodes", {}).items():
                if row["status"] == "completed" and path not in done:
                    done.add(path)
                    seen[path] = received
    committed = {
        row.node: row.updated_at.timestamp()
        for row in NodeState.objects.filter(run_id=run_id, node__in=list(seen))
    }
    return [seen[path] - committed[path] for path in seen if path in committed]


def demo_starts() -> list[Callable[[], str]]:
    from runs.services import latest_version

    starts: list[Callable[[], str]] = []
    for slug, input_value in DEMO_CASES:
        version = latest_version(slug)
        graphs = resolved(version.graph)
        starts.append(partial(start_run, graphs, slug, input_value, version))
    return starts


class SteadyStream:
    """Keeps `in_flight` demo runs unfinished for as long as it runs: a thread of this
    process looks every 20 ms and starts a new run for each that finished, all in one
    transaction."""

    def __init__(self, in_flight: int) -> None:
        self.in_flight = in_flight
        self.stop = threading.Event()
        self.started = 0
        self.finished: Counter[str] = Counter()
        self.unfinished_seen: list[int] = []  # before each top-up, while measuring
        self.measuring = False
        self.live: set[str] = set()
        self.thread = threading.Thread(target=self.keep_going, daemon=True)

    def keep_going(self) -> None:
        from django.db import connection, transaction

        from engine.models import Run

        try:
            starts = demo_starts()
            while not self.stop.is_set():
                if self.live:
                    ended = dict(Run.objects.filter(pk__in=self.live, status__in=FINISHED)
                                 .values_list("pk", "status"))  # fmt: skip
                    self.live -= {str(pk) for pk in ended}
                    self.finished.update(ended.values())
                if self.measuring:
                    self.unfinished_seen.append(len(self.live))
                missing = self.in_flight - len(self.live)
                if missing > 0:
                    with transaction.atomic():  # one commit for the lot: the stream keeps up
                        new = [starts[(self.started + i) % len(starts)]() for i in range(missing)]
                    self.live.update(new)
                    self.started += missing
                time.sleep(0.02)
        finally:
            connection.close()

    def __enter__(self) -> SteadyStream:
        self.thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.stop.set()
        self.thread.join(timeout=30)


SLEEP_S = 0.1


def sleepy_chain_doc(n: int) -> dict[str, Any]:
    """A chain of `n` tasks that each sleep 0.1 s: each node's completion commits on its
    own, a tenth of a second after the one before (noop tasks would finish together)."""
    doc = chain_doc(n)
    for node in doc["nodes"]:
        if node["type"] == "task":
            node |= {"action": "sleep", "params": {"seconds": SLEEP_S}}
    return doc


def measure_latency(plan: Plan, base: str, roots: Sequence[int], database: str) -> dict[str, Any]:
    """Push latency while a steady stream of demo runs keeps both workers busy: chains
    are watched one after another until enough nodes were seen completed."""
    session = session_cookie("admin")
    graphs = resolved(sleepy_chain_doc(plan.chain_length))
    latencies: list[float] = []
    chains = 0
    with SteadyStream(plan.in_flight) as stream:
        time.sleep(5)  # until the stream is steady
        stream.measuring = True
        finished_before, started = sum(stream.finished.values()), time.monotonic()
        cpu_before = serving_cpu(roots, database)
        while len(latencies) < plan.latency_samples and chains < plan.latency_chains:
            run_id = start_run(graphs, "latency-chain", {})
            latencies += watch_latencies(base, session, run_id, seconds=120)
            chains += 1
        seconds = time.monotonic() - started
        cpu_after = serving_cpu(roots, database)
        stream.measuring = False
        background = sum(stream.finished.values()) - finished_before
        left = list(stream.live)
    wait_finished(left, 300)
    failed = {status: n for status, n in stream.finished.items() if status != "completed"}
    return {"samples": len(latencies), "chains": chains, "seconds": seconds,
            "median_ms": statistics.median(latencies) * 1e3,
            "p95_ms": percentile(latencies, 0.95) * 1e3,
            "p99_ms": percentile(latencies, 0.99) * 1e3, "max_ms": max(latencies) * 1e3,
            "background_per_s": background / seconds, "in_flight": plan.in_flight,
            "unfinished_min": min(stream.unfinished_seen, default=0),
            "unfinished_median": statistics.median(stream.unfinished_seen or [0]),
            "not_completed": failed,
            "cores_used": {part: (cpu_after[part] - cpu_before[part]) / seconds
                           for part in SERVING_PARTS}}  # fmt: skip


# ---------------------------------------------------------------- 4. publishing on and off


@contextmanager
def list_socket(base: str, session: str) -> Iterator[list[int]]:
    """Keep a runs-list socket open, counting the messages it receives."""
    received = [0]
    stop = threading.Event()
    with connect(base, "/ws/runs/", session) as socket:

        def read() -> None:
            while not stop.is_set():
                try:
                    socket.recv(timeout=0.2)
                    received[0] += 1
                except TimeoutError:
                    continue
                except Exception:
                    return

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        try:
            yield received
        finally:
            stop.set()
            reader.join(timeout=2)


def batch_rate(plan: Plan) -> float:
    from django.db import transaction

    starts = demo_starts()
    with transaction.atomic():
        ids = [starts[i % len(starts)]() for i in range(plan.batch_runs)]
        released = time.time()
    end = wait_finished(ids, 300)
    return plan.batch_runs / (end - released)


CLOCK_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def processes() -> dict[int, tuple[int, str, float]]:
    """Return every process as pid → (parent pid, command line, CPU seconds used)."""
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue  # it exited meanwhile
        fields = stat[stat.rindex(")") + 2 :].split()
        found[int(entry.name)] = (int(fields[1]), command,
                                  (int(fields[11]) + int(fields[12])) / CLOCK_TICKS)  # fmt: skip
    return found


SERVING_PARTS = ("workers", "Daphne", "PostgreSQL", "Redis")


def serving_cpu(roots: Sequence[int], database: str) -> dict[str, float]:
    """CPU seconds used so far by what serves the runs, by part: the worker processes and
    Daphne with their children, PostgreSQL's backends on the benchmark's database, Redis."""
    table = processes()
    chosen = set(roots)
    grew = True
    while grew:
        children = {pid for pid, (parent, _, _) in table.items() if parent in chosen}
        grew = not children <= chosen
        chosen |= children
    for pid, (_, command, _) in table.items():
        if command.startswith("redis-server") or f" {database} " in f" {command} ":
            chosen.add(pid)
    used = dict.fromkeys(SERVING_PARTS, 0.0)
    for pid in chosen & set(table):
        command = table[pid][1]
        part = ("Redis" if command.startswith("redis-server") else
                "PostgreSQL" if f" {database} " in f" {command} " else
                "Daphne" if "daphne" in command else "workers")  # fmt: skip
        used[part] += table[pid][2]
    return used


def measure_publishing(plan: Plan, procs: Processes, base: str, daphne: int,
                       database: str) -> dict[str, Any]:  # fmt: skip
    """Runs/s and CPU per run with publishing on and off, in rounds ordered off-on-on-off
    (so a drift of the machine weighs on both alike), fresh workers for each round; a
    runs-list socket is open throughout. Each pair of rounds gives one ratio."""
    from django.conf import settings

    session = session_cookie("admin")
    rounds: list[dict[str, Any]] = []
    messages = 0
    for index in range(plan.publish_rounds):
        setting = ("off", "on", "on", "off")[index % 4]
        procs.env["BRAID_LIVE"] = "1" if setting == "on" else "0"
        settings.BRAID_LIVE = setting == "on"  # this process's commits publish too
        workers = start_workers(procs, "braid", [f"pub-{index}-a", f"pub-{index}-b"],
                                [["--beat"], []])  # fmt: skip
        roots = [daphne, *(process.pid for process in workers)]
        try:
            with list_socket(base, session) as received:
                batch_rate(plan)  # warm up
                before = serving_cpu(roots, database)
                rates = [batch_rate(plan) for _ in range(plan.batches)]
                after = serving_cpu(roots, database)
                time.sleep(0.5)
                messages += received[0] if setting == "on" else 0
        finally:
            for process in workers:
                procs.stop(process)
        runs = plan.batches * plan.batch_runs
        cpu = {part: 1000 * (after[part] - before[part]) / runs for part in SERVING_PARTS}
        cpu["all"] = sum(cpu.values())
        rounds.append({"setting": setting, "rate": statistics.median(rates), "cpu": cpu,
                       "cpu_ms": cpu["all"]})  # fmt: skip
    settings.BRAID_LIVE = True
    pairs = [(rounds[i], rounds[i + 1]) for i in range(0, len(rounds) - 1, 2)]
    ratios, cpu_ratios = [], []
    for first, second in pairs:
        on, off = (first, second) if first["setting"] == "on" else (second, first)
        ratios.append(on["rate"] / off["rate"])
        cpu_ratios.append(off["cpu_ms"] / on["cpu_ms"])  # runs per CPU second, on / off
    by_setting = {s: [r for r in rounds if r["setting"] == s] for s in ("on", "off")}
    return {"rounds": rounds, "ratios": ratios, "ratio": statistics.median(ratios),
            "cpu_ratios": cpu_ratios, "cpu_ratio": statistics.median(cpu_ratios),
            "median": {s: statistics.median(r["rate"] for r in rs) for s, rs in by_setting.items()},
            "cpu": {s: {part: statistics.median(r["cpu"][part] for r in rs)
                        for part in (*SERVING_PARTS, "all")} for s, rs in by_setting.items()},
            "list_messages": messages}  # fmt: skip


def drain_here(run_id: str, rounds: int = 500) -> None:
    """Advance a run and carry out its actions in this process until it stops moving (a
    foreach of 10,000 items takes about 170 rounds)."""
    from engine.models import Dispatch
    from engine.runtime import results, step

    for _ in range(rounds):
        progressed = step.advance(run_id) > 0
        waiting = Dispatch.objects.filter(run_id=run_id, completed_at=None)
        dispatches = list(waiting.values_list("pk", flat=True))
        if dispatches:
            results.run_actions(dispatches)
            progressed = True
        if not progressed:
            return


def measure_hot_path(plan: Plan) -> dict[str, Any]:
    """The engine's own cost of publishing: demo runs driven to the end in this process
    (no broker, no worker scheduling noise), publishing on and off in alternating batches,
    the order swapped every round; the publisher thread sends through Redis meanwhile."""
    from django.conf import settings

    from engine.live import PUBLISHER

    starts = demo_starts()
    ratios: list[float] = []
    cpu_ratios: list[float] = []
    rates: dict[str, list[float]] = {"on": [], "off": []}
    for round_number in range(plan.hot_rounds + 1):
        order = ("off", "on") if round_number % 2 else ("on", "off")
        wall, cpu = {}, {}
        for setting in order:
            settings.BRAID_LIVE = setting == "on"
            ids = [starts[i % len(starts)]() for i in range(plan.hot_runs)]
            started, used = time.perf_counter(), time.process_time()
            for run_id in ids:
                drain_here(run_id)
            # Process CPU time counts the publisher thread too, and a busy machine hardly
            # moves it; wall time is what a user waits for.
            wall[setting] = plan.hot_runs / (time.perf_counter() - started)
            cpu[setting] = plan.hot_runs / (time.process_time() - used)
        if round_number == 0:
            continue  # warm-up
        ratios.append(wall["on"] / wall["off"])
        cpu_ratios.append(cpu["on"] / cpu["off"])
        for setting, rate in wall.items():
            rates[setting].append(rate)
    settings.BRAID_LIVE = True
    thread = PUBLISHER.thread
    return {"ratios": ratios, "ratio": statistics.median(ratios),
            "cpu_ratios": cpu_ratios, "cpu_ratio": statistics.median(cpu_ratios),
            "median_on": statistics.median(rates["on"]),
            "median_off": statistics.median(rates["off"]),
            "thread": thread is not None and thread.is_alive()}  # fmt: skip


# ---------------------------------------------------------------- the run


def wait_http(base: str, seconds: float = 60) -> None:
    import urllib.request

    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(base + "/login/", timeout=2).read()
            return
        except OSError:
            time.sleep(0.3)
    raise RuntimeError(f"Daphne did not answer at {base}")


def verdict(met: bool) -> str:
    """Return how a figure stands against its target."""
    return "MET" if met else "MISSED"


def ms(case: dict[str, Any]) -> str:
    """Return `median (p95 …, min-max, n=…)` of a timed subject."""
    return (f"{case['median_ms']:,.1f} ms (p95 {case['p95_ms']:,.1f}, "
            f"{case['min_ms']:,.1f}-{case['max_ms']:,.1f}, n={case['n']})")  # fmt: skip


def when(part: dict[str, Any], results: dict[str, Any]) -> str:
    """Return the line saying when, where and under what load a section was measured."""
    return (f"Measured {part['at']} by `python -m bench.monitor{results['mode']}` on "
            f"{results['machine']}, shared with other jobs; load average (1, 5, 15 min) "
            f"{part['load_before']} before, {part['load_after']} after.")  # fmt: skip


def render_walk(part: dict[str, Any], results: dict[str, Any]) -> list[str]:
    lines = ["## The color walk and the execution tree, pure", "", when(part, results), "",
             "Medians with p95 (nearest rank), min-max and the number of timings; the "
             "subjects were timed in interleaved rounds, each after a `gc.collect()`.", "",
             "Synthetic rows, half the nodes completed and the rest absent, run running:", "",
             "| shape | nodes | `explain` | µs per node |",
             "| --- | ---: | --- | ---: |"]  # fmt: skip
    for case in part["synthetic"]:
        lines.append(f"| {case['shape']} | {case['nodes']:,} | {ms(case)} | "
                     f"{case['us_per_node']:.2f} |")  # fmt: skip
    lines += ["", "Rows and traces of real runs: stepped here by the scheduler, the "
              "registry's `noop` carrying out each action in the order asked (the fork is "
              "`bench.durable.fork_doc`, one noop task per branch; the foreach has "
              "concurrency 10 and a body of four nodes: a task whose output is appended, "
              "an `if`, then a `set` into a sum or another task). `explain` is the walk "
              f"(target: under {WALK_TARGET_MS} ms); `executions` builds the execution "
              "tree from the whole trace, as `GET /executions/` and a socket's snapshot do.",
              "", "| run | status | node rows | trace events | executions | `explain` | "
              f"< {WALK_TARGET_MS} ms | `executions` |",
              "| --- | --- | ---: | ---: | ---: | --- | --- | --- |"]  # fmt: skip
    for case in part["runs"]:
        walk = case["walk"]
        lines.append(f"| {case['label']} | {case['status']} | {case['rows']:,} | "
                     f"{case['events']:,} | {case['executions']:,} | {ms(walk)} | "
                     f"{verdict(walk['median_ms'] < WALK_TARGET_MS)} | "
                     f"{ms(case['executions_time'])} |")  # fmt: skip
    for profile in part.get("profiles", []):
        lines += ["", f"### Where the time of {profile['title']} goes (it missed)", "",
                  "One call under cProfile:", "", *profile_tables(profile)]  # fmt: skip
    return lines


def profile_tables(profile: dict[str, Any]) -> list[str]:
    """Return the tables of one profiled call."""
    lines = [f"{profile['profiled_ms']:,.0f} ms profiled (the profiler slows Python calls, so "
             "read the shares, not the seconds). Braid's functions with the most "
             "cumulative time:", "",
             "| function | cumulative s | own s |", "| --- | ---: | ---: |"]  # fmt: skip
    for row in profile["ours"]:
        lines.append(f"| `{row['function']}` | {row['cumulative_s']:.3f} | {row['own_s']:.3f} |")
    lines += ["", "The functions (anyone's) with the most own time:", "",
              "| function | own s | cumulative s |", "| --- | ---: | ---: |"]  # fmt: skip
    for row in profile["own"]:
        lines.append(f"| `{row['function']}` | {row['own_s']:.3f} | {row['cumulative_s']:.3f} |")
    return lines


def render_tree(part: dict[str, Any], results: dict[str, Any]) -> list[str]:
    lines = ["## `GET /api/runs/<id>/tree/` and `/executions/`, server-side, PostgreSQL", "",
             when(part, results), "",
             "Through Django's handler in the bench process (the SELECTs, the walk, the "
             "JSON), logged in as the admin; every subject once per round, in interleaved "
             "rounds. The fork and the foreach are durable runs started with "
             "`engine.runtime.runs.create_run` and driven to the end in this process by "
             "`step.advance` and `results.run_actions` "
             f"({part['fork_s']:.1f} s and {part['foreach_s']:.1f} s). Targets: "
             f"tree/ under {WALK_TARGET_MS} ms, executions/ under {EXECUTIONS_TARGET_MS} "
             "ms, on the median.", ""]  # fmt: skip
    if part["remark"]:
        lines += [f"The fork of {WIDE:,} is over the product's graph-size limit, which "
                  f"refuses it in the designer and the API (\"{part['remark']}\"); the "
                  "engine runs a graph it is handed, so the run was started from the "
                  "graph directly. A flow reaches 10,000 node rows of fork shape only "
                  "through subflows.", ""]  # fmt: skip
    lines += ["| endpoint | run | node rows | trace events | queries | bytes | time | target |",
              "| --- | --- | ---: | ---: | ---: | ---: | --- | --- |"]  # fmt: skip
    for case in part["cases"]:
        lines.append(f"| {case['endpoint']} | {case['label']} | {case['rows']:,} | "
                     f"{case['events']:,} | {case['queries']} | {case['bytes']:,} | "
                     f"{ms(case)} | < {case['target_ms']} ms: "
                     f"{verdict(case['median_ms'] < case['target_ms'])} |")  # fmt: skip
    for case in part["cases"]:
        if "profile" not in case:
            continue
        profile = case["profile"]
        lines += ["", f"### Where the time of `{case['endpoint']}` on the {case['label']} goes",
                  "", f"One request: {profile['plain_ms']:,.0f} ms, of which "
                  f"{profile['sql_ms']:,.0f} ms in PostgreSQL as Django timed its "
                  f"{profile['queries']} queries. Then one request under cProfile:", "",
                  *profile_tables(profile)]  # fmt: skip
    return lines


def render_latency(part: dict[str, Any], results: dict[str, Any]) -> list[str]:
    missing = part["not_completed"]
    return ["## Push latency under sustained load, commit → websocket client", "",
            when(part, results), "",
            "Scaled mode: Daphne and two `celery worker --concurrency=2` (one with "
            f"`--beat`). A thread of the bench keeps {part['in_flight']} demo runs "
            "unfinished the whole time: every 20 ms it starts, in one transaction, a run "
            "for each that finished; it ran 5 s before and all through the measurement. "
            f"Meanwhile chains of tasks that each sleep {SLEEP_S:g} s (so each node "
            "commits on its own) are started one after another and watched on a real "
            "websocket client; each node's latency is the client's receive time minus the "
            "`updated_at` of its completed row (written just before its commit, so the "
            "figure includes the rest of that transaction); the same clock on both sides. "
            "Percentiles are nearest-rank. (Until this run the section watched chains of "
            "noop tasks while bursts of 40, then 10, background runs were started: a "
            "lighter load, with samples that arrived a chain at a time.)",
            "",
            f"- {part['samples']} samples from {part['chains']} chains over "
            f"{part['seconds']:.0f} s: median {part['median_ms']:,.0f} ms, p95 "
            f"{part['p95_ms']:,.0f} ms, p99 {part['p99_ms']:,.0f} ms, max "
            f"{part['max_ms']:,.0f} ms",
            f"- p99 under {P99_TARGET_MS} ms (issue 30): "
            f"{verdict(part['p99_ms'] < P99_TARGET_MS)}; p95 under {P95_TARGET_MS} ms "
            f"(the earlier target): {verdict(part['p95_ms'] < P95_TARGET_MS)}",
            f"- the load: {part['background_per_s']:.1f} background runs finished per "
            f"second while measuring; unfinished runs seen before each top-up: median "
            f"{part['unfinished_median']:.0f}, minimum {part['unfinished_min']} of "
            f"{part['in_flight']}"
            + (f"; runs that did not complete: {missing}" if missing else
               "; every background run completed"),
            "- CPU used while measuring, in cores (of "
            f"{os.cpu_count()}): " + ", ".join(f"{name} {used:.2f}" for name, used
                                               in part["cores_used"].items())
            + " (the workers and Daphne with their children, PostgreSQL's backends on the "
            "bench's database, the whole Redis server, which other jobs use too)",
            ]  # fmt: skip


def render_publishing(part: dict[str, Any], results: dict[str, Any]) -> list[str]:
    plan = results["plan"]
    rounds = ", ".join(f"{r['setting']} {r['rate']:.1f}" for r in part["rounds"])
    lines = ["## Runs/s of the demo flows, live publishing on and off", "",
             when(part, results), "",
             "Scaled mode: Daphne, two `celery worker --concurrency=2` and a runs-list socket "
             "open; rounds in the order off, on, on, off, each with fresh workers, a warm-up "
             f"batch and {plan.batches} timed batches of {plan.batch_runs} "
             "runs (median per round). Each pair of rounds gives one ratio.", "",
             f"- runs/s per round: {rounds}",
             f"- medians: off {part['median']['off']:.1f}, on {part['median']['on']:.1f} "
             f"runs/s; the runs-list socket received {part['list_messages']} messages",
             f"- on / off per pair: {', '.join(f'{r:.3f}' for r in part['ratios'])}",
             f"- median on / off: {part['ratio']:.3f} (target: 0.95 or more: "
             f"{verdict(part['ratio'] >= 0.95)})",
             f"- runs per CPU second, on / off per pair: "
             f"{', '.join(f'{r:.3f}' for r in part['cpu_ratios'])}; median "
             f"{part['cpu_ratio']:.3f}",
             "", "CPU ms per run, medians of the rounds (the workers and Daphne with their "
             "children, PostgreSQL's backends on this database, Redis):", "",
             "| publishing | " + " | ".join(SERVING_PARTS) + " | all |",
             "| --- |" + " ---: |" * (len(SERVING_PARTS) + 1)]  # fmt: skip
    for setting in ("off", "on"):
        cells = [f"{part['cpu'][setting][p]:.2f}" for p in (*SERVING_PARTS, "all")]
        lines.append(f"| {setting} | {' | '.join(cells)} |")
    return lines


def render_hot_path(part: dict[str, Any], results: dict[str, Any]) -> list[str]:
    return ["## The engine's cost of publishing, in one process", "", when(part, results), "",
            "Demo runs driven to the end by `step.advance` and `results.run_actions` in "
            "the bench process on PostgreSQL (no broker or worker scheduling in the "
            "figure), publishing on and off in alternating batches; the publisher thread "
            f"sends through Redis {'(it ran)' if part['thread'] else '(it did not start!)'}.",
            "",
            f"- runs/s off {part['median_off']:.1f}, on {part['median_on']:.1f} (medians)",
            f"- on / off per round: {', '.join(f'{r:.3f}' for r in part['ratios'])}",
            f"- median on / off: {part['ratio']:.3f} (target: 0.95 or more: "
            f"{verdict(part['ratio'] >= 0.95)})",
            f"- runs per CPU second, on / off per round: "
            f"{', '.join(f'{r:.3f}' for r in part['cpu_ratios'])}; median "
            f"{part['cpu_ratio']:.3f}"]  # fmt: skip


RENDERERS: dict[str, Callable[[dict[str, Any], dict[str, Any]], list[str]]] = {
    "walk": render_walk, "tree": render_tree, "latency": render_latency,
    "publishing": render_publishing, "hot_path": render_hot_path,
}  # fmt: skip
TITLE = "# The live monitor's benchmark"
MARK = "<!-- bench.monitor section: {} -->"


def render(results: dict[str, Any], earlier: str = "") -> str:
    """Return the report: the sections measured now, the others as `earlier` had them."""
    kept = sections_of(earlier)
    lines = [TITLE, "", "Written by `python -m bench.monitor`; each section says when, on "
             "what and under what load it was measured, and sections not measured in a "
             "run are kept as they were (`--only`).", ""]  # fmt: skip
    for section in SECTIONS:
        if section in results:
            body = "\n".join(RENDERERS[section](results[section], results))
        elif section in kept:
            body = kept[section]
        else:
            continue
        lines += [MARK.format(section), body.strip(), ""]
    for section, body in kept.items():  # written by hand (notes on a run): kept at the end
        if section not in SECTIONS:
            lines += [MARK.format(section), body.strip(), ""]
    return "\n".join(lines)


def sections_of(text: str) -> dict[str, str]:
    """Return the sections of an earlier report by name."""
    found = {}
    pattern = re.compile(r"^<!-- bench\.monitor section: (\w+) -->$", re.MULTILINE)
    marks = list(pattern.finditer(text))
    ends = [following.start() for following in marks[1:]] + [len(text)] if marks else []
    for mark, end in zip(marks, ends, strict=True):
        found[mark.group(1)] = text[mark.end() : end].strip()
    return found


def chosen_sections(text: str) -> list[str]:
    """Return the sections named by --only, in the report's order."""
    named = {name.strip() for name in text.split(",") if name.strip()}
    unknown = named - set(SECTIONS)
    if unknown:
        raise SystemExit(f"unknown sections {sorted(unknown)}; choose from {', '.join(SECTIONS)}")
    return [section for section in SECTIONS if section in named]


def measure(sections: list[str], plan: Plan, procs: Processes, database: str,
            results: dict[str, Any]) -> None:  # fmt: skip
    """Measure the chosen sections: in-process ones first, then those on served processes."""
    if "walk" in sections:
        with stamped(results, "walk") as part:
            part |= measure_walk(plan)
    if "tree" in sections:
        with stamped(results, "tree") as part:
            part |= measure_tree(plan)
    if "hot_path" in sections:
        with stamped(results, "hot_path") as part:
            part |= measure_hot_path(plan)
    if not set(sections) & set(SERVED):
        return
    flush_redis()  # the advance messages nobody consumed
    port = 8600 + secrets.randbelow(300)
    base = f"http://127.0.0.1:{port}"
    daphne = procs.start("daphne", [str(BIN / "daphne"), "-b", "127.0.0.1", "-p", str(port),
                                    "braid.asgi:application"])  # fmt: skip
    wait_http(base)
    if "latency" in sections:
        workers = start_workers(procs, "braid", ["lat-a", "lat-b"], [["--beat"], []])
        try:
            with stamped(results, "latency") as part:
                roots = [daphne.pid, *(process.pid for process in workers)]
                part |= measure_latency(plan, base, roots, database)
        finally:
            for process in workers:
                procs.stop(process)
    if "publishing" in sections:
        with stamped(results, "publishing") as part:
            part |= measure_publishing(plan, procs, base, daphne.pid, database)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--out", type=Path)
    parser.add_argument(
        "--only",
        default=",".join(SECTIONS),
        help=f"sections to measure, comma-separated: {','.join(SECTIONS)}",
    )
    parser.add_argument(
        "--database-prefix",
        default="braid_monitor",
        help="the benchmark's PostgreSQL database is PREFIX_<random>",
    )
    args = parser.parse_args(argv)
    sections = chosen_sections(args.only)
    signal.signal(signal.SIGTERM, terminate)
    plan = QUICK if args.quick else FULL
    database = f"{args.database_prefix}_{secrets.token_hex(4)}"
    var_dir = tempfile.mkdtemp(prefix="braid-monitor-")
    procs = Processes(worker_env(database, var_dir) | {"DJANGO_HTTPS": "0"}, Path(var_dir))
    admin_execute(f"CREATE DATABASE {database}")
    results: dict[str, Any] = {"mode": " --quick" if args.quick else "", "plan": plan,
                               "machine": machine()}  # fmt: skip
    try:
        flush_redis()
        configure_django(procs.env)
        manage(procs.env, "migrate", "--noinput")
        manage(procs.env, "braid", "demo")
        measure(sections, plan, procs, database, results)
    finally:
        procs.stop_all()
        cleanup(database)
    raw = Path(var_dir) / "results.json"  # the figures survive a failed render
    raw.write_text(json.dumps(results, default=repr, indent=1))
    print(f"raw results: {raw}")
    earlier = args.out.read_text() if args.out and args.out.exists() else ""
    report = render(results, earlier)
    print(report)
    if args.out:
        args.out.write_text(report)
        print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
