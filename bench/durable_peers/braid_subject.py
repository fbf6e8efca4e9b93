"""Braid as deployed in scaled mode: W1-W4 for one round.

  python -m bench.durable_peers.braid_subject --round N --plan quick --out rows.jsonl

Starts the Procfile's processes itself: Daphne, its two `celery -A braid worker` lines (their
pool and concurrency read from the Procfile) and one `celery -A braid beat`, over PostgreSQL
(`<prefix>braid`) and Redis (PEERS_REDIS_BRAID),
with the product's settings (no BRAID_* override). Runs are created in this process with
`engine.runtime.runs.create_run`, as bench/durable.py does; W4's decision goes through the API
(`POST /api/approvals/<id>/decide/` on Daphne, with a logged-in session). Completion is seen
by polling the Run rows every POLL_S, one query for all the runs still open.
"""

from __future__ import annotations

import http.client
import json
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from bench.durable import Processes, chain_doc, flow, noop, start_workers
from bench.durable import fork_doc as durable_fork_doc
from bench.durable_peers.common import (
    BIN,
    PG,
    ROOT,
    SETTLE_S,
    START_CALLERS,
    W1_STEPS,
    W2_WIDTH,
    W3_RUNS,
    W3_STEPS,
    Options,
    Recorder,
    database,
    log,
    options,
    poll_until,
    procfile_workers,
    redis_url,
    scratch,
    setting,
    wait_port,
    watch,
)

FINISHED = ("completed", "failed", "cancelled")
CSRF = "braidpeersbenchcsrftoken01234567"  # 32 letters and digits: a valid unmasked token


def daphne_port() -> int:
    """Return the port Daphne serves the API on in this benchmark."""
    return int(setting("DAPHNE_PORT", "8471"))


def env() -> dict[str, str]:
    """Return the environment of the client, Daphne, the workers and beat."""
    kept = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "BRAID_"))}
    var = scratch() / "braid-var"
    var.mkdir(exist_ok=True)
    return kept | {
        "DATABASE_URL": f"{PG}/{database('braid')}",
        "REDIS_URL": redis_url("braid"),
        "BRAID_VAR_DIR": str(var),
        "DJANGO_DEBUG": "0",
        "DJANGO_HTTPS": "0",
        "DJANGO_SECRET_KEY": "peers-bench-only-secret-key-not-for-any-deployment-0123456789",
        "PYTHONPATH": str(ROOT),
        "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
    }


def fork_doc(n: int) -> dict[str, Any]:
    """start -> fork(b1..bN) -> one noop task per branch, writing nothing -> gather -> end:
    the peers' steps write nothing either."""
    return durable_fork_doc(n, appending=False)


def approval_doc() -> dict[str, Any]:
    """start -> an approval by finance -> one noop task -> end."""
    nodes = [
        {"id": "ask", "type": "approval", "groups": ["finance"], "policy": "any",
         "title": "approve?"},
        noop("after"),
    ]  # fmt: skip
    edges = [
        {"source": "start", "target": "ask"},
        {"source": "ask", "outcome": "approved", "target": "after"},
        {"source": "after", "target": "end"},
    ]
    return flow("approval", nodes, edges)


def setup_django() -> None:
    """Point this process's Django at the benchmark's database and Redis."""
    os.environ.update(env())
    os.environ["DJANGO_SETTINGS_MODULE"] = "braid.settings"
    os.environ["BRAID_LOG_LEVEL"] = "WARNING"
    import django

    django.setup()


def finance_user() -> Any:
    """Return the finance approver who decides W4's approvals."""
    from django.contrib.auth.models import Group, User

    user, _ = User.objects.get_or_create(username="peers-finance")
    user.groups.add(Group.objects.get_or_create(name="finance")[0])
    return user


def session_of(user: Any) -> str:
    """Return a session cookie of the user, logged in once without a password hash."""
    from django.test import Client

    client = Client()
    client.force_login(user, backend="django.contrib.auth.backends.ModelBackend")
    return client.cookies["sessionid"].value


