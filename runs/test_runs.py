"""The designer's test runs, played in worker processes under a wall time and a step budget.

A test run executes a draft that nobody published: a loop of 200,000 iterations, or six
of them at once, used to hold the web process's request threads for seconds and, through
the GIL, every other request of that process with them (/healthz took 4 s). So a test run
never executes in the web process. The request thread resolves and checks the graph (it
reads the database), hands the graphs to an idle worker of a small pool (at most
BRAID_TEST_RUN_WORKERS; the rest queue for a slot) and waits on a pipe, which holds no
GIL. The worker plays the run on an in-memory store:

- under BRAID_TEST_RUN_MAX_STEPS node executions (the core's step budget), and
- under BRAID_TEST_RUN_TIMEOUT_S of wall time, checked between events (an action's result,
  a timer, a decision) and enforced from outside: a worker that has not answered a second
  after the deadline is killed and replaced, and the run is reported as stopped.
- Timers are never slept on: the worker's clock skips to each timer's due time, so a
  `wait` of a day takes no time; `time_skipped_s` says how much was skipped. A timer
  racing an open approval fires only when due within TEST_RUN_TIMER_WAIT_S, as a
  designer deciding at once would see it.

Run as `python -m runs.test_runs`, this module is a worker: one JSON job per line in,
one JSON result per line out.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import os
import subprocess
import sys
import threading
import time
import uuid
from collections import deque
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from engine.core.events import Decision, Event, RequestApproval
from engine.core.graph import Graph, PolicyKind
from engine.core.runtime import EventRefused, InProcessRuntime, ManualClock
from engine.core.sandbox import _read_line
from engine.core.scheduler import abort
from engine.core.state import RunState
from engine.core.store import InMemoryStore

ROOT = str(Path(__file__).resolve().parents[1])
TEST_RUN_TIMER_WAIT_S = 2.0
TEST_RUN_USER = "designer test run"
START_TIMEOUT_S = 60.0  # a loaded machine can take seconds to start Python and Django
KILL_GRACE_S = 1.0  # past the deadline, before a silent worker is killed
# Settings the actions read: the worker applies the web process's values, not its own.
ACTION_SETTINGS = ("BRAID_HTTP_ALLOWLIST", "BRAID_HTTP_MAX_RESPONSE_BYTES", "BRAID_PYTHON_ACTIONS")


class WorkersBusy(Exception):
    """Every test-run worker stayed busy for as long as a test run may take."""


# ---------------------------------------------------------------- in the worker


@dataclasses.dataclass
class BudgetedRuntime(InProcessRuntime):
    """The in-process runtime that stops a run past a wall-clock deadline (monotonic)."""

    deadline: float = float("inf")
    timeout_s: float = 0.0

    def apply(self, state: RunState, event: Event, events: deque[Event]) -> RunState:
        if time.monotonic() <= self.deadline or state.status.finished:
            return super().apply(state, event, events)
        events.clear()
        reason = (
            f"the test run ran past its wall time of {self.timeout_s:g} s "
            "(BRAID_TEST_RUN_TIMEOUT_S)"
        )
        state, commands = abort(state, self.stamp(), reason)
        self.commit(state, commands)
        return state


def play(
    graphs: Mapping[str, Graph], input_value: Any, decisions: list[dict[str, str]],
    timeout_s: float,
) -> dict[str, Any]:  # fmt: skip
    """Run graphs on an in-memory store, taking each decision (`{node, decision}`) in
    order at that node's open approval; return the run's status, state, rows and colors."""
    from engine.actions import ACTIONS
    from engine.core.colors import explain_run

    store = InMemoryStore()
    started = dt.datetime.now(dt.UTC)
    clock = ManualClock(started)
    engine = BudgetedRuntime(store, ACTIONS, clock, deadline=time.monotonic() + timeout_s,
                             timeout_s=timeout_s)  # fmt: skip
    engine.approval_timer_wait_s = TEST_RUN_TIMER_WAIT_S  # max_timer_wait_s None: skip all
    run_id = str(uuid.uuid4())
    state = engine.start(run_id, graphs, "test run", input_value)
    refused: list[dict[str, str]] = []
    for taken in decisions:
        if state.status.finished:
            break
        try:
            state = decide_as_approvers(engine, store, state, taken["node"], taken["decision"])
        except (EventRefused, LookupError, ValueError) as error:
            refused.append({"node": taken["node"], "detail": str(error)})
    rows = store.rows(run_id)
    verdicts = explain_run(graphs, rows, state.status, state.error or "", store.trace(run_id))
    return {
        "status": state.status.value,
        "error": reported_error(state.error),
        "state": state.current_view(),
        "nodes": {path: row.to_json() for path, row in sorted(rows.items())},
        "colors": {path: v.color.value for path, v in verdicts.items()},
        "reasons": {path: v.reason for path, v in verdicts.items()},
        "waiting_on": sorted({r.node for r in open_requests(store, run_id)}),
        "refused": refused,
        "time_skipped_s": round((clock.current - started).total_seconds(), 3),
    }


def decide_as_approvers(
    engine: InProcessRuntime, store: InMemoryStore, state: RunState, node: str, decision: str
) -> RunState:
    """Take a test run's decision at a node by as many stand-in approvers as its policy
    needs (`designer test run`, `designer test run 2`, ...), each of every group: one
    vote per person (docs/approvals.md)."""
    asked = [r for r in open_requests(store, state.run_id) if r.node == node]
    groups = tuple(asked[0].groups) if asked else ()
    policy = asked[0].policy if asked else "any"
    if isinstance(policy, dict):
        quorum = policy.get("quorum", 1)
        assert isinstance(quorum, int)  # a stored policy's quorum is an integer (node_decoding)
        people = quorum
    else:
        people = len(groups) if policy == PolicyKind.ALL.value else 1
    for n in range(1, max(people, 1) + 1):
        # Stop once this request closed (a rejection, or the policy met): a loop may open
        # the node again at once, and that request is the next decision's.
        if n > 1 and not any(r.key == asked[0].key for r in open_requests(store, state.run_id)):
            break
        voter = TEST_RUN_USER if n == 1 else f"{TEST_RUN_USER} {n}"
        state = engine.decide(state, node, voter, groups, Decision(decision))
    return state


def reported_error(error: str | None) -> str | None:
    """Return a run's error as a test run reports it: its step budget has its own setting."""
    if error is None:
        return None
    return error.replace("(BRAID_RUN_MAX_STEPS)", "(BRAID_TEST_RUN_MAX_STEPS)")


