"""Six heavy test runs at once leave /healthz answering: they play in worker processes, not
on the web server's threads (runs/test_runs.py), measured against `braid serve` (Daphne
with its embedded worker, as `make run` starts it).

Where the CPU went says it, not a latency bound: on a loaded machine (CI, a CPU hog) a
probe's p99 rose past any fixed bound while the design held. The worker processes' CPU
time grows by the runs' work and the server's by little; on the web server's threads the
server's grew by all of it (and two probes got through in 4 s, at 2,740 and 982 ms).
"""

import math
import os
import threading
import time
from pathlib import Path
from typing import Any

from tests.processes import Browserless, braid_server_process

START, END = {"id": "start", "type": "start"}, {"id": "done", "type": "end"}
# Ten thousand iterations: the test-run step budget (10,000 nodes) stops it after about a
# second of a worker's CPU; on the web server's threads six of them held the GIL.
HEAVY = {
    "format": "braid.graph/1",
    "state": {"n": {"reducer": "overwrite", "default": 0}},
    "nodes": [START, {"id": "again", "type": "loop", "while": "true", "max_iterations": 10_000},
              {"id": "tick", "type": "set", "values": {"n": "state.n + 1"}}, END],
    "edges": [{"source": "start", "target": "again"},
              {"source": "again", "outcome": "body", "target": "tick"},
              {"source": "tick", "target": "again"},
              {"source": "again", "outcome": "exhausted", "target": "done"}],
}  # fmt: skip
BUDGET_ERROR = (
    "the run executed 10,000 nodes, its budget (BRAID_TEST_RUN_MAX_STEPS); node `tick` was next"
)


PROBES = 20
MIN_PROBES = 5  # half a second of the runs, at least, with /healthz asked throughout
TIMEOUT_S = 60  # the server's own deadline for a test run (BRAID_TEST_RUN_TIMEOUT_S)


def post_heavy(client: Browserless, answers: list[tuple[int, Any]]) -> None:
    """Post one heavy test run and keep its status and body: answered within the server's
    deadline however loaded the machine is (queued behind the others, it waits its turn)."""
    path, body = "/api/flows/b-and-d-or-e/test-run/", {"graph": HEAVY}
    answers.append(client.post_json(path, body, timeout=TIMEOUT_S + 30))


def cpu_seconds(pid: int) -> float:
    """Return a process's user and system CPU time so far (its own, not its children's)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def children_cpu_seconds(pid: int) -> float:
    """Return the CPU time of a process's live children (the test-run worker processes)."""
    total = 0.0
    for task in Path(f"/proc/{pid}/task").iterdir():
        for child in (task / "children").read_text().split():
            try:
                total += cpu_seconds(int(child))
            except FileNotFoundError:  # it ended meanwhile
                continue
    return total


def concurrently(
    client: Browserless, count: int, answers: list[tuple[int, Any]]
) -> list[threading.Thread]:
    """Start `count` heavy test runs in threads; return the threads."""
    threads = [threading.Thread(target=post_heavy, args=(client, answers)) for _ in range(count)]
    for thread in threads:
        thread.start()
    return threads


def test_six_heavy_test_runs_spend_their_cpu_in_workers_while_healthz_answers(
    tmp_path: Path,
) -> None:
    with braid_server_process(tmp_path, BRAID_TEST_RUN_TIMEOUT_S=str(TIMEOUT_S)) as served:
        base_url, server = served
        analyst, probe = Browserless(base_url), Browserless(base_url)
        analyst.login("analyst", "braid-analyst")
        warm: list[tuple[int, Any]] = []
        for thread in concurrently(analyst, 2, warm):  # start both workers before measuring
            thread.join()
        before = cpu_seconds(server.pid), children_cpu_seconds(server.pid)
        answers: list[tuple[int, Any]] = []
        threads = concurrently(analyst, 6, answers)
        # Probes while the runs go on, at most PROBES: each costs the server CPU, so a
        # slower machine, whose runs last longer, does not probe more; a faster one, whose
        # runs end sooner, stops probing when they do (a fixed 20 outlasted them there).
        latencies: list[float] = []
        statuses: set[int] = set()
        while len(latencies) < PROBES and any(thread.is_alive() for thread in threads):
            started = time.perf_counter()
            status, _ = probe.get("/healthz")
            latencies.append(time.perf_counter() - started)
            statuses.add(status)
            time.sleep(0.1)
        for thread in threads:
            thread.join()
        served_cpu = cpu_seconds(server.pid) - before[0]
        worker_cpu = children_cpu_seconds(server.pid) - before[1]
    p99 = sorted(latencies)[math.ceil(0.99 * len(latencies)) - 1]
    print(f"healthz p99 {p99 * 1000:.0f} ms over {len(latencies)} probes; CPU: "
          f"workers {worker_cpu:.1f} s, server {served_cpu:.1f} s")  # fmt: skip
    outcomes = [(status, body["status"], body["error"]) for status, body in warm + answers]
    assert outcomes == [(200, "failed", BUDGET_ERROR)] * 8
    assert statuses == {200}
    assert len(latencies) >= MIN_PROBES  # every one sent while the runs went on
    assert worker_cpu > 2 * served_cpu, (worker_cpu, served_cpu)
