"""`python -m braid.supervise Procfile [NAME ...]`: run a Procfile's processes; keep them up.

`make run-scaled` uses it instead of honcho or foreman, which end every process as soon as
one exits (honcho 2.0's `Manager.loop` terminates the rest once any has stopped, and has no
option to restart it): a worker killed by the OOM killer or by hand would take Daphne and
the other workers with it. Here a process that exits is restarted (after 1 s, doubling up
to 30 s while it keeps dying young), its leftover process group is killed first, and Ctrl-C
or SIGTERM stops them all. Each output line is prefixed with the process's name.

It also gives them one PROMETHEUS_MULTIPROC_DIR (var/metrics unless set), emptied at start,
so that `/metrics` on Daphne sums the counts of every worker process of this host; a process
that exits has its live gauges dropped (docs/operations.md).

Each command runs under `/bin/sh -c 'exec COMMAND'` (honcho and foreman use a shell too), so
a Procfile line may use the environment (`${PORT:-8000}`), and `exec` leaves the command
with the pid the supervisor watches and its metrics files carry. NAMEs, when given, run only
those entries.
"""

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from prometheus_client import multiprocess

FIRST_DELAY_S = 1.0
MAX_DELAY_S = 30.0
HEALTHY_AFTER_S = 60.0
STOP_GRACE_S = 15.0
MULTIPROCESS_DIR = "PROMETHEUS_MULTIPROC_DIR"


def read_procfile(path: Path) -> dict[str, str]:
    """Return the `name: command` lines of a Procfile, in order."""
    entries: dict[str, str] = {}
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        name, separator, command = line.partition(":")
        if not separator or not name.strip() or not command.strip():
            raise SystemExit(f"{path}:{number}: expected 'name: command', got {line!r}")
        entries[name.strip()] = command.strip()
    return entries


def shell_words(command: str, env: Mapping[str, str]) -> list[str]:
    """Return the words /bin/sh makes of a Procfile command in `env` (its `${VAR:-default}`s
    expanded), as the supervisor's `sh -c 'exec COMMAND'` runs it."""
    listing = f'for word in {command}; do printf "%s\\n" "$word"; done'
    done = subprocess.run(["/bin/sh", "-c", listing], env=dict(env), capture_output=True,
                          text=True, check=True)  # fmt: skip
    return done.stdout.splitlines()


def worker_flags(path: Path, env: Mapping[str, str]) -> list[list[str]]:
    """Return the flags after `worker` of each `worker*` entry of a Procfile, as /bin/sh
    reads them in `env`."""
    flags = []
    for name, command in read_procfile(path).items():
        if name.startswith("worker"):
            words = shell_words(command, env)
            flags.append(words[words.index("worker") + 1 :])
    return flags


def pool_of(flags: Sequence[str]) -> str:
    """Return the Celery pool a worker's flags choose (Celery's default: prefork)."""
    chosen = [flag.removeprefix("--pool=") for flag in flags if flag.startswith("--pool=")]
    return chosen[-1] if chosen else "prefork"


