"""kill -9 mid-run, per subject: what survives, measured.

  python -m bench.durable_peers.kill braid|temporal|dbos|langgraph|celery --out kill.jsonl

Every subject runs a chain of KILL_STEPS steps of 0.1 s (undisturbed: about 2.2 s), and a
worker is killed with SIGKILL KILL_AFTER_S after the start:
- braid: with prefork workers, the pool process running the current action; then, in a
  second run, the whole Celery worker (its parent and its pool processes), which stays dead;
  with the thread pool (the Procfile's default) the action runs in the worker process itself,
  so only the whole worker is killed;
- temporal: the worker process that started the latest activity;
- dbos: the executor running the workflow; looked at 10 s later, then restarted under the
  same executor id, as a supervisor would;
- langgraph: the process running invoke(); then invoke(None) on the same thread;
- celery: as Braid's, the pool process holding the chain's current task (prefork), then the
  whole worker (raw Celery keeps no state).
Each line says whether the run completed and when, from its start or from the restart.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from celery import chain

from bench.durable import Processes, flow
from bench.durable_peers.common import (
    POLL_S,
    ROOT,
    log,
    poll_until,
    procfile_workers,
    scratch,
)

KILL_STEPS = 20
KILL_AFTER_S = 0.8
GIVE_UP_S = 45.0  # a run not completed this long after the kill is reported as not completed


def parent_of(pid: int) -> int:
    """Return a process's parent pid, read from /proc."""
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


def finished_within(done: Callable[[], bool], seconds: float) -> float | None:
    """Return perf_counter when done() first holds, or None after `seconds`."""
    try:
        return poll_until(done, seconds)
    except TimeoutError:
        return None


def row(
    subject: str, case: str, began: float, ended: float | None, waited_s: float = GIVE_UP_S,
    **extra: Any,
) -> dict[str, Any]:  # fmt: skip
    """Return one result line: completed or not (within waited_s), and the seconds it took."""
    seconds = round(ended - began, 2) if ended is not None else None
    return {"subject": subject, "case": case, "completed": ended is not None,
            "seconds": seconds, "waited_s": waited_s, **extra}  # fmt: skip


def kill_cases() -> list[str]:
    """The kills a subject with the Procfile's workers gets: a pool process apart from its
    worker only under prefork (a thread pool runs the action in the worker itself)."""
    pooled = procfile_workers()[0].pool == "prefork"
    return ["none", *(["pool"] if pooled else []), "worker"]


def worker_of(pid: int) -> int:
    """Return the Celery worker (its main process) running a task in process `pid`: the pid
    itself under a thread pool, its parent under prefork."""
    return pid if procfile_workers()[0].pool != "prefork" else parent_of(pid)


def braid_case(case: str) -> Callable[[Any], dict[str, Any]]:
    """Return one Braid run with a kill of the `case` kind ('none', 'pool', 'worker')."""

    def once(graphs: Any) -> dict[str, Any]:
        from engine.models import Dispatch, Run
        from engine.runtime.runs import create_run

        began = time.perf_counter()
        run = str(create_run(graphs, "kill", {}).pk)
        victim = None
        if case != "none":
            time.sleep(KILL_AFTER_S)
            current = Dispatch.objects.filter(run_id=run, completed_at=None).exclude(claimed_by="")
            claimed = current.order_by("-id").values_list("claimed_by", flat=True).first()
            victim = int((claimed or "?:0").split(":")[1])
            if case == "pool":
                os.kill(victim, signal.SIGKILL)
            else:
                victim = worker_of(victim)
                os.killpg(victim, signal.SIGKILL)  # the worker runs in its own session
        finished = Run.objects.filter(pk=run, status="completed").exists
        return row("braid", case, began, finished_within(finished, GIVE_UP_S), victim=victim)

    return once


def kill_braid() -> list[dict[str, Any]]:
    """Braid's workers and beat as in braid_subject; no restart of what was killed."""
    from bench.durable_peers import braid_subject as b

    b.setup_django()
    from runs.services import resolve_graphs

    nodes = [{"id": f"t{i}", "type": "task", "action": "sleep", "params": {"seconds": 0.1}}
             for i in range(1, KILL_STEPS + 1)]  # fmt: skip
    ids = ["start", *(n["id"] for n in nodes), "end"]
    edges = [{"source": a, "target": c} for a, c in itertools.pairwise(ids)]
    graphs = resolve_graphs(flow("sleepy", nodes, edges))
    procs = Processes(b.env(), logs("braid"))
    try:
        b.start_braid(procs)
        return [braid_case(case)(graphs) for case in [*kill_cases(), "none"]]
    finally:
        procs.stop_all()


