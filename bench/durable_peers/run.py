"""Run every subject round by round, then the kill -9 tests, and write bench/PEERS.md.

Usage: python -m bench.durable_peers.run [--quick] [--out bench/PEERS.md]
       [--subjects braid,temporal,dbos,langgraph,celery] [--rounds N] [--no-kill]

Creates its PostgreSQL databases (`braid_h4_braid`, `..._dbos`, `..._langgraph`; the prefix
from PEERS_DB_PREFIX) and migrates Braid's, uses Redis databases 9 and 10 (PEERS_REDIS_BRAID,
PEERS_REDIS_FLOOR), and drops and flushes them at the end, also on errors. Each subject's
driver runs in its own process per round (bench/durable_peers/<subject>_subject.py) and
stops every process it started; logs stay in the scratch folder printed at the end.

A run stopped early keeps its folder: `--render FOLDER --out bench/PEERS.md` writes the report
of its whole rounds (and of a kill.jsonl put there, e.g. from a `--rounds 0` run); a "note" in
FOLDER/info.json is printed under the report's first line, to say why it stopped.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg

from bench.durable import admin_execute, manage, terminate
from bench.durable_peers import report
from bench.durable_peers.common import FULL, PG, QUICK, Plan, database, load1, redis_url
from bench.report import provenance_section

DRIVERS = {
    "braid": "bench.durable_peers.braid_subject",
    "temporal": "bench.durable_peers.temporal_subject",
    "dbos": "bench.durable_peers.dbos_subject",
    "langgraph": "bench.durable_peers.langgraph_subject",
    "celery": "bench.durable_peers.celery_floor",
}
DATABASES = ("braid", "dbos", "langgraph")
DRIVER_TIMEOUT_S = 1200


@dataclass(frozen=True, slots=True)
class Run:
    """One benchmark run: the plan, the subjects, where its files go."""

    plan: Plan
    subjects: tuple[str, ...]
    rounds: int
    scratch: Path
    kill: bool

    @property
    def rows(self) -> Path:
        return self.scratch / "rows.jsonl"

    @property
    def kills(self) -> Path:
        return self.scratch / "kill.jsonl"

    @property
    def meta(self) -> Path:
        return self.scratch / "meta.jsonl"


def others_busy() -> list[str]:
    """Return the command lines of other processes using over 20% of a CPU right now."""
    listing = subprocess.run(["ps", "-eo", "pcpu=,args=", "--sort=-pcpu"], capture_output=True,
                             text=True, check=False).stdout.splitlines()  # fmt: skip
    busy = []
    for line in listing[:10]:
        share, _, command = line.strip().partition(" ")
        if float(share) >= 20 and "durable_peers" not in command and not command.startswith("ps "):
            busy.append(command[:100])
    return busy


def wait_quiet(plan: Plan) -> float:
    """Wait until the 1-minute load is under the plan's limit, or its wait is up."""
    deadline = time.monotonic() + plan.max_wait_s
    while load1() >= plan.max_load and time.monotonic() < deadline:
        time.sleep(2)
    return load1()


def one_driver(run: Run, subject: str, rnd: int) -> dict[str, Any]:
    """Run one subject's driver for one round; return its meta line."""
    before, others = wait_quiet(run.plan), others_busy()
    print(f"== round {rnd} {subject} (load1 {before:.2f})", flush=True)
    began = time.monotonic()
    command = [sys.executable, "-m", DRIVERS[subject], "--round", str(rnd), "--plan",
               run.plan.name, "--out", str(run.rows)]  # fmt: skip
    code = run_child(command)
    seconds = time.monotonic() - began
    print(f"== round {rnd} {subject}: exit {code}, {seconds:.0f} s", flush=True)
    return {"subject": subject, "round": rnd, "load1_before": round(before, 2),
            "load1_after": round(load1(), 2), "seconds": round(seconds, 1), "rc": code,
            "others": others}  # fmt: skip


