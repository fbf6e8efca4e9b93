"""What every subject's driver shares: sizes, the plan, the clock, the result lines, processes.

The drivers run one per process (`python -m bench.durable_peers.<subject> --round N ...`),
started by `bench.durable_peers.run`, which passes the databases, Redis and the scratch
folder in the environment (`PEERS_*`), so a driver can also be run by hand.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import resource
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
PG = "postgres://postgres@127.0.0.1:5432"
REDIS = "redis://127.0.0.1:6379"

W1_STEPS = 100  # W1: one run, a chain of this many steps
W2_WIDTH = 1_000  # W2: one run, this many parallel steps, then one join step
W3_RUNS = 200  # W3: this many runs started together...
W3_STEPS = 5  # ...each a chain of this many steps
START_CALLERS = 8  # W3's start calls come from this many concurrent callers, for every subject
POLL_S = 0.005  # every client looks at its subject's status store this often
TIMEOUT_S = 300.0
WORKERS = 2  # worker processes per subject (Braid and the floor: the Procfile's flags)
SETTLE_S = 0.2  # W4: wait this long after the run is seen waiting, before deciding


@dataclass(frozen=True, slots=True)
class Plan:
    """How many rounds and how many timed runs of each workload per round."""

    name: str
    rounds: int
    w1_runs: int
    w2_runs: int
    w3_runs: int
    w4_runs: int
    max_load: float  # before each subject, wait until the 1-minute load is below this...
    max_wait_s: float  # ...but no longer than this (the load is recorded either way)


# The waits are short: on a machine other sessions share, the load rarely falls below the
# limit, and it is recorded beside every figure anyway.
FULL = Plan("full", rounds=10, w1_runs=3, w2_runs=1, w3_runs=1, w4_runs=10, max_load=1.5,
            max_wait_s=20)  # fmt: skip
QUICK = Plan("quick", rounds=2, w1_runs=2, w2_runs=1, w3_runs=1, w4_runs=5, max_load=2.0,
             max_wait_s=10)  # fmt: skip
PLANS = {plan.name: plan for plan in (FULL, QUICK)}


@dataclass(frozen=True)
class ProcfileWorker:
    """One of the Procfile's `worker*` lines: its flags as shipped, and the pool they choose."""

    flags: tuple[str, ...]
    pool: str


# Run in a child: importing `braid` sets DJANGO_SETTINGS_MODULE for the process, and the run
# hands its environment to every driver (in one with it set, a driver's first Celery app, not
# Braid's, became Celery's default: the fixup in bd11e85 was found so).
READ_WORKERS = """
import json, sys
from pathlib import Path
from braid.supervise import pool_of, worker_flags
flags = worker_flags(Path(sys.argv[1]), {})
print(json.dumps([{"flags": f, "pool": pool_of(f)} for f in flags]))
"""


@functools.cache
def procfile_workers() -> tuple[ProcfileWorker, ...]:
    """Return the Procfile's workers as braid.supervise reads them with the product's
    defaults (no setting of this environment applied: the benchmark measures Braid as
    shipped), less the hostname and log level that bench.durable's worker_command sets.
    Braid's workers here are the Procfile's; the floor's run as they do."""
    done = subprocess.run(
        [sys.executable, "-c", READ_WORKERS, str(ROOT / "Procfile")], cwd=ROOT, check=True,
        env={"PATH": os.environ.get("PATH", ""), "PYTHONPATH": str(ROOT)},
        capture_output=True, text=True,
    )  # fmt: skip
    return tuple(
        ProcfileWorker(tuple(f for f in line["flags"]
                             if not f.startswith(("--hostname=", "--loglevel="))), line["pool"])
        for line in json.loads(done.stdout)
    )  # fmt: skip


def setting(name: str, default: str) -> str:
    """Return one of the run's settings, passed by bench.durable_peers.run in PEERS_*."""
    return os.environ.get(f"PEERS_{name}", default)


def database(subject: str) -> str:
    """Return the PostgreSQL database name of a subject (braid, dbos or langgraph)."""
    return setting("DB_PREFIX", "braid_h4_") + subject


def redis_url(which: str) -> str:
    """Return the Redis database of Braid's broker ('braid') or the floor's ('floor')."""
    number = setting("REDIS_BRAID", "9") if which == "braid" else setting("REDIS_FLOOR", "10")
    return f"{REDIS}/{number}"