def logs(subject: str) -> Path:
    """Return the log folder of a subject's kill test."""
    path = scratch() / "logs" / f"kill-{subject}"
    path.mkdir(parents=True, exist_ok=True)
    return path


def kill_temporal() -> list[dict[str, Any]]:
    """The dev server and two workers; kill the one that started the latest activity."""
    from bench.durable_peers import temporal_subject as t

    procs = Processes(dict(os.environ), logs("temporal"))
    try:
        workers = t.start_temporal(procs)
        by_name = {f"worker{i}": w for i, w in enumerate(workers, 1)}
        return asyncio.run(temporal_runs(t.address(), by_name))
    finally:
        procs.stop_all()


async def temporal_runs(address: str, workers: dict[str, Any]) -> list[dict[str, Any]]:
    """An undisturbed run, a run with a kill, and one more on the survivor."""
    from temporalio.client import Client, WorkflowExecutionStatus

    from bench.durable_peers.temporal_app import QUEUE, SleepyChain

    client = await Client.connect(address)
    rows = []
    for kill in (False, True, False):
        began = time.perf_counter()
        handle = await client.start_workflow(SleepyChain.run, KILL_STEPS, id=f"kill-{uuid.uuid4()}",
                                             task_queue=QUEUE)  # fmt: skip
        victim = None
        if kill:
            await asyncio.sleep(KILL_AFTER_S)
            async for event in handle.fetch_history_events():
                if event.HasField("activity_task_started_event_attributes"):
                    victim = event.activity_task_started_event_attributes.identity
            if victim is None:
                raise RuntimeError("no activity had started")
            os.killpg(workers[victim].pid, signal.SIGKILL)
        ended = None
        while time.perf_counter() - began < GIVE_UP_S + KILL_AFTER_S:
            if (await handle.describe()).status == WorkflowExecutionStatus.COMPLETED:
                ended = time.perf_counter()
                break
            await asyncio.sleep(POLL_S)
        rows.append(row("temporal", "worker" if kill else "none", began, ended, victim=victim))
    return rows


def kill_dbos() -> list[dict[str, Any]]:
    """Two executors; kill the one running the workflow, look 10 s later, then restart it."""
    from bench.durable_peers import dbos_subject as d

    procs = Processes(dict(os.environ), logs("dbos"))
    try:
        workers = d.start_dbos(procs)
        dbos = d.Dbos()
        try:
            return [dbos_run(dbos, procs, workers, kill) for kill in (False, True)]
        finally:
            dbos.close()
    finally:
        procs.stop_all()


def dbos_run(dbos: Any, procs: Processes, workers: dict[str, Any], kill: bool) -> dict[str, Any]:
    """One sleepy chain, with or without killing its executor."""
    from bench.durable_peers.dbos_subject import APP

    began = time.perf_counter()
    workflow_id = dbos.enqueue("sleepy_chain", KILL_STEPS)

    def done() -> bool:
        return bool(dbos.finished([workflow_id]).get(workflow_id))

    if not kill:
        return row("dbos", "none", began, finished_within(done, GIVE_UP_S))
    time.sleep(KILL_AFTER_S)
    query = "SELECT executor_id FROM dbos.workflow_status WHERE workflow_uuid = %s"
    victim = dbos.db.execute(query, (workflow_id,)).fetchone()[0]
    os.killpg(workers[victim].pid, signal.SIGKILL)
    alone = finished_within(done, 10.0)
    steps = dbos.db.execute(
        "SELECT count(*) FROM dbos.operation_outputs WHERE workflow_uuid = %s", (workflow_id,)
    ).fetchone()[0]
    restarted = time.perf_counter()
    workers[victim] = procs.start(f"{victim}-restarted", [sys.executable, "-m", APP, victim])
    ended = alone or finished_within(done, GIVE_UP_S)
    return row(
        "dbos",
        "worker",
        began,
        alone,
        10.0,
        victim=victim,
        completed_after_restart=ended is not None,
        steps_recorded_before_restart=steps,
        seconds_from_restart=round(ended - restarted, 2) if ended and not alone else None,
    )