def run_child(command: list[str]) -> int:
    """Run a driver to its end and return its exit code; on a timeout, or when this process
    is stopped, stop the driver first (its SIGTERM handler stops what it started)."""
    child = subprocess.Popen(command)
    try:
        return child.wait(timeout=DRIVER_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        child.terminate()
        child.wait(timeout=60)
        return -1
    except BaseException:
        child.terminate()
        child.wait(timeout=60)
        raise


def rounds(run: Run) -> None:
    """Every subject once per round, the order turning by one place each round."""
    import json

    for rnd in range(1, run.rounds + 1):
        turn = (rnd - 1) % len(run.subjects)
        for subject in run.subjects[turn:] + run.subjects[:turn]:
            line = one_driver(run, subject, rnd)
            with run.meta.open("a") as f:
                f.write(json.dumps(line) + "\n")


def kill_tests(run: Run) -> None:
    """Each subject's kill -9 test, once."""
    for subject in run.subjects:
        print(f"== kill -9: {subject}", flush=True)
        command = [sys.executable, "-m", "bench.durable_peers.kill", subject, "--out",
                   str(run.kills)]  # fmt: skip
        run_child(command)


def set_up(run: Run) -> None:
    """Create the databases afresh, migrate Braid's, empty the two Redis databases."""
    from bench.durable_peers.braid_subject import env

    for name in DATABASES:
        admin_execute(f"DROP DATABASE IF EXISTS {database(name)} WITH (FORCE)")
        admin_execute(f"CREATE DATABASE {database(name)}")
    flush_redis()
    manage(env(), "migrate", "--noinput")


def flush_redis() -> None:
    """Empty this benchmark's two Redis databases (and only those)."""
    import redis

    for which in ("braid", "floor"):
        redis.Redis.from_url(redis_url(which)).flushdb()


def tear_down() -> None:
    """Drop the databases and empty the Redis databases."""
    for name in DATABASES:
        admin_execute(f"DROP DATABASE IF EXISTS {database(name)} WITH (FORCE)")
    flush_redis()


def servers() -> list[tuple[str, str]]:
    """Return the versions of PostgreSQL, Redis and the Temporal CLI."""
    import redis

    with psycopg.connect(f"{PG}/postgres") as conn:
        row = conn.execute("SHOW server_version").fetchone()
    info = redis.Redis.from_url(redis_url("braid")).info("server")
    bin_ = Path(sys.executable).parent / "temporal"
    cli = subprocess.run([str(bin_), "--version"], capture_output=True, text=True, check=False)
    return [
        ("PostgreSQL", str(row[0] if row else "?")),
        ("Redis", str(info.get("redis_version"))),
        ("temporal CLI", cli.stdout.strip()),
    ]


def parse(argv: list[str] | None) -> tuple[Run, Path | None, bool]:
    """Return the run and the report's path from the command line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="2 rounds, fewer runs per round")
    parser.add_argument("--out", type=Path, help="write the markdown report here")
    parser.add_argument("--subjects", default=",".join(DRIVERS))
    parser.add_argument("--rounds", type=int, help="rounds (full 10, quick 2)")
    parser.add_argument("--no-kill", action="store_true", help="skip the kill -9 tests")
    parser.add_argument("--render", type=Path, metavar="FOLDER",
                        help="only write the report of an earlier run's folder (one stopped "
                        "before its end reports the rounds it finished)")  # fmt: skip
    args = parser.parse_args(argv)
    plan = QUICK if args.quick else FULL
    subjects = tuple(s for s in args.subjects.split(",") if s)
    unknown = set(subjects) - set(DRIVERS)
    if unknown:
        parser.error(f"unknown subjects: {', '.join(sorted(unknown))}")
    scratch = args.render or Path(tempfile.mkdtemp(prefix="braid-peers-"))
    count = plan.rounds if args.rounds is None else args.rounds
    run = Run(plan, subjects, count, scratch, not args.no_kill)
    return run, args.out, args.render is not None


def main(argv: list[str] | None = None) -> int:
    run, out, render_only = parse(argv)
    if not render_only:
        measure(run)
    return write(run, out)


def measure(run: Run) -> None:
    """Set up, take the rounds and the kill tests, tear down; note the run in info.json."""
    signal.signal(signal.SIGTERM, terminate)
    os.environ["PEERS_SCRATCH"] = str(run.scratch)
    # The provenance is taken now, from the code about to run: a report rendered later
    # (`--render`, after FINDINGS.md or the code moved on) still names what was measured.
    info = {"mode": run.plan.name, "planned_rounds": run.rounds, "started": time.time(),
            "facts": report.machine(), "provenance": provenance_section()}  # fmt: skip
    (run.scratch / "info.json").write_text(json.dumps(info))
    try:
        set_up(run)
        info["servers"] = servers()
        (run.scratch / "info.json").write_text(json.dumps(info))
        rounds(run)
        if run.kill:
            kill_tests(run)
    finally:
        tear_down()


def write(run: Run, out: Path | None) -> int:
    """Write (or print) the report of the run's folder."""
    saved = json.loads((run.scratch / "info.json").read_text())
    files = [p for p in (run.rows, run.kills, run.meta) if p.exists()]
    ended = max((p.stat().st_mtime for p in files), default=saved["started"])
    meta = report.read_jsonl(run.meta)
    done = report.whole_rounds(meta, run.subjects)
    meta = [m for m in meta if m["round"] <= done]
    info = report.RunInfo(saved["mode"], done, ended - saved["started"],
                          [tuple(f) for f in saved["facts"]],
                          [tuple(s) for s in saved.get("servers", [])],
                          saved["planned_rounds"], saved.get("note", ""),
                          saved.get("provenance", []), saved["started"])  # fmt: skip
    lines = run.rows.read_text().splitlines() if run.rows.exists() else []
    cells = report.read_cells(lines, done)
    text = report.render(cells, report.read_jsonl(run.kills), meta, info, report.findings())
    if out is not None:
        out.write_text(text)
        print(f"wrote {out}")
    else:
        print(text)
    print(f"rows and logs: {run.scratch}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