def open_requests(store: InMemoryStore, run_id: str) -> list[RequestApproval]:
    """Return a stored run's approval requests that are still open."""
    closed = store.closed[run_id]
    return [r for key, r in store.requests[run_id].items() if key not in closed]


def serve() -> None:
    """The worker: set Django up once, then play one job per line until stdin closes."""
    import django

    django.setup()
    from django.conf import settings

    from engine.core.expressions import configure_limits

    sys.stdout.write("ready\n")
    sys.stdout.flush()
    for line in sys.stdin.buffer:
        job = json.loads(line)
        for name, value in job["settings"].items():
            setattr(settings, name, value)
        configure_limits(**job["limits"])
        graphs = {key: Graph.from_json(document) for key, document in job["graphs"].items()}
        reply: dict[str, object]
        try:
            reply = {"result": play(graphs, job["input"], job["decisions"], job["timeout_s"])}
        except Exception as error:  # a bug must not take the worker (and its slot) down
            reply = {"error": f"{type(error).__name__}: {error}"}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


# ---------------------------------------------------------------- in the web process


class Worker:
    """One worker process, serving one test run at a time."""

    def __init__(self) -> None:
        self.owner = os.getpid()
        self.process = subprocess.Popen(
            [sys.executable, "-m", "runs.test_runs"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env={**os.environ, "PYTHONPATH": ROOT},
            cwd=ROOT,
            close_fds=True,
        )
        assert self.process.stdout is not None
        if _read_line(self.process.stdout, time.monotonic() + START_TIMEOUT_S) != b"ready\n":
            self.kill()
            raise RuntimeError("a test-run worker did not start")

    def play(self, job: dict[str, Any], wait_s: float) -> dict[str, Any] | None:
        """Send a job; return the reply, or None when none came within wait_s (then the
        worker is killed)."""
        assert self.process.stdin is not None and self.process.stdout is not None
        try:
            self.process.stdin.write(json.dumps(job).encode() + b"\n")
            self.process.stdin.flush()
        except BrokenPipeError:
            self.kill()
            return None
        line = _read_line(self.process.stdout, time.monotonic() + wait_s)
        if not line:
            self.kill()
            return None
        reply: dict[str, Any] = json.loads(line)
        return reply

    @property
    def alive(self) -> bool:
        """Return whether the process runs and belongs to this process (not a fork's)."""
        return self.owner == os.getpid() and self.process.poll() is None

    def kill(self) -> None:
        """Kill the worker and reap it."""
        if self.owner == os.getpid():
            self.process.kill()
            self.process.wait()


class Pool:
    """At most `size` workers, each playing one test run at a time; started on demand."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.slots = threading.BoundedSemaphore(size)
        self.lock = threading.Lock()
        self.idle: list[Worker] = []

    def play(self, job: dict[str, Any], timeout_s: float) -> dict[str, Any] | None:
        """Play a job on a free worker within timeout_s (plus the kill grace); None when
        the worker was killed. Raise WorkersBusy when no worker frees up in timeout_s."""
        if not self.slots.acquire(timeout=timeout_s):
            raise WorkersBusy(
                f"{self.size} test runs are under way (BRAID_TEST_RUN_WORKERS); try again"
            )
        try:
            worker = self.take()
            reply = worker.play(job, timeout_s + KILL_GRACE_S)
            if reply is not None and worker.alive:
                with self.lock:
                    self.idle.append(worker)
            return reply
        finally:
            self.slots.release()

    def take(self) -> Worker:
        """Return an idle live worker, or start one."""
        with self.lock:
            while self.idle:
                worker = self.idle.pop()
                if worker.alive:
                    return worker
        return Worker()

    def close(self) -> None:
        """Kill every idle worker."""
        with self.lock:
            workers, self.idle = self.idle, []
        for worker in workers:
            worker.kill()


_pool: Pool | None = None
_pool_lock = threading.Lock()


def pool() -> Pool:
    """Return this process's pool, sized by BRAID_TEST_RUN_WORKERS."""
    global _pool
    from django.conf import settings

    with _pool_lock:
        if _pool is None or _pool.size != settings.BRAID_TEST_RUN_WORKERS:
            if _pool is not None:
                _pool.close()
            _pool = Pool(settings.BRAID_TEST_RUN_WORKERS)
        return _pool


def execute(graphs: Mapping[str, Graph], input_value: Any,
            decisions: list[dict[str, str]]) -> dict[str, Any]:  # fmt: skip
    """Play a test run in a worker process and return what it did (see play)."""
    from django.conf import settings

    from engine.core import expression_limits

    timeout_s = settings.BRAID_TEST_RUN_TIMEOUT_S
    limits = dataclasses.asdict(expression_limits.limits())
    limits["max_run_steps"] = min(limits["max_run_steps"], settings.BRAID_TEST_RUN_MAX_STEPS)
    job = {
        "graphs": {key: graph.to_json() for key, graph in graphs.items()},
        "input": input_value,
        "decisions": decisions,
        "timeout_s": timeout_s,
        "limits": limits,
        "settings": {name: getattr(settings, name) for name in ACTION_SETTINGS},
    }
    reply = pool().play(job, timeout_s)
    if reply is None:
        return stopped(timeout_s)
    if "error" in reply:
        raise RuntimeError(f"the test run failed in its worker: {reply['error']}")
    result: dict[str, Any] = reply["result"]
    return result


def stopped(timeout_s: float) -> dict[str, Any]:
    """Return the result of a test run whose worker was killed past its wall time."""
    return {
        "status": "failed",
        "error": f"the test run ran past its wall time of {timeout_s:g} s and was stopped "
        "(BRAID_TEST_RUN_TIMEOUT_S)",
        "state": {},
        "nodes": {},
        "colors": {},
        "reasons": {},
        "waiting_on": [],
        "refused": [],
        "time_skipped_s": 0.0,
    }


if __name__ == "__main__":
    serve()
