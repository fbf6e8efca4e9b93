"""Where Braid's time goes on W3 (many small runs): py-spy on both workers, CPU by process kind.

  python -m bench.durable_peers.profile [--seconds 15]

Sets up its own database as bench.durable_peers.run does (and drops it), starts Braid's
workers and beat as braid_subject does, starts batches of 50 W3 runs back to back from this
process, and meanwhile samples every worker process with `py-spy record --subprocesses`
(from the .[bench] extra) and reads the CPU time of every process from /proc. Prints the
functions holding the most samples (inclusive and self) and the CPU seconds by kind.
"""

from __future__ import annotations

import argparse
import collections
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from bench.durable import Processes
from bench.durable_peers.common import BIN, QUICK, W3_STEPS, watch

TICK = os.sysconf("SC_CLK_TCK")
TOP = 25


def cpu_by_pid() -> dict[int, tuple[str, float]]:
    """Return every process's command line and CPU seconds so far."""
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        found[int(entry.name)] = (command, (int(fields[11]) + int(fields[12])) / TICK)
    return found


KINDS = (
    ("celery -A braid worker", "Braid's workers (parents and pools)"),
    ("celery -A braid beat", "beat"),
    ("redis-server", "Redis (all users)"),
    ("bench.durable_peers.profile", "the client (create_run, polling)"),
)


def kind(command: str) -> str:
    """Return the kind of a process, for the CPU split."""
    if command.startswith("postgres") and "braid_h4_braid" in command:
        return "PostgreSQL backends of this database"
    for needle, name in KINDS:
        if needle in command:
            return name
    return "everything else on the machine"


def cpu_split(
    before: dict[int, tuple[str, float]], after: dict[int, tuple[str, float]]
) -> dict[str, float]:
    """Return the CPU seconds each kind used between two readings."""
    used: dict[str, float] = collections.defaultdict(float)
    for pid, (command, seconds) in after.items():
        earlier = before.get(pid)
        start = earlier[1] if earlier and earlier[0] == command else 0.0
        used[kind(command)] += seconds - start
    return dict(used)


def frame_name(frame: str) -> str:
    """Return 'function (module path)' of one py-spy raw frame."""
    name, _, where = frame.partition(" (")
    path = where.split(":")[0].split("/site-packages/")[-1].split("/wt-peers/")[-1]
    return f"{name} ({path.split('/work/main/')[-1]})"


PROJECT = ("engine/", "braid/", "runs/", "approvals/", "web/", "designer/", "monitor/")


def summarize(raw: list[str]) -> list[str]:
    """Return the shares of the samples (taken only while a thread held the GIL: Python's
    CPU, not its waits) in Braid's own functions (inclusive) and in every leaf (self)."""
    inclusive: collections.Counter[str] = collections.Counter()
    own: collections.Counter[str] = collections.Counter()
    total = 0
    for line in raw:
        stack, _, count = line.rstrip().rpartition(" ")
        if not stack or not count.isdigit():
            continue
        frames = [frame_name(f) for f in stack.split(";")]
        total += int(count)
        for name in {f for f in frames if f.split(" (")[-1].startswith(PROJECT)}:
            inclusive[name] += int(count)
        own[frames[-1]] += int(count)
    lines = [f"samples holding the GIL: {total}", "", "inclusive, Braid's functions:"]
    lines += [f"  {100 * c / total:5.1f}%  {k}" for k, c in inclusive.most_common(TOP)]
    lines += ["", "self, any function:"] + [
        f"  {100 * c / total:5.1f}%  {k}" for k, c in own.most_common(TOP)
    ]
    return lines


def load_runs(stop: threading.Event, counted: list[int]) -> None:
    """Start batches of 50 W3 runs back to back until told to stop."""
    from bench.durable_peers.braid_subject import Braid

    braid = Braid()
    while not stop.is_set():
        began = time.perf_counter()
        started = {braid.start("W3"): began for _ in range(50)}
        watch(started, braid.finished)
        counted[0] += len(started)


def record(workers: list[subprocess.Popen[bytes]], seconds: int, folder: Path) -> list[str]:
    """Sample each worker and its pool with py-spy; return the raw stacks."""
    outputs = [folder / f"worker{i}.txt" for i in range(len(workers))]
    spies = [
        subprocess.Popen([str(BIN / "py-spy"), "record", "--pid", str(w.pid), "--subprocesses",
                          "--format", "raw", "-d", str(seconds), "-r", "200", "-o", str(out),
                          "--nonblocking", "--gil"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for w, out in zip(workers, outputs, strict=True)
    ]  # fmt: skip
    for spy in spies:
        spy.wait()
    return [line for out in outputs if out.exists() for line in out.read_text().splitlines()]


def profile(seconds: int, folder: Path) -> list[str]:
    """Start Braid, load it with W3 runs, sample; return the summary's lines."""
    from bench.durable_peers import braid_subject as b

    b.setup_django()
    procs = Processes(b.env(), folder)
    stop, counted = threading.Event(), [0]
    try:
        workers = b.start_braid(procs)
        loader = threading.Thread(target=load_runs, args=(stop, counted))
        loader.start()
        time.sleep(3)
        before, runs_before, began = cpu_by_pid(), counted[0], time.monotonic()
        raw = record(workers, seconds, folder)
        after, runs, wall = cpu_by_pid(), counted[0] - runs_before, time.monotonic() - began
    finally:
        stop.set()
        procs.stop_all()
    steps = runs * W3_STEPS
    split = cpu_split(before, after)
    lines = [f"{runs} W3 runs of {W3_STEPS} steps completed in the {wall:.1f} s sampled; "
             f"CPU seconds by kind (2 cores = {2 * wall:.1f} s available):"]  # fmt: skip
    lines += [f"  {v:6.2f} s  {k}" + (f"  ({v / runs * 1e3:.1f} ms a run, "
              f"{v / steps * 1e3:.2f} ms a step)" if runs else "")
              for k, v in sorted(split.items(), key=lambda kv: -kv[1]) if v > 0.05]  # fmt: skip
    return [*lines, "", *summarize(raw)]


def main(argv: list[str] | None = None) -> int:
    from bench.durable_peers import run

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=int, default=15)
    args = parser.parse_args(argv)
    folder = Path(tempfile.mkdtemp(prefix="braid-peers-profile-"))
    os.environ["PEERS_SCRATCH"] = str(folder)
    try:
        run.set_up(run.Run(QUICK, ("braid",), 0, folder, False))
        print("\n".join(profile(args.seconds, folder)))
    finally:
        run.tear_down()
    return 0


if __name__ == "__main__":
    sys.exit(main())
