"""`python -m chaos --seed N [--runs N]`: the workload under faults, then the invariants.

The driver process is itself a Django process on the chaos database: it publishes the
flows, starts every run through Daphne's API as `admin`, decides approvals through the
API as `finance` (the scripted approver), samples the node rows every second, injects the
faults on their schedule, waits for the drain, and checks the invariants.
"""

import argparse
import json
import os
import threading
import time
from pathlib import Path
from typing import Any

from chaos import workload
from chaos.cluster import Cluster, Redis, fresh_database
from chaos.faults import Injector, counts_for, schedule, took_effect

ROOT = Path(__file__).resolve().parents[1]
ON_WORKERS = ("kill-child", "kill-main", "stop")
SHIPPED_POOL = "threads"  # the Procfile's workers' pool (a test holds them equal)


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m chaos", description=__doc__)
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--runs", type=int, default=300)
    parser.add_argument("--workers", type=int, default=3)
    parser.add_argument("--pool", choices=("threads", "prefork"), default=SHIPPED_POOL,
                        help="the workers' pool (default: the Procfile's)")  # fmt: skip
    parser.add_argument("--concurrency", type=int, default=2,
                        help="pool processes (or threads) per worker")  # fmt: skip
    parser.add_argument("--launch-every", type=float, default=0.4, help="seconds between runs")
    parser.add_argument("--drain-timeout", type=float, default=300)
    parser.add_argument("--duplicate-every", type=int, default=7,
                        help="send every Nth message twice (0: never)")  # fmt: skip
    parser.add_argument("--postgres-url", default=os.environ.get(
        "BRAID_CHAOS_POSTGRES_URL", "postgres://postgres@127.0.0.1:5432/postgres"))  # fmt: skip
    parser.add_argument("--redis-port", type=int, default=6390, help="our own redis-server")
    parser.add_argument(
        "--redis-db", type=int, default=int(os.environ.get("BRAID_CHAOS_REDIS_DB", 8))
    )
    parser.add_argument("--redis-url", default="",
                        help="another Redis instead of ours (then no Redis restarts)")  # fmt: skip
    parser.add_argument("--faults", default="", help="override counts, e.g. kill-child=2,stop=0")
    parser.add_argument("--database", default=os.environ.get("BRAID_CHAOS_DATABASE", ""),
                        help="the database made afresh (default braid_chaos_<seed>)")  # fmt: skip
    parser.add_argument("--keep", action="store_true", help="keep the database afterwards")
    parser.add_argument("--json", default="", help="write the summary here")
    return parser.parse_args(argv)


class Chaos:
    """One chaos run: its settings, processes, log and findings."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.var_dir = ROOT / "var" / "chaos" / f"seed-{args.seed}"
        self.var_dir.mkdir(parents=True, exist_ok=True)
        for old in self.var_dir.glob("*.log"):
            old.unlink()
        self.log_path = self.var_dir / "chaos.log"
        self.log_path.write_text("")
        self.lock = threading.Lock()
        self.started = time.monotonic()

    def say(self, text: str) -> None:
        line = f"[{time.monotonic() - self.started:8.2f}] {text}"
        with self.lock:
            print(line, flush=True)
            with self.log_path.open("a") as log:
                log.write(line + "\n")


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    chaos = Chaos(args)
    counts = counts_for(args.runs, args.pool)
    for item in filter(None, args.faults.split(",")):
        kind, _, number = item.partition("=")
        counts[kind] = int(number)
    redis = None
    if args.redis_url:
        redis_url = args.redis_url
        counts["redis-restart"] = 0
    else:
        redis = Redis(args.redis_port, chaos.var_dir / "redis.log")
        redis.start()
        redis_url = f"redis://127.0.0.1:{args.redis_port}/{args.redis_db}"
    database = args.database or f"braid_chaos_{args.seed}"
    database_url = fresh_database(args.postgres_url, database)
    markers = chaos.var_dir / "crash-markers"
    markers.mkdir(exist_ok=True)
    (markers / "advance.after_commit").touch()  # disarmed until a fault deletes it
    extra = worker_settings(markers, args.duplicate_every)
    os.environ.update(DATABASE_URL=database_url, REDIS_URL=redis_url,
                      DJANGO_SETTINGS_MODULE="braid.settings", BRAID_VAR_DIR=str(chaos.var_dir),
                      DJANGO_HTTPS="0", **{k: v for k, v in extra.items() if "CRASH" not in k
                                            and "DUPLICATE" not in k})  # fmt: skip
    import django

    django.setup()
    cluster = Cluster(database_url, redis_url, chaos.var_dir, say=chaos.say)
    chaos.say(f"seed {args.seed}: {args.runs} runs, {args.workers} {args.pool} workers x "
              f"{args.concurrency}, database {database}, redis {redis_url}")  # fmt: skip
    summary: dict[str, Any] = {}
    try:
        cluster.start(args.workers, args.pool, args.concurrency, extra)
        summary = exercise(chaos, cluster, redis, counts, database, markers)
    finally:
        cluster.stop()
        if redis is not None:
            redis.kill()
    failed = any(summary.get("invariants", {"setup": 1}).values())
    if not failed and not args.keep:
        drop_database(args.postgres_url, database)
    if args.json:
        Path(args.json).write_text(json.dumps(summary, indent=2))
    return 1 if failed else 0


def worker_settings(markers: Path, duplicate_every: int | None) -> dict[str, str]:
    """Return the workers' settings: fast recovery, armed crash markers, duplicate sends."""
    # Fast recovery, so that a few minutes hold many faults: a silent worker is dead after
    # 3 s, the sweeper runs every second, an unclaimed message is re-sent after 10 s.
    return {"BRAID_SWEEP_INTERVAL_S": "1", "BRAID_SWEEP_STALE_S": "10",
            "BRAID_LEASE_BEAT_S": "0.5", "BRAID_LEASE_DEAD_S": "3",
            "BRAID_CRASH_AT": "advance.after_commit", "BRAID_CRASH_MARKERS": str(markers),
            "BRAID_DUPLICATE_EVERY": str(duplicate_every or ""), "BRAID_LIVE": "0",
            "BRAID_LOG_LEVEL": "WARNING",
            # A line a time and the run it is about, for the report of a late wait (check.py).
            "BRAID_LOG_FORMAT": "json",
            # The crash-loop guard counts every worker death in the middle of a run's step;
            # chaos kills a process every few seconds, so three unrelated deaths in one
            # run's steps are common here (docs/reliability.md: "Found by chaos").
            "BRAID_STEP_MAX_ATTEMPTS": "8"}  # fmt: skip


