"""The fault schedule, drawn from the seed, and the hands that carry each fault out."""

import contextlib
import os
import random
import signal
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

import psycopg

from chaos.cluster import Cluster, Redis, admin_url

KINDS = (
    "kill-child",  # SIGKILL one pool process of a worker (its task is redelivered)
    "kill-main",  # SIGKILL a worker's main process; the supervisor restarts it
    "stop",  # SIGSTOP a whole worker past the lease's dead time, then SIGCONT: a stale writer
    "redis-restart",  # kill our redis-server (no persistence: every message is lost), restart
    "pg-terminate",  # pg_terminate_backend of every connection to the chaos database
    "pg-restart",  # no connections for a few seconds: every backend ended, new ones refused
    "crash-after-commit",  # arm the crash point between a step's commit and its publish
)


@dataclass(frozen=True)
class Fault:
    """One scheduled fault: when (seconds after the workload starts), what, and on whom."""

    at_s: float
    kind: str
    worker: int = 0
    pick: int = 0


def counts_for(runs: int, pool: str) -> dict[str, int]:
    """How many faults of each kind: the default run's figures, scaled to the run count.

    300 runs: 12 pool kills and 8 main kills (20 worker SIGKILLs), 3 stops, 2 Redis
    restarts, 3 terminations, 1 PostgreSQL restart and 3 crashes after commit. A thread
    pool has no pool process: its 20 SIGKILLs all go to workers' main processes.
    """
    base = {"kill-child": 12, "kill-main": 8, "stop": 3, "redis-restart": 2, "pg-terminate": 3,
            "pg-restart": 1, "crash-after-commit": 3}  # fmt: skip
    if pool != "prefork":
        base["kill-main"], base["kill-child"] = base["kill-main"] + base["kill-child"], 0
    if runs >= 300:
        return base
    scaled = {kind: round(count * runs / 300) for kind, count in base.items()}
    for kind in KINDS:  # at least one of each planned kind
        scaled[kind] = max(1, scaled[kind]) if base[kind] else 0
    return scaled


def schedule(seed: int, counts: dict[str, int], window_s: float, workers: int) -> list[Fault]:
    """Every fault at a time drawn from the seed within (3 s, window_s), in time order."""
    rng = random.Random(f"{seed}/faults")
    faults = [
        Fault(
            round(rng.uniform(3.0, max(4.0, window_s)), 2),
            kind,
            rng.randrange(workers),
            rng.randrange(1000),
        )
        for kind in KINDS
        for _ in range(counts.get(kind, 0))
    ]
    return sorted(faults, key=lambda f: (f.at_s, f.kind))


def took_effect(fault: dict[str, object]) -> bool:
    """Whether a fault did something (a skipped one, or a pool kill with no pool, did not)."""
    detail = str(fault["detail"])
    return not detail.startswith("skipped") and "had no pool process" not in detail


