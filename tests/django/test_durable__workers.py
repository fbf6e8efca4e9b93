"""Real `celery worker` processes over Redis and PostgreSQL: equivalence and crash recovery.

The workers and Daphne run as separate processes on this test's database, so these tests
run in the PostgreSQL pass of `make test` (the SQLite test database lives in memory).
"""

import os
import re
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
from django.contrib.auth.models import User
from django.db import connection
from pytest_django import Settings

from braid.demo import create_demo_users
from designer import services as flows
from designer.demo import load_demo_flows
from designer.models import Flow
from engine.core.events import Decision
from engine.core.runtime import ManualClock
from engine.models import Run
from runs import services
from tests.django.test_durable__equivalence import outcome
from tests.processes import BIN, Browserless, base_env, free_port, running, wait_for_port
from tests.servers import require_redis

pytestmark = [pytest.mark.redis, pytest.mark.django_db(transaction=True)]

CRASHY: dict[str, Any] = {
    "format": "braid.graph/1",
    "name": "Crash test",
    "state": {"log": {"reducer": "append"}, "count": {"reducer": "sum"}},
    "nodes": [
        {"id": "start", "type": "start"},
        {"id": "split", "type": "fork", "branches": [f"b{i}" for i in range(5)]},
        *[{"id": f"s{i}", "type": "task", "action": "sleep", "params": {"seconds": 0.4},
           "output": "ignored"} for i in range(5)],
        *[{"id": f"w{i}", "type": "set", "values": {"log": f"['b{i}']"}} for i in range(5)],
        {"id": "join", "type": "gather", "slots": [f"b{i}" for i in range(5)]},
        {"id": "each", "type": "foreach", "items": "input.items", "as": "item", "concurrency": 4},
        {"id": "nap", "type": "task", "action": "sleep", "params": {"seconds": 0.05}},
        {"id": "tally", "type": "set", "values": {"count": "item"}},
        {"id": "sign", "type": "approval", "groups": ["finance"], "policy": "any",
         "title": "Sign off ${string(state.count)}"},
        {"id": "done", "type": "end"},
    ],
    "edges": [
        {"source": "start", "target": "split"},
        *[{"source": "split", "branch": f"b{i}", "target": f"s{i}"} for i in range(5)],
        *[{"source": f"s{i}", "target": f"w{i}"} for i in range(5)],
        *[{"source": f"w{i}", "target": "join", "slot": f"b{i}"} for i in range(5)],
        {"source": "join", "target": "each"},
        {"source": "each", "outcome": "item", "target": "nap"},
        {"source": "nap", "target": "tally"},
        {"source": "tally", "target": "each"},
        {"source": "each", "outcome": "done", "target": "sign"},
        {"source": "sign", "outcome": "approved", "target": "done"},
    ],
}  # fmt: skip
CRASHY["state"]["ignored"] = {"reducer": "merge"}


@pytest.fixture
def cluster(tmp_path: Path, settings: Settings) -> Iterator[dict[str, Any]]:
    """Daphne and two worker processes (one with the sweeper) on this test's database."""
    if connection.vendor != "postgresql":
        pytest.skip("worker processes share the test database: runs in the PostgreSQL pass")
    redis_url = require_redis()
    redis.Redis.from_url(redis_url).flushdb()
    db = connection.settings_dict
    database_url = f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}"
    # A killed or stopped worker's claimed actions come back through its lease (3 s); one it
    # held without starting it, after the stale time (10 s).
    env = base_env(DATABASE_URL=database_url, REDIS_URL=redis_url, BRAID_VAR_DIR=str(tmp_path),
                   BRAID_SWEEP_INTERVAL_S="0.5", BRAID_SWEEP_STALE_S="10",
                   BRAID_LEASE_BEAT_S="0.5", BRAID_LEASE_DEAD_S="3")  # fmt: skip
    # Daphne checks passwords with the real hashers, not the tests' fast one.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.PBKDF2PasswordHasher"]
    create_demo_users()
    load_demo_flows()
    port = free_port()
    daphne = [str(BIN / "daphne"), "-b", "127.0.0.1", "-p", str(port), "braid.asgi:application"]
    with running(daphne, env, tmp_path / "daphne.log") as web:
        wait_for_port(port, web, tmp_path / "daphne.log")
        client = Browserless(f"http://127.0.0.1:{port}")
        client.login("admin", "braid-admin")
        yield {"env": env, "client": client, "tmp": tmp_path}