def drop_database(postgres_url: str, database: str) -> None:
    """Drop the run's database once it passed (a failed one is kept to look at)."""
    from django.db import connections

    connections.close_all()
    import psycopg

    from chaos.cluster import admin_url

    with psycopg.connect(admin_url(postgres_url), autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')


def exercise(chaos: Chaos, cluster: Cluster, redis: Redis | None, counts: dict[str, int],
             database: str, markers: Path) -> dict[str, Any]:  # fmt: skip
    """Publish, start, decide and fault; drain; check. Return the summary."""
    from chaos.check import check, table
    from chaos.traffic import Traffic
    from chaos.waits import fault_windows, recovery_s

    args = chaos.args
    traffic = Traffic(chaos, cluster.base_url)
    traffic.publish()
    planned = workload.runs(args.seed, args.runs, sorted(traffic.slugs))
    window = args.runs * args.launch_every * 0.9  # runs keep coming after the last fault
    faults = schedule(args.seed, counts, window, args.workers)
    (chaos.var_dir / "schedule.json").write_text(json.dumps([f.__dict__ for f in faults], indent=1))
    chaos.say(f"fault schedule ({len(faults)}): " + ", ".join(
        f"{f.at_s}s {f.kind}" + (f" w{f.worker + 1}" if f.kind in ON_WORKERS else "")
        for f in faults))  # fmt: skip
    injector = Injector(cluster, redis, args.postgres_url, database, markers, 6.0, chaos.say)
    injected: list[dict[str, object]] = []
    started = time.monotonic()
    faulting = threading.Thread(target=lambda: injected.extend(injector.run(faults, started)),
                                daemon=True, name="faults")  # fmt: skip
    faulting.start()
    traffic.launch(planned, started, args.launch_every)
    while faulting.is_alive():
        traffic.tick()
    fault_end = time.monotonic() - started
    chaos.say(f"all runs started and all faults injected at {fault_end:.1f} s; draining")
    # Quiet must outlast the slowest recovery: an unclaimed message is re-sent after 10 s.
    drained = traffic.drain(args.drain_timeout, quiet_s=12)
    drain_s = time.monotonic() - started - fault_end
    chaos.say(f"drain {'done' if drained else 'TIMED OUT'} after {drain_s:.1f} s")
    ended = time.monotonic()  # a worker still booting now is ready no sooner
    restarts = [(r.at - started, (r.ready_at or ended) - started) for r in cluster.restarted]
    windows = fault_windows(injected, injector.fired_times(), restarts, traffic.waits.clock,
                            started, recovery_s())  # fmt: skip
    findings = check(chaos, planned, traffic, windows)
    summary = {
        "seed": args.seed, "runs": args.runs, "workers": args.workers,
        "pool": args.pool, "concurrency": args.concurrency,
        "duplicate_every": args.duplicate_every,
        "faults": injected, "fault_counts": {k: sum(1 for f in injected if f["kind"] == k
                                                    and took_effect(f)) for k in counts},
        "restarts": {w.name: w.restarts for w in cluster.workers},
        "crashes_fired": injector.crashes_fired(),
        "crashes_after_commit": [{"at_s": at, "run": run} for at, run in
                                 zip(injector.fired_s, injector.fired_runs, strict=False)],
        "restarts_ready_after_s": [round(ready - begun, 1) for begun, ready in restarts],
        "fault_windows": [f"{w.kind}: {w.start:%H:%M:%S.%f} to {w.end:%H:%M:%S.%f}"
                          for w in windows],
        "workload_s": round(fault_end, 1), "drain_s": round(drain_s, 1), "drained": drained,
        **findings,
    }  # fmt: skip
    print(table(summary), flush=True)
    (chaos.var_dir / "summary.json").write_text(json.dumps(summary, indent=2))
    return summary


if __name__ == "__main__":
    raise SystemExit(main())