@dataclass
class Injector:
    """Carries out a schedule against the cluster, logging what it did and when."""

    cluster: Cluster
    redis: Redis | None
    postgres_url: str
    database: str
    markers: Path
    stop_s: float
    say: Callable[[str], None]
    armed: int = 0
    killed: set[int] = field(default_factory=set)
    started: float = 0.0
    fired_s: list[float] = field(default_factory=list)  # when armed crashes fired
    fired_runs: list[str] = field(default_factory=list)  # the run each one was stepping

    def run(self, faults: list[Fault], started: float) -> list[dict[str, object]]:
        """Inject each fault at its time (or as soon after as the last one allows)."""
        done = []
        self.started = started
        for fault in faults:
            time.sleep(max(0.0, started + fault.at_s - time.monotonic()))
            actual = round(time.monotonic() - started, 2)
            detail = getattr(self, fault.kind.replace("-", "_"))(fault)
            ended = round(time.monotonic() - started, 2)  # a stop or a restart lasts seconds
            self.say(f"fault at {actual:7.2f} s (scheduled {fault.at_s}): {fault.kind} {detail}")
            done.append({**asdict(fault), "actual_s": actual, "ended_s": ended, "detail": detail})
        return done

    def kill_child(self, fault: Fault) -> str:
        worker = self.cluster.workers[fault.worker]
        deadline = time.monotonic() + 15
        while not (children := worker.children()) and time.monotonic() < deadline:
            time.sleep(0.2)  # the worker is (re)starting: wait for its pool
        if not children:
            return f"{worker.name} had no pool process for 15 s"
        pid = children[fault.pick % len(children)]
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        return f"{worker.name} pool pid {pid}"

    def kill_main(self, fault: Fault) -> str:
        worker = self.cluster.workers[fault.worker]
        deadline = time.monotonic() + 15
        while worker.pid in self.killed and time.monotonic() < deadline:
            time.sleep(0.2)  # killed already: wait for the supervisor's restart
        pid = worker.pid
        if pid in self.killed:
            return f"skipped: {worker.name} was not restarted within 15 s"
        self.killed.add(pid)
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        return f"{worker.name} main pid {pid}"

    def stop(self, fault: Fault) -> str:
        worker = self.cluster.workers[fault.worker]
        with self.cluster.lock:
            self.cluster.held.add(worker.name)
        worker.kill_group(signal.SIGSTOP)
        time.sleep(self.stop_s)
        worker.kill_group(signal.SIGCONT)
        with self.cluster.lock:
            self.cluster.held.discard(worker.name)
        return f"{worker.name} (pid {worker.pid}) stopped {self.stop_s:g} s"

    def redis_restart(self, fault: Fault) -> str:
        if self.redis is None:
            return "skipped: Redis is not ours to restart (--redis-url)"
        self.redis.kill()
        time.sleep(2.0)
        self.redis.start()
        return f"port {self.redis.port} down 2 s, every queued message lost"

    def terminate(self) -> int:
        with psycopg.connect(admin_url(self.postgres_url), autocommit=True) as conn:
            rows = conn.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE datname = %s AND pid <> pg_backend_pid()",
                [self.database],
            ).fetchall()
        return len(rows)

    def pg_terminate(self, fault: Fault) -> str:
        return f"{self.terminate()} backends terminated"

    def pg_restart(self, fault: Fault) -> str:
        with psycopg.connect(admin_url(self.postgres_url), autocommit=True) as conn:
            conn.execute(f'ALTER DATABASE "{self.database}" ALLOW_CONNECTIONS false')
        try:
            ended = self.terminate()
            time.sleep(4.0)
        finally:
            with psycopg.connect(admin_url(self.postgres_url), autocommit=True) as conn:
                conn.execute(f'ALTER DATABASE "{self.database}" ALLOW_CONNECTIONS true')
        return f"{ended} backends terminated, connections refused for 4 s"

    def crash_after_commit(self, fault: Fault) -> str:
        marker = self.markers / "advance.after_commit"
        if not marker.exists():
            return "skipped: the last one armed has not fired yet"
        self.note_fired()
        marker.unlink()
        self.armed += 1
        return "armed: the next step to commit kills its worker process before publishing"

    def crashes_fired(self) -> int:
        """How many armed crashes fired (the last one fired when its marker is back)."""
        pending = 0 if (self.markers / "advance.after_commit").exists() else 1
        return self.armed - pending

    def fired_times(self) -> list[float]:
        """When each armed crash fired, in seconds after the workload started."""
        self.note_fired()
        return list(self.fired_s)

    def note_fired(self) -> None:
        """Note when the crash armed last fired, if it did: its process touched the marker
        then (seconds after the workload started, as the faults' times)."""
        marker = self.markers / "advance.after_commit"
        if self.armed > len(self.fired_s) and marker.exists():
            wall_to_run = time.time() - (time.monotonic() - self.started)
            self.fired_s.append(round(marker.stat().st_mtime - wall_to_run, 2))
            self.fired_runs.append(marker.read_text().strip())
