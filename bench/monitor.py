"""The live monitor's costs: the color walk, the tree endpoint, push latency, publishing.

Usage: python -m bench.monitor [--quick] [--out bench/MONITOR.md]

1. The walk (`engine.core.colors.explain`), pure, on chains and forks of 1,000, 10,000
   and 100,000 nodes: µs per node, which stays flat if the walk is linear.
2. `GET /api/runs/<id>/tree/` for a run with 10,000 node rows on PostgreSQL, through
   Django's handler in this process (server-side time: the SELECTs, the walk, the JSON).
3. Push latency on scaled mode (Daphne plus two `celery worker --concurrency=2` over
   PostgreSQL and Redis) with both workers busy on other runs: from the commit of a
   node's completed row (its `updated_at`) to a real websocket client receiving the delta
   that shows it completed.
4. Runs/s of the demo flows with live publishing on (BRAID_LIVE=1, a runs-list socket
   open) against off (BRAID_LIVE=0), alternating, with fresh workers for each batch set.

Medians of one run are quoted; every process started here is stopped at the end.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import secrets
import signal
import statistics
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.durable import (
    BIN,
    DEMO_CASES,
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


@dataclass(frozen=True)
class Plan:
    walk_repeats: int
    tree_repeats: int
    latency_chains: int
    chain_length: int
    background_runs: int
    batch_runs: int
    batches: int
    publish_rounds: int
    hot_runs: int
    hot_rounds: int


FULL = Plan(walk_repeats=5, tree_repeats=15, latency_chains=6, chain_length=20,
            background_runs=40, batch_runs=100, batches=3, publish_rounds=16, hot_runs=40,
            hot_rounds=20)  # fmt: skip
QUICK = Plan(walk_repeats=3, tree_repeats=5, latency_chains=2, chain_length=10,
             background_runs=16, batch_runs=24, batches=2, publish_rounds=2, hot_runs=16,
             hot_rounds=4)  # fmt: skip


# ---------------------------------------------------------------- 1. the walk


def walk_case(shape: str, n: int, repeats: int) -> dict[str, Any]:
    """Time explain() on a run where half the nodes completed and the rest wait."""
    from engine.core.colors import explain
    from engine.core.events import RowStatus, RunStatus
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
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        verdicts = explain(graphs, rows, RunStatus.RUNNING)
        times.append(time.perf_counter() - started)
    assert len(verdicts) == len(doc["nodes"]), (len(verdicts), len(doc["nodes"]))
    median = statistics.median(times)
    return {"shape": shape, "nodes": len(doc["nodes"]), "median_ms": median * 1e3,
            "us_per_node": median * 1e6 / len(doc["nodes"])}  # fmt: skip


def measure_walk(plan: Plan) -> list[dict[str, Any]]:
    return [
        walk_case(shape, n, plan.walk_repeats) for shape in ("chain", "fork") for n in WALK_SIZES
    ]


# ---------------------------------------------------------------- 2. the tree endpoint


def measure_tree(plan: Plan) -> dict[str, Any]:
    """Server-side time of GET tree/ for a run with 10,000 node rows, on PostgreSQL."""
    from django.contrib.auth.models import User
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext
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
    client = Client(HTTP_HOST="127.0.0.1")
    client.force_login(User.objects.get(username="admin"))
    client.get(f"/api/runs/{run.pk}/tree/")  # warm the session and caches
    times = []
    for _ in range(plan.tree_repeats):
        started = time.perf_counter()
        response = client.get(f"/api/runs/{run.pk}/tree/")
        times.append(time.perf_counter() - started)
        assert response.status_code == 200, response.status_code
    with CaptureQueriesContext(connection) as queries:
        client.get(f"/api/runs/{run.pk}/tree/")
    return {"rows": TREE_ROWS - 1, "median_ms": statistics.median(times) * 1e3,
            "p95_ms": percentile(times, 0.95) * 1e3, "queries": len(queries),
            "bytes": len(response.content)}  # fmt: skip


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
        while status not in ("completed", "failed", "cancelled") and time.monotonic() < deadline:
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
    from engine.services import latest_version

    starts = []
    for slug, input_value in DEMO_CASES:
        version = latest_version(slug)
        graphs = resolved(version.graph)
        starts.append(lambda g=graphs, s=slug, i=input_value, v=version: start_run(g, s, i, v))
    return starts


def measure_latency(plan: Plan, base: str) -> dict[str, Any]:
    """Push latency with both workers busy on background demo runs."""
    session = session_cookie("admin")
    starts = demo_starts()
    background = [starts[i % len(starts)]() for i in range(plan.background_runs)]
    graphs = resolved(chain_doc(plan.chain_length))
    latencies: list[float] = []
    for _ in range(plan.latency_chains):
        run_id = start_run(graphs, "latency-chain", {})
        latencies += watch_latencies(base, session, run_id, seconds=120)
        background += [starts[i % len(starts)]() for i in range(plan.background_runs // 4)]
    wait_finished(background, 300)
    return {"samples": len(latencies), "median_ms": statistics.median(latencies) * 1e3,
            "p95_ms": percentile(latencies, 0.95) * 1e3,
            "max_ms": max(latencies) * 1e3}  # fmt: skip


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


def drain_here(run_id: str) -> None:
    """Advance a run and carry out its actions in this process until it stops moving."""
    from engine import durable
    from engine.models import Dispatch

    for _ in range(500):
        progressed = durable.advance(run_id) > 0
        waiting = Dispatch.objects.filter(run_id=run_id, completed_at=None)
        dispatches = list(waiting.values_list("pk", flat=True))
        if dispatches:
            durable.run_actions(dispatches)
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
    ratios, cpu_ratios, rates = [], [], {"on": [], "off": []}
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


def render(results: dict[str, Any]) -> str:
    lines = ["# The live monitor's benchmark", "",
             f"Measured {results['at']} by `python -m bench.monitor{results['mode']}` on this "
             f"machine ({os.cpu_count()} cores). Medians of one run.", "",
             "## The color walk (pure, half the nodes completed)", "",
             "| shape | nodes | median | µs per node |",
             "| --- | ---: | ---: | ---: |"]  # fmt: skip
    for case in results["walk"]:
        lines.append(f"| {case['shape']} | {case['nodes']:,} | {case['median_ms']:,.1f} ms | "
                     f"{case['us_per_node']:.2f} |")  # fmt: skip
    tree = results["tree"]
    lines += ["", "## `GET /api/runs/<id>/tree/`, 10,000 node rows, PostgreSQL", "",
              f"- server-side: median {tree['median_ms']:,.1f} ms, p95 {tree['p95_ms']:,.1f} ms "
              f"(target: under 100 ms: {verdict(tree['median_ms'] < 100)}); "
              f"{tree['queries']} queries (session, user, run, rows); "
              f"{tree['bytes']:,} bytes", ""]  # fmt: skip
    push = results["latency"]
    lines += ["## Push latency, commit → websocket client, two workers busy", "",
              f"- {push['samples']} samples: median {push['median_ms']:,.0f} ms, "
              f"p95 {push['p95_ms']:,.0f} ms (target: under 250 ms: "
              f"{verdict(push['p95_ms'] < 250)}), max {push['max_ms']:,.0f} ms",
              ""]  # fmt: skip
    pub = results["publishing"]
    rounds = ", ".join(f"{r['setting']} {r['rate']:.1f}" for r in pub["rounds"])
    lines += ["## Runs/s of the demo flows, live publishing on and off", "",
              "Scaled mode: Daphne, two `celery worker --concurrency=2` and a runs-list socket "
              "open; rounds in the order off, on, on, off, each with fresh workers, a warm-up "
              f"batch and {results['plan'].batches} timed batches of {results['plan'].batch_runs} "
              "runs (median per round). Each pair of rounds gives one ratio.", "",
              f"- runs/s per round: {rounds}",
              f"- medians: off {pub['median']['off']:.1f}, on {pub['median']['on']:.1f} runs/s; "
              f"the runs-list socket received {pub['list_messages']} messages",
              f"- on / off per pair: {', '.join(f'{r:.3f}' for r in pub['ratios'])}",
              f"- median on / off: {pub['ratio']:.3f} (target: 0.95 or more: "
              f"{verdict(pub['ratio'] >= 0.95)})",
              f"- runs per CPU second, on / off per pair: "
              f"{', '.join(f'{r:.3f}' for r in pub['cpu_ratios'])}; median {pub['cpu_ratio']:.3f}",
              "", "CPU ms per run, medians of the rounds (the workers and Daphne with their "
              "children, PostgreSQL's backends on this database, Redis):", "",
              "| publishing | " + " | ".join(SERVING_PARTS) + " | all |",
              "| --- |" + " ---: |" * (len(SERVING_PARTS) + 1)]  # fmt: skip
    for setting in ("off", "on"):
        cells = [f"{pub['cpu'][setting][part]:.2f}" for part in (*SERVING_PARTS, "all")]
        lines.append(f"| {setting} | {' | '.join(cells)} |")
    lines.append("")
    hot = results["hot_path"]
    lines += ["## The engine's cost of publishing, in one process", "",
              "Demo runs driven to the end by `durable.advance` and `durable.run_actions` in the "
              "bench process on PostgreSQL (no broker or worker scheduling in the figure), "
              "publishing on and off in alternating batches; the publisher thread sends "
              f"through Redis {'(it ran)' if hot['thread'] else '(it did not start!)'}.", "",
              f"- runs/s off {hot['median_off']:.1f}, on {hot['median_on']:.1f} (medians)",
              f"- on / off per round: {', '.join(f'{r:.3f}' for r in hot['ratios'])}",
              f"- median on / off: {hot['ratio']:.3f} (target: 0.95 or more: "
              f"{verdict(hot['ratio'] >= 0.95)})",
              f"- runs per CPU second, on / off per round: "
              f"{', '.join(f'{r:.3f}' for r in hot['cpu_ratios'])}; median "
              f"{hot['cpu_ratio']:.3f}", ""]  # fmt: skip
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    signal.signal(signal.SIGTERM, terminate)
    plan = QUICK if args.quick else FULL
    database = f"braid_monitor_{secrets.token_hex(4)}"
    var_dir = tempfile.mkdtemp(prefix="braid-monitor-")
    procs = Processes(worker_env(database, var_dir) | {"DJANGO_HTTPS": "0"}, Path(var_dir))
    admin_execute(f"CREATE DATABASE {database}")
    results: dict[str, Any] = {"at": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
                               "mode": " --quick" if args.quick else "", "plan": plan}  # fmt: skip
    try:
        flush_redis()
        configure_django(procs.env)
        manage(procs.env, "migrate", "--noinput")
        manage(procs.env, "braid", "demo")
        results["walk"] = measure_walk(plan)
        results["tree"] = measure_tree(plan)
        results["hot_path"] = measure_hot_path(plan)
        flush_redis()  # the advance messages nobody consumed
        port = 8600 + secrets.randbelow(300)
        base = f"http://127.0.0.1:{port}"
        daphne = procs.start("daphne", [str(BIN / "daphne"), "-b", "127.0.0.1", "-p", str(port),
                               "braid.asgi:application"])  # fmt: skip
        wait_http(base)
        workers = start_workers(procs, "braid", ["lat-a", "lat-b"], [["--beat"], []])
        try:
            results["latency"] = measure_latency(plan, base)
        finally:
            for process in workers:
                procs.stop(process)
        results["publishing"] = measure_publishing(plan, procs, base, daphne.pid, database)
    finally:
        procs.stop_all()
        cleanup(database)
    report = render(results)
    print(report)
    if args.out:
        args.out.write_text(report + "\n")
        print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
