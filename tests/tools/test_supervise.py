"""`python -m braid.supervise`: the process runner of `make run-scaled` restarts what dies, and
the Procfile it runs serves where HOST and PORT say."""

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
from tests.processes import ROOT, Browserless, base_env, free_port

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


def test_a_procfile_line_reads_the_environment_through_the_shell(tmp_path: Path) -> None:
    procfile = tmp_path / "Procfile"
    procfile.write_text('echo: echo "port ${PORT:-8000} on ${HOST:-127.0.0.1}"\n')
    command = [sys.executable, "-m", "braid.supervise", str(procfile)]
    env = {key: value for key, value in base_env(PORT="8123").items() if key != "HOST"}
    supervisor = subprocess.Popen(
        command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    lines = Lines(supervisor)
    try:
        lines.wait_for(r"^echo \| port 8123 on 127\.0\.0\.1$")
    finally:
        supervisor.send_signal(signal.SIGTERM)
        assert supervisor.wait(timeout=30) == 0


def test_the_procfiles_web_serves_braid_on_host_and_port_and_prints_the_url(
    tmp_path: Path,
) -> None:
    """Another loopback address than the default (Linux routes all of 127/8 to lo) shows
    that HOST reaches Daphne as well as PORT."""
    port = free_port()
    env = base_env(HOST="127.0.0.2", PORT=str(port), DJANGO_ALLOWED_HOSTS="127.0.0.2",
                   BRAID_VAR_DIR=str(tmp_path), BRAID_SWEEP_INTERVAL_S="3600")  # fmt: skip
    command = [sys.executable, "-m", "braid.supervise", "Procfile", "web"]
    supervisor = subprocess.Popen(
        command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    lines = Lines(supervisor)
    try:
        url = f"http://127.0.0.2:{port}/"
        lines.wait_for(rf"^web \| Braid is serving on {re.escape(url)}  \(Ctrl-C stops it\)$")
        lines.wait_for(rf"^web \| Listening on TCP address 127\.0\.0\.2:{port}$")
        status, page = Browserless(url.rstrip("/")).get("/login/")
        assert (status, b'name="csrfmiddlewaretoken"' in page) == (200, True)
    finally:
        supervisor.send_signal(signal.SIGTERM)
        assert supervisor.wait(timeout=30) == 0
    started = [line for line in lines.rest() if re.match(r"^\w+ +\| started", line)]
    assert [line.split()[0] for line in started] == ["web"]


def test_a_name_not_in_the_procfile_is_refused() -> None:
    command = [sys.executable, "-m", "braid.supervise", "Procfile", "web", "wokrer1"]
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=30)
    assert (result.returncode, result.stderr) == (1, "no such process in the Procfile: wokrer1\n")