def worker(
    env: dict[str, str], name: str, log: Path, beat: bool = False, pool: str = "prefork"
) -> subprocess.Popen[bytes]:
    """Start one `celery -A braid worker` in its own process group: with `prefork`, a parent
    and its pool processes; with `threads` (the Procfile's), one process."""
    command = [str(BIN / "celery"), "-A", "braid", "worker", f"--hostname={name}@%h",
               f"--pool={pool}", "--concurrency=2", "--loglevel=INFO",
               *(["--beat"] if beat else [])]  # fmt: skip
    return subprocess.Popen(command, env=env, stdout=log.open("wb"), stderr=subprocess.STDOUT,
                            start_new_session=True)  # fmt: skip


def stop(process: subprocess.Popen[bytes], sig: int = signal.SIGTERM) -> None:
    """Stop a worker and all its pool processes."""
    if process.poll() is None:
        os.killpg(process.pid, sig)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def wait_finished(run_ids: list[str], seconds: float) -> list[Run]:
    """Poll until every run finished, or fail with their statuses."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        runs = list(Run.objects.filter(pk__in=run_ids))
        if all(run.status in ("completed", "failed", "cancelled") for run in runs):
            return runs
        time.sleep(0.3)
    raise AssertionError({str(r.pk): r.status for r in Run.objects.filter(pk__in=run_ids)})


def start(client: Browserless, flow: str, input_value: Any) -> str:
    """Start a run through the API and return its id."""
    status, body = client.post_json("/api/runs/", {"flow": flow, "input": input_value})
    assert status == 201, body
    assert isinstance(body, dict)
    return str(body["id"])


def expected(flow: str, input_value: Any, approve: str | None = None) -> tuple[object, ...]:
    """The in-process runtime's outcome for the same flow, input and finance approval."""
    version = services.latest_version(flow)
    state = services.start_run(version.graph, flow, input_value, version, clock=ManualClock())
    if approve:
        finance = User.objects.get(username="finance")
        services.decide(state.run_id, approve, finance, Decision.APPROVE, clock=ManualClock())
    run = Run.objects.get(pk=state.run_id)
    run.state = services.runtime().load(state.run_id).current_view()
    return outcome(run)


CASES = [
    ("staged-gathers", {}),
    ("b-and-d-or-e", {"urgent": True}),
    ("vendor-payment", {"vendor": "Zed", "amount": 100, "new_vendor": False}),
    ("a-risk-score", {"amount": 1000, "new_vendor": True}),
]


def test_two_hundred_runs_on_two_worker_processes_all_end_like_in_process_runs(
    cluster: dict[str, Any],
) -> None:
    logs = cluster["tmp"]
    # The Procfile's pool: four steps of a worker share its caches and its connections' threads.
    one = worker(cluster["env"], "one", logs / "one.log", beat=True, pool="threads")
    two = worker(cluster["env"], "two", logs / "two.log", pool="threads")
    try:
        ids = {start(cluster["client"], flow, data): (flow, data) for flow, data in CASES * 50}
        runs = wait_finished(list(ids), 240)
    finally:
        stop(one)
        stop(two)
    assert len(runs) == 200
    # The thread pool runs its tasks in the worker itself, where no worker_process_init fires.
    assert "froze" in (logs / "one.log").read_text(errors="replace")
    expectations = {flow: expected(flow, data) for flow, data in CASES}
    mismatched = [
        ids[str(run.pk)][0] for run in runs if outcome(run) != expectations[ids[str(run.pk)][0]]
    ]
    assert mismatched == []


def wait_until[T](condition: Callable[[], T], seconds: float, failure: str) -> T:
    """Poll a condition until it holds (a true value, returned), or fail after `seconds`."""
    deadline = time.monotonic() + seconds
    while not (found := condition()):
        assert time.monotonic() < deadline, failure
        time.sleep(0.05)
    return found


def first_task(log: Path, name: str) -> str:
    """Return the id of the first task of this name the worker logged as received, or ""."""
    pattern = rf"Task {re.escape(name)}\[([0-9a-f-]+)\] received"
    found = re.search(pattern, log.read_text(errors="replace"))
    return found.group(1) if found else ""