def langgraph_child(thread_id: str, how: str) -> None:
    """The kill test's LangGraph process: KILL_STEPS nodes of 0.1 s, printing 'ran' each."""
    from langgraph.checkpoint.postgres import PostgresSaver
    from langgraph.graph import END, START, StateGraph
    from psycopg_pool import ConnectionPool

    from bench.durable_peers.langgraph_subject import CONNECTION, URL, State

    def node(state: State) -> dict[str, Any]:
        time.sleep(0.1)
        print("ran", flush=True)
        return {"n": state.get("n", 0) + 1}

    graph = StateGraph(State)
    names = [f"s{i}" for i in range(KILL_STEPS)]
    for name in names:
        graph.add_node(name, node)
    for a, b in itertools.pairwise([START, *names, END]):
        graph.add_edge(a, b)
    with ConnectionPool(URL, kwargs=CONNECTION) as pool:
        shared: Any = pool  # as in langgraph_subject
        saver = PostgresSaver(shared)
        saver.setup()  # its tables, when no round ran before (idempotent)
        compiled: Any = graph.compile(checkpointer=saver)
        config = {"configurable": {"thread_id": thread_id}}
        out = compiled.invoke({"n": 0} if how == "start" else None, config, durability="sync")
    print("final", out["n"], flush=True)


def kill_langgraph() -> list[dict[str, Any]]:
    """Kill the process running the graph after 6 nodes; then invoke the thread again."""
    command = [sys.executable, "-m", "bench.durable_peers.kill", "langgraph-child"]
    began, thread_id = time.perf_counter(), str(uuid.uuid4())
    whole = subprocess.run([*command, thread_id, "start"], capture_output=True, text=True,
                           cwd=ROOT, check=True).stdout  # fmt: skip
    rows = [row("langgraph", "none", began, time.perf_counter(), nodes_run=whole.count("ran"),
                final=whole.split()[-1])]  # fmt: skip
    thread_id = str(uuid.uuid4())
    began = time.perf_counter()
    child = subprocess.Popen([*command, thread_id, "start"], stdout=subprocess.PIPE, text=True,
                             cwd=ROOT)  # fmt: skip
    assert child.stdout is not None
    ran = 0
    while ran < 6:
        ran += child.stdout.readline().startswith("ran")
    child.kill()
    child.wait()
    restarted = time.perf_counter()
    again = subprocess.run([*command, thread_id, "resume"], capture_output=True, text=True,
                           cwd=ROOT, check=True).stdout  # fmt: skip
    rows.append(row("langgraph", "process", began, None, 0.0, nodes_before_kill=ran,
                    completed_after_restart=again.split()[-1] == str(KILL_STEPS),
                    nodes_run_on_resume=again.count("ran"), final=again.split()[-1],
                    seconds_from_restart=round(time.perf_counter() - restarted, 2)))  # fmt: skip
    return rows


def kill_celery() -> list[dict[str, Any]]:
    """The floor's two workers; kill a pool process (prefork), then a whole worker, mid-chain."""
    from bench.durable_peers import celery_floor as c

    procs = Processes(c.floor_env(), logs("celery"))
    try:
        c.start_floor(procs)
        floor = c.Floor()
        return [celery_run(floor, case) for case in kill_cases()]
    finally:
        procs.stop_all()


def celery_run(floor: Any, case: str) -> dict[str, Any]:
    """One chain of sleepy tasks; kill the process (or its worker) running the current one."""
    from bench.durable_peers import celery_floor as c

    batch, began = str(uuid.uuid4()), time.perf_counter()
    steps = [c.sleepy.si() for _ in range(KILL_STEPS - 1)]
    chain(*steps, c.final.si(batch=batch, member="1")).delay()
    victim = None
    if case != "none":
        time.sleep(KILL_AFTER_S)
        victim = int(floor.redis.get(c.CURRENT))
        if case == "pool":
            os.kill(victim, signal.SIGKILL)
        else:
            victim = worker_of(victim)
            os.killpg(victim, signal.SIGKILL)
    ended = finished_within(lambda: "1" in floor.done(batch), GIVE_UP_S)
    return row("celery", case, began, ended, victim=victim)


KILLS: dict[str, Callable[[], list[dict[str, Any]]]] = {
    "braid": kill_braid, "temporal": kill_temporal, "dbos": kill_dbos,
    "langgraph": kill_langgraph, "celery": kill_celery,
}  # fmt: skip


def main(argv: list[str]) -> int:
    if argv[0] == "langgraph-child":
        langgraph_child(argv[1], argv[2])
        return 0
    rows = KILLS[argv[0]]()
    out = Path(argv[argv.index("--out") + 1]) if "--out" in argv else None
    for line in map(json.dumps, rows):
        log(line)
        if out is not None:
            with out.open("a") as f:
                f.write(line + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
