"""The processes under test: a Redis of our own, Daphne and Celery workers on a fresh
PostgreSQL database, all on 127.0.0.1, and a supervisor that restarts a killed worker."""

import contextlib
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import psycopg

from tests.processes import BIN, ROOT, base_env, free_port, manage, wait_for_port

REDIS_SERVER = "/usr/bin/redis-server"


def admin_url(postgres_url: str) -> str:
    """The URL of the server's `postgres` database, from which databases are managed."""
    return postgres_url.rsplit("/", 1)[0] + "/postgres"


def fresh_database(postgres_url: str, name: str) -> str:
    """Drop and create the database; return its URL."""
    if name == "test":
        raise SystemExit("the chaos driver never uses the database `test`")
    with psycopg.connect(admin_url(postgres_url), autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')
    return postgres_url.rsplit("/", 1)[0] + "/" + name


@dataclass
class Redis:
    """A redis-server of our own, without persistence: a restart loses every message."""

    port: int
    log: Path
    process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        command = [REDIS_SERVER, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
                   "--appendonly", "no", "--daemonize", "no"]  # fmt: skip
        self.process = subprocess.Popen(
            command, stdout=self.log.open("ab"), stderr=subprocess.STDOUT, start_new_session=True
        )
        wait_for_port(self.port, self.process, self.log)

    def kill(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.kill()
            self.process.wait()


@dataclass
class Worker:
    """One `celery -A braid worker` in its own process group."""

    name: str
    command: list[str]
    env: dict[str, str]
    log: Path
    process: subprocess.Popen[bytes] | None = None
    restarts: int = 0
    ready_text: str = " ready."  # what its log says once it takes tasks

    def start(self) -> None:
        self.process = subprocess.Popen(self.command, cwd=ROOT, env=self.env,
                                        stdout=self.log.open("ab"), stderr=subprocess.STDOUT,
                                        start_new_session=True)  # fmt: skip

    @property
    def pid(self) -> int:
        assert self.process is not None
        return self.process.pid

    def children(self) -> list[int]:
        """The worker's pool processes (none under the thread pool)."""
        try:
            text = Path(f"/proc/{self.pid}/task/{self.pid}/children").read_text()
        except OSError:
            return []
        return [int(pid) for pid in text.split()]

    def kill_group(self, sig: int = signal.SIGKILL) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pid, sig)


@dataclass
class Restart:
    """A worker the supervisor restarted: when (monotonic), and when its log said it was
    ready (None while it boots)."""

    worker: Worker
    at: float
    log_offset: int
    ready_at: float | None = None

    def look(self) -> None:
        """Note the time if the restarted worker's log now says it is ready."""
        with self.worker.log.open("rb") as log:
            log.seek(self.log_offset)
            if self.worker.ready_text.encode() in log.read():
                self.ready_at = time.monotonic()


@dataclass
class Cluster:
    """Daphne and the workers on one database and one Redis; `supervise` keeps them up."""

    database_url: str
    redis_url: str
    var_dir: Path
    workers: list[Worker] = field(default_factory=list)
    beat: Worker | None = None
    daphne: subprocess.Popen[bytes] | None = None
    base_url: str = ""
    held: set[str] = field(default_factory=set)  # workers a fault holds down on purpose
    restarted: list[Restart] = field(default_factory=list)
    stopping: threading.Event = field(default_factory=threading.Event)
    say: Callable[[str], None] = print
    lock: threading.Lock = field(default_factory=threading.Lock)

    def env(self, extra: dict[str, str]) -> dict[str, str]:
        return base_env(DATABASE_URL=self.database_url, REDIS_URL=self.redis_url,
                        BRAID_VAR_DIR=str(self.var_dir), **extra)  # fmt: skip

    def start(self, count: int, pool: str, concurrency: int, extra: dict[str, str]) -> None:
        env = self.env(extra)
        manage(env, "migrate", "--noinput")
        manage(env, "braid", "demo")
        port = free_port()
        daphne = [str(BIN / "daphne"), "-b", "127.0.0.1", "-p", str(port), "braid.asgi:application"]
        log = self.var_dir / "daphne.log"
        output = log.open("ab")
        self.daphne = subprocess.Popen(
            daphne, cwd=ROOT, env=env, stdout=output, stderr=subprocess.STDOUT
        )
        for number in range(1, count + 1):
            command = [str(BIN / "celery"), "-A", "braid", "worker", f"--hostname=w{number}@%h",
                       f"--pool={pool}", f"--concurrency={concurrency}",
                       "--loglevel=INFO"]  # fmt: skip
            worker = Worker(f"w{number}", command, env, self.var_dir / f"worker-{number}.log")
            worker.start()
            self.workers.append(worker)
        # Beat is its own supervised process, as in the Procfile: the beat child of a
        # `worker --beat` that dies is never started again, and the sweeper stops with it.
        beat = [str(BIN / "celery"), "-A", "braid", "beat", "--loglevel=INFO",
                f"--schedule={self.var_dir / 'celerybeat-schedule'}"]  # fmt: skip
        self.beat = Worker("beat", beat, env, self.var_dir / "beat.log", ready_text="Starting")
        self.beat.start()
        wait_for_port(port, self.daphne, log)
        self.base_url = f"http://127.0.0.1:{port}"
        threading.Thread(target=self.supervise, daemon=True, name="supervisor").start()

    def supervise(self) -> None:
        """Restart a worker whose main process died (its leftover pool killed first)."""
        while not self.stopping.wait(0.3):
            for restart in self.restarted:
                if restart.ready_at is None:
                    restart.look()
            for worker in [*self.workers, *([self.beat] if self.beat else [])]:
                with self.lock:
                    if worker.name in self.held or worker.process is None:
                        continue
                    if worker.process.poll() is None:
                        continue
                    worker.kill_group()
                    offset = worker.log.stat().st_size
                    worker.start()
                    worker.restarts += 1
                    self.restarted.append(Restart(worker, time.monotonic(), offset))
                    self.say(f"supervisor: {worker.name} died; restarted as pid {worker.pid}")

    def stop(self) -> None:
        self.stopping.set()
        everything = [*self.workers, *([self.beat] if self.beat else [])]
        for worker in everything:
            if worker.process is not None:
                worker.kill_group(signal.SIGCONT)
                worker.kill_group(signal.SIGTERM)
        deadline = time.monotonic() + 15
        for worker in everything:
            if worker.process is not None:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    worker.process.wait(timeout=max(0.1, deadline - time.monotonic()))
                worker.kill_group(signal.SIGKILL)
                with contextlib.suppress(subprocess.TimeoutExpired):
                    worker.process.wait(timeout=5)
        if self.daphne is not None:
            self.daphne.terminate()
            try:
                self.daphne.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.daphne.kill()
                self.daphne.wait()