def task_ended(log: Path, task_id: str) -> bool:
    """Return whether the worker logged the task's end: succeeded, raised, or out of time."""
    ends = ("succeeded", "raised", "exceeded")
    return any(f"[{task_id}]" in line and any(end in line for end in ends)
               for line in log.read_text(errors="replace").splitlines())  # fmt: skip


def approve_when_asked(cluster: dict[str, Any], run_id: str, seconds: float = 120) -> None:
    """Wait for the run's approval request, then approve it through the API as finance."""
    finance = Browserless(cluster["client"].base_url)
    finance.login("finance", "braid-finance")
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        _, inbox = finance.get_json("/api/approvals/")
        asked = [r for r in inbox["results"] if r["run"] == run_id]
        if asked:
            status, body = finance.post_json(f"/api/approvals/{asked[0]['id']}/decide/",
                                             {"decision": "approve"})  # fmt: skip
            assert status == 202, body
            return
        time.sleep(0.3)
    raise AssertionError(f"no approval was asked for: {Run.objects.get(pk=run_id).status}")


def wait_mid_work(run_id: str, seconds: float = 60) -> int:
    """Wait until some actions of the run completed while others are still out; count them."""
    from engine.models import Dispatch

    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        sent = Dispatch.objects.filter(run_id=run_id)
        done = sent.exclude(completed_at=None).count()
        if done >= 2 and sent.filter(completed_at=None).exists():
            return done
        time.sleep(0.05)
    raise AssertionError("the worker never got to work")


@pytest.mark.parametrize("pool", ["prefork", "threads"])
def test_a_worker_killed_mid_run_loses_nothing_and_the_run_ends_as_uninterrupted(
    cluster: dict[str, Any], pool: str
) -> None:
    flows.import_graph(Flow.objects.get(slug="staged-gathers").owner, CRASHY, "crashy", True)
    data = {"items": list(range(1, 21))}
    logs = cluster["tmp"]
    victim = worker(cluster["env"], "victim", logs / "victim.log", pool=pool)
    rescuer = None
    try:
        run_id = start(cluster["client"], "crashy", data)
        assert wait_mid_work(run_id) >= 2
        stop(victim, signal.SIGKILL)  # the whole worker, its pool processes too
        assert Run.objects.get(pk=run_id).status == "running"
        rescuer = worker(cluster["env"], "rescuer", logs / "rescuer.log", beat=True, pool=pool)
        approve_when_asked(cluster, run_id)
        (run,) = wait_finished([run_id], 120)
    finally:
        stop(victim, signal.SIGKILL)
        if rescuer is not None:
            stop(rescuer)
    assert run.status == "completed", run.error
    assert run.state["count"] == 210
    assert sorted(run.state["log"]) == [f"b{i}" for i in range(5)]
    assert outcome(run) == expected("crashy", data, approve="sign")


LOOPING = {
    "format": "braid.graph/1",
    "name": "Stale writer test",
    "state": {"n": {"reducer": "overwrite", "default": 0}, "ignored": {"reducer": "overwrite"}},
    "nodes": [
        {"id": "start", "type": "start"},
        {"id": "rounds", "type": "loop", "while": "state.n < 3", "max_iterations": 10},
        {"id": "slow", "type": "task", "action": "sleep", "params": {"seconds": 1.5},
         "output": "ignored"},
        {"id": "bump", "type": "set", "values": {"n": "state.n + 1"}},
        {"id": "done", "type": "end"},
    ],
    "edges": [
        {"source": "start", "target": "rounds"},
        {"source": "rounds", "outcome": "body", "target": "slow"},
        {"source": "slow", "target": "bump"},
        {"source": "bump", "target": "rounds"},
        {"source": "rounds", "outcome": "done", "target": "done"},
    ],
}  # fmt: skip


