"""`python -m braid.supervise`: the process runner of `make run-scaled` restarts what dies."""

import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from braid.supervise import read_procfile
from tests.processes import ROOT

SLEEPER = f"{sys.executable} -c 'import time; time.sleep(120)'"


class Lines:
    """The supervisor's output, read in a thread so that waits can time out."""

    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        self.queue: queue.Queue[str] = queue.Queue()
        self.seen: list[str] = []
        assert process.stdout is not None
        stream = process.stdout

        def read() -> None:
            for line in stream:
                self.queue.put(line.decode())

        threading.Thread(target=read, daemon=True).start()

    def wait_for(self, pattern: str, seconds: float = 20) -> re.Match[str]:
        """Return the first new line matching the pattern; fail after `seconds`."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            try:
                line = self.queue.get(timeout=0.2)
            except queue.Empty:
                continue
            self.seen.append(line)
            found = re.search(pattern, line)
            if found:
                return found
        raise AssertionError(f"no line matched {pattern!r}:\n{''.join(self.seen)}")

    def rest(self) -> list[str]:
        """Return every line seen, after taking in what is still queued."""
        while not self.queue.empty():
            self.seen.append(self.queue.get())
        return self.seen


def alive(pid: int) -> bool:
    """Return whether a process with this id exists (and is not a zombie of ours)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    status = (
        Path(f"/proc/{pid}/stat").read_text().split()[2] if Path(f"/proc/{pid}").exists() else "X"
    )
    return status != "Z"


def supervise(procfile: Path, metrics_dir: Path) -> subprocess.Popen[bytes]:
    """Start `python -m braid.supervise` on the Procfile, with its metrics directory."""
    env = {**os.environ, "PROMETHEUS_MULTIPROC_DIR": str(metrics_dir)}
    command = [sys.executable, "-m", "braid.supervise", str(procfile)]
    return subprocess.Popen(
        command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )


# A process with one live gauge, as Daphne's open websockets (web.sockets.OPEN_SOCKETS).
GAUGED = (
    f"{sys.executable} -c 'import time; from prometheus_client import Gauge; "
    'Gauge("g", "g", multiprocess_mode="livesum").inc(); time.sleep(120)\''
)


def test_the_metrics_directory_starts_empty_and_loses_the_live_gauges_of_a_dead_process(
    tmp_path: Path,
) -> None:
    metrics_dir = tmp_path / "metrics"
    metrics_dir.mkdir()
    (metrics_dir / "counter_999999.db").write_bytes(b"left by an earlier start")
    procfile = tmp_path / "Procfile"
    procfile.write_text(f"web: {GAUGED}\n")
    supervisor = supervise(procfile, metrics_dir)
    lines = Lines(supervisor)
    try:
        first = int(lines.wait_for(r"^web \| started \(pid (\d+)\)")[1])
        wait_until(lambda: (metrics_dir / f"gauge_livesum_{first}.db").exists())
        assert sorted(p.name for p in metrics_dir.iterdir()) == [f"gauge_livesum_{first}.db"]
        os.kill(first, signal.SIGKILL)
        second = int(lines.wait_for(r"^web \| started \(pid (\d+)\)")[1])
        wait_until(lambda: (metrics_dir / f"gauge_livesum_{second}.db").exists())
        assert sorted(p.name for p in metrics_dir.iterdir()) == [f"gauge_livesum_{second}.db"]
        supervisor.send_signal(signal.SIGTERM)
        assert supervisor.wait(timeout=30) == 0
    finally:
        supervisor.kill()


def wait_until(condition: Callable[[], bool], seconds: float = 20) -> None:
    """Poll a condition every 0.1 s; fail after `seconds`."""
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "the condition did not come true"
        time.sleep(0.1)


def test_a_killed_process_is_restarted_and_the_others_keep_running(tmp_path: Path) -> None:
    procfile = tmp_path / "Procfile"
    procfile.write_text(f"# two sleepers\nweb: {SLEEPER}\nworker: {SLEEPER}\n")
    supervisor = supervise(procfile, tmp_path / "metrics")
    lines = Lines(supervisor)
    try:
        web = int(lines.wait_for(r"^web +\| started \(pid (\d+)\)")[1])
        worker = int(lines.wait_for(r"^worker \| started \(pid (\d+)\)")[1])
        os.kill(worker, signal.SIGKILL)
        lines.wait_for(r"^worker \| exited with -9; restarting in 1 s")
        again = int(lines.wait_for(r"^worker \| started \(pid (\d+)\)")[1])
        assert again != worker and alive(again) and alive(web)
        supervisor.send_signal(signal.SIGTERM)
        assert supervisor.wait(timeout=30) == 0
    finally:
        supervisor.kill()
    assert not alive(web) and not alive(again)
    web_lines = [line.split("|")[1].split()[0] for line in lines.rest() if line.startswith("web ")]
    assert web_lines == ["started", "stopping"]


def test_a_malformed_procfile_line_is_refused_with_its_line_number(tmp_path: Path) -> None:
    procfile = tmp_path / "Procfile"
    procfile.write_text("web: daphne\njust words\n")
    with pytest.raises(SystemExit, match=r"Procfile:2: expected 'name: command'"):
        read_procfile(procfile)
    assert read_procfile(ROOT / "Procfile").keys() == {"web", "worker1", "worker2", "beat"}
