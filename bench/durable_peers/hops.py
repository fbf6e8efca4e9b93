"""Where a W4 decision's time goes: every SQL statement from the decision to the run's end,
on the database's own clock, by process.

  python -m bench.durable_peers.hops [--decisions 5] [--through api|client]

Sets up its own database as bench.durable_peers.run does (and drops it), starts Braid as
braid_subject does, and has PostgreSQL log every statement of that database
(`log_min_duration_statement = 0`, set on the database only). For each decision it prints
the statements between the decide call and the run seen completed, each with its end time
in milliseconds after the call, its duration and the process that sent it (the client,
Daphne, or a worker's pool process), so the gaps between them are the hops: the broker, a
worker's pickup, Python between statements. Reads the server's log file, so it runs on the
machine that runs PostgreSQL.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import re
import sys
import tempfile
import time
from pathlib import Path

LOG = Path(os.environ.get("PEERS_PG_LOG", "/var/log/postgresql/postgresql-15-main.log"))
LINE = re.compile(
    r"^(?P<at>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}) UTC \[(?P<pid>\d+)\] \S*@(?P<db>\S+) "
    r"LOG:  duration: (?P<ms>[\d.]+) ms  (?P<what>.*)$"
)


def statements(offset: int, db: str) -> list[tuple[float, int, float, str]]:
    """Return (epoch end time, pid, ms, text) of the database's statements logged after
    `offset` bytes of the log."""
    found = []
    with LOG.open("rb") as log:
        log.seek(offset)
        for raw in log.read().decode(errors="replace").splitlines():
            match = LINE.match(raw)
            if not match or match["db"] != db:
                continue
            at = dt.datetime.strptime(match["at"], "%Y-%m-%d %H:%M:%S.%f")
            epoch = at.replace(tzinfo=dt.UTC).timestamp()
            found.append((epoch, int(match["pid"]), float(match["ms"]), match["what"]))
    return found


def roles() -> dict[int, str]:
    """Return a name for each backend of the database: "client" for this process's, its
    pid for the others (Daphne's and the workers')."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        own = cursor.fetchone()[0]
        cursor.execute("SELECT pid FROM pg_stat_activity WHERE datname = current_database()")
        found = {pid: f"backend {pid}" for (pid,) in cursor.fetchall()}
    found[own] = "client"
    return found


def timeline(began: float, ended: float, rows: list[tuple[float, int, float, str]],
             names: dict[int, str]) -> list[str]:  # fmt: skip
    """Return the lines of one decision's statements, in time order."""
    lines = []
    for epoch, pid, ms, what in sorted(rows):
        if began - 0.001 <= epoch <= ended + 0.002:
            text = re.sub(r"\s+", " ", what)[:110]
            lines.append(f"  {1e3 * (epoch - began):7.1f} ms  {ms:6.2f}  "
                         f"{names.get(pid, f'pid {pid}'):>14}  {text}")  # fmt: skip
    return lines


def main(argv: list[str] | None = None) -> int:
    from bench.durable import Processes, admin_execute
    from bench.durable_peers import braid_subject as b
    from bench.durable_peers import run
    from bench.durable_peers.common import QUICK, database

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--decisions", type=int, default=5)
    parser.add_argument("--through", choices=("api", "client"), default="api")
    args = parser.parse_args(argv)
    folder = Path(tempfile.mkdtemp(prefix="braid-peers-hops-"))
    os.environ["PEERS_SCRATCH"] = str(folder)
    db = database("braid")
    try:
        run.set_up(run.Run(QUICK, ("braid",), 0, folder, False))
        admin_execute(f"ALTER DATABASE {db} SET log_min_duration_statement = 0")
        b.setup_django()
        procs = Processes(b.env(), folder)
        try:
            b.start_braid(procs)
            braid = b.Braid()
            braid.decision(args.through == "api")  # warm
            for _ in range(args.decisions):
                offset = LOG.stat().st_size
                took = braid.decision(args.through == "api")
                began_wall = time.time() - took  # decision() returns when it saw the end
                time.sleep(0.3)  # the log is written
                rows = statements(offset, db)
                print(f"decision: {1e3 * took:.1f} ms through {args.through}")
                print("\n".join(timeline(began_wall, began_wall + took, rows, roles())))
        finally:
            procs.stop_all()
    finally:
        run.tear_down()
    return 0


if __name__ == "__main__":
    sys.exit(main())