def scratch() -> Path:
    """Return the folder for logs, Temporal's SQLite file and Braid's var/."""
    path = Path(setting("SCRATCH", "/tmp/braid-peers"))
    path.mkdir(parents=True, exist_ok=True)
    return path


def poll_until(done: Callable[[], bool], timeout_s: float = TIMEOUT_S) -> float:
    """Call done() every POLL_S until it is true; return time.perf_counter() then."""
    deadline = time.perf_counter() + timeout_s
    while not done():
        if time.perf_counter() > deadline:
            raise TimeoutError(f"not done within {timeout_s:.0f} s")
        time.sleep(POLL_S)
    return time.perf_counter()


def load1() -> float:
    """Return the 1-minute load average."""
    return os.getloadavg()[0]


def wait_port(port: int, seconds: float = 60) -> None:
    """Wait until something listens on 127.0.0.1:port."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            time.sleep(0.1)
    raise TimeoutError(f"nothing listens on 127.0.0.1:{port} after {seconds:.0f} s")


@dataclass(frozen=True, slots=True)
class Measured:
    """One workload of one subject in one round: the client-observed values.

    `values` are seconds per run (W1, W2, W4) or runs/s (W3, one per batch); `latencies`
    are W3's per-run times from its start call to its completion being seen.
    """

    subject: str
    workload: str
    round: int
    values: tuple[float, ...]
    unit: str
    latencies: tuple[float, ...] = ()
    start_phase_s: float | None = None
    load1: float = 0.0
    peak_rss_kb: int = 0  # the driver process's peak (LangGraph runs there; others poll)
    variant: str = ""


class Recorder:
    """Appends each Measured as one JSON line to the driver's output file (and stdout)."""

    def __init__(self, subject: str, rnd: int, out: Path | None) -> None:
        self.subject, self.round, self.out = subject, rnd, out

    def add(self, workload: str, values: Sequence[float], unit: str = "s", **extra: Any) -> None:
        """Record one workload's values with the load and this process's peak RSS now."""
        row = Measured(
            self.subject, workload, self.round, tuple(values), unit, load1=round(load1(), 2),
            peak_rss_kb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, **extra,
        )  # fmt: skip
        line = json.dumps(asdict(row))
        print(line, flush=True)
        if self.out is not None:
            with self.out.open("a") as f:
                f.write(line + "\n")


@dataclass(frozen=True, slots=True)
class Options:
    """A driver's command line."""

    round: int
    plan: Plan
    out: Path | None
    only: frozenset[str]


def stop_on_term(signum: int, frame: object) -> None:
    """Turn SIGTERM into SystemExit, so a driver's `finally` stops the processes it started."""
    raise SystemExit(128 + signum)


def options(argv: Sequence[str] | None = None) -> Options:
    """Parse `--round N --plan quick|full --out FILE --only W1,W2`; a driver calls it first,
    so it also makes SIGTERM stop the driver's processes."""
    signal.signal(signal.SIGTERM, stop_on_term)
    parser = argparse.ArgumentParser()
    parser.add_argument("--round", type=int, default=0)
    parser.add_argument("--plan", choices=sorted(PLANS), default="quick")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--only", default="W1,W2,W3,W4")
    args = parser.parse_args(argv)
    only = frozenset(args.only.split(","))
    return Options(args.round, PLANS[args.plan], args.out, only)


def log(*parts: object) -> None:
    """Print progress to stderr."""
    print(*parts, file=sys.stderr, flush=True)


def watch(
    started: dict[str, float], finished: Callable[[list[str]], dict[str, bool]]
) -> tuple[float, list[float]]:
    """Poll until every run is seen finished; return the last sighting and each run's latency.

    `started` maps run ids to the perf_counter at their start call; `finished(ids)` answers,
    in one look at the status store, which of those ids have finished and whether each
    succeeded. A run that ended otherwise raises RuntimeError.
    """
    pending, latencies, seen = list(started), [], 0.0
    deadline = time.perf_counter() + TIMEOUT_S
    while pending:
        ended = finished(pending)
        seen = time.perf_counter()
        failed = [run for run, ok in ended.items() if not ok]
        if failed:
            raise RuntimeError(f"{len(failed)} runs did not succeed, e.g. {failed[0]}")
        latencies += [seen - started[run] for run in ended]
        pending = [run for run in pending if run not in ended]
        if pending and seen > deadline:
            raise TimeoutError(f"{len(pending)} runs unfinished after {TIMEOUT_S:.0f} s")
        if pending:
            time.sleep(POLL_S)
    return seen, latencies