def test_a_stopped_worker_resumed_after_later_iterations_cannot_clobber_them(
    cluster: dict[str, Any],
) -> None:
    from engine.models import Dispatch, NodeState

    flows.import_graph(Flow.objects.get(slug="staged-gathers").owner, LOOPING, "looping", True)
    logs = cluster["tmp"]
    slowpoke_log = logs / "slowpoke.log"
    slowpoke = worker(cluster["env"], "slowpoke", slowpoke_log)
    other = None
    try:
        run_id = start(cluster["client"], "looping", {})
        claimed = Dispatch.objects.filter(run_id=run_id).exclude(claimed_by="")
        wait_until(claimed.exists, 60, "the first action was never claimed")
        # The slowpoke is inside iteration 1's action now (it sleeps 1.5 s once claimed).
        task_id = wait_until(lambda: first_task(slowpoke_log, "braid.run_actions"), 10,
                             "the slowpoke never logged the action's task")  # fmt: skip
        os.killpg(slowpoke.pid, signal.SIGSTOP)
        other = worker(cluster["env"], "other", logs / "other.log", beat=True)
        (run,) = wait_finished([run_id], 120)
        rows_before = {
            r.node: (r.status, r.execution_id) for r in NodeState.objects.filter(run_id=run_id)
        }
        os.killpg(slowpoke.pid, signal.SIGCONT)
        # The slowpoke finishes its stale iteration-1 action and reports it.
        wait_until(lambda: task_ended(slowpoke_log, task_id), 60,
                   "the slowpoke never ended its stale action's task")  # fmt: skip
    finally:
        os.killpg(slowpoke.pid, signal.SIGCONT)
        stop(slowpoke)
        if other is not None:
            stop(other)
    run.refresh_from_db()
    assert (run.status, run.state["n"]) == ("completed", 3)
    assert rows_before["slow"] == ("completed", "root:1:rounds:3")
    assert {
        r.node: (r.status, r.execution_id) for r in NodeState.objects.filter(run_id=run_id)
    } == rows_before
    assert outcome(run) == expected("looping", {})


def test_every_message_delivered_twice_changes_no_result(cluster: dict[str, Any]) -> None:
    from celery import Celery

    from engine.models import Dispatch

    # Not made current: the tests after this one would patch its tasks for Braid's.
    echo = Celery("duplicates", broker=cluster["env"]["REDIS_URL"], set_as_current=False)
    logs = cluster["tmp"]
    one = worker(cluster["env"], "one", logs / "one.log", beat=True)
    two = worker(cluster["env"], "two", logs / "two.log")
    try:
        ids = {start(cluster["client"], flow, data): (flow, data) for flow, data in CASES * 3}
        resent: set[int] = set()
        deadline = time.monotonic() + 90
        while True:  # at least once: a run may finish before the first look (then late)
            for dispatch_id in Dispatch.objects.exclude(pk__in=resent).values_list("pk", flat=True):
                echo.send_task("braid.run_actions", args=[[dispatch_id]])
                resent.add(dispatch_id)
            for run_id in ids:
                echo.send_task("braid.advance_run", args=[run_id])
            finished = Run.objects.filter(pk__in=list(ids), status="completed").count()
            if finished == len(ids) or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        wait_finished(list(ids), 60)
        broker = redis.Redis.from_url(cluster["env"]["REDIS_URL"])
        wait_until(lambda: broker.llen("celery") == 0 and broker.hlen("unacked") == 0, 60,
                   "the workers never took and acknowledged every duplicate")  # fmt: skip
        runs = wait_finished(list(ids), 60)  # read again, after the duplicates ran
    finally:
        stop(one)
        stop(two)
    assert resent  # every action message went out a second time
    expectations = {flow: expected(flow, data) for flow, data in CASES}
    assert [ids[str(r.pk)][0] for r in runs if outcome(r) != expectations[ids[str(r.pk)][0]]] == []


@pytest.mark.parametrize(
    "point", ["action.started", "action.done", "advance.before_commit", "advance.after_commit"]
)
def test_a_worker_killed_at_each_crash_point_loses_nothing(
    cluster: dict[str, Any], point: str
) -> None:
    flows.import_graph(Flow.objects.get(slug="staged-gathers").owner, CRASHY, "crashy", True)
    data = {"items": list(range(1, 9))}
    markers = cluster["tmp"] / "markers"
    markers.mkdir()
    env = {**cluster["env"], "BRAID_CRASH_AT": point, "BRAID_CRASH_MARKERS": str(markers)}
    crashing = worker(env, "crashing", cluster["tmp"] / "crashing.log", beat=True)
    try:
        run_id = start(cluster["client"], "crashy", data)
        approve_when_asked(cluster, run_id)
        (run,) = wait_finished([run_id], 120)
    finally:
        stop(crashing)
    assert (markers / point).exists()  # the process really died there once
    # A crash after a step's commit names the run it was stepping (the chaos report's).
    assert (markers / point).read_text() == (run_id if point == "advance.after_commit" else "")
    assert run.status == "completed", run.error
    assert run.state["count"] == 36
    assert outcome(run) == expected("crashy", data, approve="sign")