class Braid:
    """The client: starts runs, watches the Run rows, decides through the API."""

    def __init__(self) -> None:
        from runs.services import resolve_graphs

        self.graphs = {
            "W1": resolve_graphs(chain_doc(W1_STEPS)),
            "W2": resolve_graphs(fork_doc(W2_WIDTH)),
            "W3": resolve_graphs(chain_doc(W3_STEPS)),
            "W4": resolve_graphs(approval_doc()),
            "warm-W2": resolve_graphs(fork_doc(W2_WIDTH // 10)),
        }
        self.user = finance_user()
        self.cookie = f"sessionid={session_of(self.user)}; csrftoken={CSRF}"
        self.http = http.client.HTTPConnection("127.0.0.1", daphne_port(), timeout=30)

    def start(self, key: str) -> str:
        """Create a run of one workload's graph; its commit publishes advance_run."""
        from engine.runtime.runs import create_run

        return str(create_run(self.graphs[key], key, {}).pk)

    def finished(self, ids: list[str]) -> dict[str, bool]:
        """Return which runs have finished, and whether each completed: one statement with
        the ids as one array, as DBOS's client looks at its workflow_status (until
        2026-12-07 the ORM's `pk__in`, which cost the client 1.4 ms of CPU a look at 200
        runs against 0.3 ms, every POLL_S through W3)."""
        from django.db import connection

        from engine.models import Run

        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT id::text, status FROM {Run._meta.db_table} "
                "WHERE id = ANY(%s::uuid[]) AND status = ANY(%s)", [ids, list(FINISHED)],
            )  # fmt: skip
            return {pk: status == "completed" for pk, status in cursor.fetchall()}

    def one(self, key: str) -> float:
        """Return the seconds from the start call until the run is seen completed."""
        began = time.perf_counter()
        run = self.start(key)
        return watch({run: began}, self.finished)[0] - began

    def start_timed(self, used: set[Any]) -> tuple[str, float]:
        """Start one W3 run from a caller thread, on the thread's own kept connection,
        which goes into `used`."""
        from django.db import connections

        began = time.perf_counter()
        run = self.start("W3")
        used.add(connections["default"])  # this thread's own wrapper
        return run, began

    def many(self, n: int) -> tuple[float, float, list[float]]:
        """Start n W3 runs from START_CALLERS threads; return elapsed, start phase, latencies.

        Each caller thread keeps its database connection from one start to the next, as
        DBOS's client keeps its pool's and as the API's threads keep theirs (braid.http);
        each is closed once the calls are done (until 2026-12-06 each start closed it, so
        every start paid a new PostgreSQL connection that no peer paid).
        """
        used: set[Any] = set()
        began = time.perf_counter()
        with ThreadPoolExecutor(START_CALLERS) as pool:
            started = dict(pool.map(self.start_timed, [used] * n))
        calls_done = time.perf_counter()
        close_all(used)
        seen, latencies = watch(started, self.finished)
        return seen - began, calls_done - began, latencies

    def decision(self, through_api: bool = True) -> float:
        """Return the seconds from the decide call until the run is seen completed.

        Through the API (the issue's W4) or, to show what HTTP adds, `runs.services.decide`
        called in this process (the service the API calls, and a direct write as DBOS's send).
        """
        from approvals.models import ApprovalRequest, ApprovalStatus
        from engine.core.events import Decision
        from runs.services import decide

        run = self.start("W4")
        waiting = ApprovalRequest.objects.filter(run_id=run, status=ApprovalStatus.OPEN)
        poll_until(waiting.exists, 60)
        time.sleep(SETTLE_S)  # the step that opened it has committed; the workers are idle
        approval = waiting.get()
        began = time.perf_counter()
        if through_api:
            self.decide(approval.pk)
        else:
            decide(run, "ask", self.user, Decision.APPROVE)
        return watch({run: began}, self.finished)[0] - began

    def decide(self, approval_id: object) -> None:
        """POST an approval to the API, as the inbox page does."""
        body = json.dumps({"decision": "approve", "comment": ""})
        headers = {"Content-Type": "application/json", "Cookie": self.cookie,
                   "X-CSRFToken": CSRF}  # fmt: skip
        self.http.request("POST", f"/api/approvals/{approval_id}/decide/", body, headers)
        answer = self.http.getresponse()
        text = answer.read()
        if answer.status != 202:
            raise RuntimeError(f"decide answered {answer.status}: {text[:300]!r}")


def close_all(wrappers: set[Any]) -> None:
    """Close the database connections of caller threads that have ended (Django lets a
    connection be closed from another thread once it is marked shared)."""
    for wrapper in wrappers:
        wrapper.inc_thread_sharing()
        wrapper.close()
        wrapper.dec_thread_sharing()


def start_braid(procs: Processes) -> list[subprocess.Popen[bytes]]:
    """Start the Procfile's Daphne, two workers and beat; wait until they serve; return the
    workers."""
    command = [str(BIN / "daphne"), "-b", "127.0.0.1", "-p", str(daphne_port()),
               "braid.asgi:application"]  # fmt: skip
    procs.start("daphne", command)
    procs.start("beat", [str(BIN / "celery"), "-A", "braid", "beat", "--loglevel=INFO"])
    flags = [list(worker.flags) for worker in procfile_workers()]
    workers = start_workers(procs, "braid", [f"worker{i}" for i in range(1, len(flags) + 1)], flags)
    wait_port(daphne_port())
    time.sleep(2.5)  # each worker has beaten its lease once: the fan-out sizes its chunks by it
    return workers


def warm_up(braid: Braid, only: frozenset[str]) -> None:
    """One untimed, smaller instance of each workload."""
    began = time.perf_counter()
    for key in ("W1", "warm-W2"):
        if key[-2:] in only:
            braid.one(key)
    if "W3" in only:
        braid.many(20)
    if "W4" in only:
        braid.decision()
    log(f"braid: warm-up {time.perf_counter() - began:.1f} s")


def measure(braid: Braid, opts: Options, record: Recorder) -> None:
    """Each workload, the plan's number of times."""
    plan = opts.plan
    if "W1" in opts.only:
        record.add("W1", [braid.one("W1") for _ in range(plan.w1_runs)])
    if "W2" in opts.only:
        record.add("W2", [braid.one("W2") for _ in range(plan.w2_runs)])
    if "W3" in opts.only:
        for _ in range(plan.w3_runs):
            elapsed, calls, latencies = braid.many(W3_RUNS)
            record.add("W3", [W3_RUNS / elapsed], "runs/s", latencies=tuple(latencies),
                       start_phase_s=calls)  # fmt: skip
    if "W4" in opts.only:
        record.add("W4", [braid.decision() for _ in range(plan.w4_runs)])
        in_process = [braid.decision(through_api=False) for _ in range(plan.w4_runs)]
        record.add("W4alt", in_process, variant="runs.services.decide in the client, no HTTP")


def main(argv: list[str] | None = None) -> int:
    opts = options(argv)
    setup_django()
    logs = scratch() / "logs" / f"braid-r{opts.round}"
    logs.mkdir(parents=True, exist_ok=True)
    procs = Processes(env(), logs)
    try:
        start_braid(procs)
        braid = Braid()
        warm_up(braid, opts.only)
        measure(braid, opts, Recorder("braid", opts.round, opts.out))
    finally:
        procs.stop_all()
    return 0


if __name__ == "__main__":
    sys.exit(main())