@dataclass
class Supervised:
    """One Procfile entry and the process currently running it."""

    name: str
    command: str
    width: int
    process: subprocess.Popen[bytes] | None = None
    started: float = 0.0
    delay: float = FIRST_DELAY_S / 2  # doubled before the first restart
    restart_at: float | None = None

    def say(self, text: str) -> None:
        """Print one line under this process's name."""
        sys.stdout.write(f"{self.name:<{self.width}} | {text}\n")
        sys.stdout.flush()

    def start(self) -> None:
        """Start the command in its own process group and relay its output."""
        self.process = subprocess.Popen(
            ["/bin/sh", "-c", f"exec {self.command}"], stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
        self.started = time.monotonic()
        self.say(f"started (pid {self.process.pid}): {self.command}")
        threading.Thread(target=self.relay, args=(self.process,), daemon=True).start()

    def relay(self, process: subprocess.Popen[bytes]) -> None:
        """Copy the process's output lines to ours."""
        assert process.stdout is not None
        for raw in process.stdout:
            self.say(raw.decode(errors="replace").rstrip("\n"))

    def check(self) -> None:
        """Schedule a restart when the process has ended; start it again when due."""
        if self.process is None:
            return
        now = time.monotonic()
        if self.restart_at is None and self.process.poll() is not None:
            # Pool processes of a killed worker would live on, holding their messages.
            kill_group(self.process.pid, signal.SIGKILL)
            forget_live_gauges(self.process.pid)
            young = now - self.started < HEALTHY_AFTER_S
            self.delay = min(self.delay * 2, MAX_DELAY_S) if young else FIRST_DELAY_S
            self.restart_at = now + self.delay
            self.say(f"exited with {self.process.returncode}; restarting in {self.delay:g} s")
        elif self.restart_at is not None and now >= self.restart_at:
            self.restart_at = None
            self.start()


def kill_group(pid: int, sig: int) -> None:
    """Signal a process group, ignoring one that is already gone."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)


def forget_live_gauges(pid: int) -> None:
    """Drop a dead process's live gauges (its open websockets) from the metrics directory;
    its counters stay, so that the host's totals never go down."""
    directory = os.environ.get(MULTIPROCESS_DIR)
    if directory:
        multiprocess.mark_process_dead(pid, directory)


def prepare_metrics_directory(default: Path) -> Path:
    """Set PROMETHEUS_MULTIPROC_DIR for the processes to come (`default` unless set) and
    empty it: files left by an earlier start would count again, under reused pids."""
    directory = Path(os.environ.setdefault(MULTIPROCESS_DIR, str(default)))
    directory.mkdir(parents=True, exist_ok=True)
    for leftover in directory.glob("*.db"):
        leftover.unlink()
    return directory


def stop_all(entries: list[Supervised]) -> None:
    """SIGTERM every process group, then SIGKILL what is left after the grace period."""
    for entry in entries:
        if entry.process and entry.process.poll() is None:
            entry.say("stopping")
            kill_group(entry.process.pid, signal.SIGTERM)
    deadline = time.monotonic() + STOP_GRACE_S
    for entry in entries:
        if entry.process is None:
            continue
        with contextlib.suppress(subprocess.TimeoutExpired):
            entry.process.wait(timeout=max(0.1, deadline - time.monotonic()))
        kill_group(entry.process.pid, signal.SIGKILL)


def chosen(commands: dict[str, str], names: list[str]) -> dict[str, str]:
    """Return the entries named (all when no name is given); refuse a name not there."""
    unknown = [name for name in names if name not in commands]
    if unknown:
        raise SystemExit(f"no such process in the Procfile: {', '.join(unknown)}")
    return {name: command for name, command in commands.items() if not names or name in names}


def supervise(procfile: Path, names: list[str] | None = None) -> int:
    """Run and restart the Procfile's processes until Ctrl-C or SIGTERM; return 0."""
    commands = chosen(read_procfile(procfile), names or [])
    width = max(len(name) for name in commands) if commands else 0
    entries = [Supervised(name, command, width) for name, command in commands.items()]
    stopping = threading.Event()

    def request_stop(signum: int, _frame: object) -> None:
        stopping.set()

    signal.signal(signal.SIGINT, request_stop)
    signal.signal(signal.SIGTERM, request_stop)
    var_dir = Path(os.environ.get("BRAID_VAR_DIR", Path(__file__).resolve().parent.parent / "var"))
    prepare_metrics_directory(var_dir / "metrics")
    for entry in entries:
        entry.start()
    while not stopping.wait(0.5):
        for entry in entries:
            entry.check()
    stop_all(entries)
    return 0


if __name__ == "__main__":
    if len(sys.argv) < 2:
        raise SystemExit("usage: python -m braid.supervise PROCFILE [NAME ...]")
    sys.exit(supervise(Path(sys.argv[1]), sys.argv[2:]))
