"""Authenticated GETs: a personal API token against Basic auth (issue 34, "API clients").

Usage: python -m bench.auth [--quick] [--out bench/AUTH.md] [--database braid_bench_auth]
                            [--keep]

On a PostgreSQL database of its own (made here, dropped at the end unless --keep), with
Django's production password hasher (PBKDF2, 1,500,000 iterations), the analyst's GETs of
`/api/runs/?limit=1` (a page of their own runs, 40 stored) and `/api/me/notifications/`:

1. **Server time**: one request through Django's whole handler in this process
   (middleware, authentication, permissions, the view and its queries, the JSON), with
   this process's CPU time beside it (PostgreSQL's own work is not in it) and the SQL
   statements it ran.
2. **Round trip**: `braid serve` (Daphne) in its own process on 127.0.0.1, timed by an
   HTTP client here over one kept-alive connection (Daphne and the loopback included).

Subjects, per endpoint:
- `token, first use`: a token never used before (its last-used time is written).
- `token, again`: one token used within the minute (no write).
- `Basic, cold`: credentials the serving process has not verified within VERIFIED_TTL_S
  (a user of its own per sample, so each pays PBKDF2): what a client pays every five
  minutes, and on every process of a scaled deployment that it reaches first.
- `Basic, cached`: credentials verified within VERIFIED_TTL_S (braid.lockout.VERIFIED).
- `session`: a logged-in browser's cookie, for reference.
Every round takes one sample of `Basic, cold` and REPEATS of each other subject (a fresh
token each time for `token, first use`), all shuffled together (seeded), so that the
machine's drift falls on all subjects alike.
3. **Authentication alone**: each scheme's `authenticate()` on a GET's request, nothing
   else: what the scheme itself adds to a request.
Medians with a 95% bootstrap interval and the extremes; the target is printed MET or
MISSED: a token GET under 20 ms of server time (median), first use and again.
"""

from __future__ import annotations

import argparse
import datetime as dt
import gc
import http.client
import os
import random
import secrets
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import psycopg

from bench.measure import bootstrap_interval

ROOT = Path(__file__).resolve().parents[1]
PG = os.environ.get("BRAID_BENCH_PG", "postgres://postgres@127.0.0.1:5432")
TARGET_MS = 20.0
ENDPOINTS = ("/api/runs/?limit=1", "/api/me/notifications/")
STORED_RUNS = 40
SUBJECTS = ("token, first use", "token, again", "Basic, cold", "Basic, cached", "session")
FIRST_USE = ("token, first use", "Basic, cold")
ONCE_A_ROUND = ("Basic, cold",)  # 0.5 s each: once a round; a fresh token is cheap to make
AUTHENTICATED = ("token, first use", "token, again", "Basic, cold", "Basic, cached")
COLD_PASSWORD = "bench-cold-password"
NO_EMAIL = "django.core.mail.backends.dummy.EmailBackend"  # the stored runs' requests send none


@dataclass(frozen=True)
class Plan:
    rounds: int  # samples of each first-use subject per endpoint
    repeats: int  # samples of each other subject per round


FULL = Plan(rounds=15, repeats=8)
QUICK = Plan(rounds=4, repeats=4)

type Sampler = Callable[[str], tuple[float, float]]  # one GET: wall and this process's CPU s
type Samplers = dict[str, Sampler]


# ---------------------------------------------------------------- set-up


def admin_execute(sql: str) -> None:
    """Run one statement on the `postgres` database in autocommit mode."""
    with psycopg.connect(f"{PG}/postgres", autocommit=True) as conn:
        conn.execute(sql)


def set_up(database: str) -> None:
    """Make the database, point Django at it, migrate, load the demo and store runs."""
    admin_execute(f"DROP DATABASE IF EXISTS {database} WITH (FORCE)")
    admin_execute(f"CREATE DATABASE {database}")
    os.environ.update(
        DATABASE_URL=f"{PG}/{database}", DJANGO_SETTINGS_MODULE="braid.settings",
        DJANGO_HTTPS="0", DJANGO_SECRET_KEY=secrets.token_urlsafe(50),
        BRAID_LOG_LEVEL="WARNING", BRAID_EMAIL_BACKEND=NO_EMAIL,
        BRAID_TOKENS_PER_USER="100000",  # a fresh token for every first-use sample
    )  # fmt: skip
    os.environ.pop("REDIS_URL", None)
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    call_command("braid", "demo", verbosity=0)
    store_runs(STORED_RUNS)


def store_runs(count: int) -> None:
    """Start invoice runs as the analyst and drive each to its approvals in this process."""
    from django.contrib.auth.models import User
    from django.test import Client

    from bench.monitor import drain_here

    client = Client(HTTP_HOST="127.0.0.1")
    client.force_login(User.objects.get(username="analyst"))
    for number in range(count):
        invoice = {"id": f"INV-{number}", "amount": 100 + number, "vendor": "Acme"}
        response = client.post("/api/runs/", {"flow": "invoice-sign-off",
                               "input": {"invoice": invoice}}, "application/json")  # fmt: skip
        assert response.status_code == 201, response.content
        drain_here(response.json()["id"])


def cold_users(prefix: str, count: int) -> list[str]:
    """Make `count` analysts sharing one password hash (hashed once); return their names.

    Each has its own name, so each one's first Basic call is one no process has verified.
    """
    from django.contrib.auth.hashers import make_password
    from django.contrib.auth.models import Group, User

    hashed = make_password(COLD_PASSWORD)
    users = User.objects.bulk_create(
        User(username=f"{prefix}-{n}", password=hashed) for n in range(count)
    )
    analysts = Group.objects.get(name="analysts")
    analysts.user_set.add(*users)
    return [user.username for user in users]


def new_token() -> str:
    """Issue a token for the analyst; return its secret (untimed)."""
    from django.contrib.auth.models import User

    from tokens import services

    _, secret = services.issue(User.objects.get(username="analyst"), "bench", None)
    return secret


def basic(username: str, password: str) -> str:
    """Return a Basic Authorization header."""
    import base64

    return "Basic " + base64.b64encode(f"{username}:{password}".encode()).decode()


def session_key() -> str:
    """Return a session id of the analyst, stored in the database."""
    from bench.monitor import session_cookie

    return session_cookie("analyst")


# ---------------------------------------------------------------- the subjects


def header_samplers(
    get: Callable[[str, dict[str, str]], None], prefix: str, plan: Plan
) -> Samplers:
    """Return a sampler per subject over `get(path, headers)`, which must raise unless the
    answer is a 200; untimed set-up (a fresh token, the next cold user) happens first."""
    cold = iter(cold_users(prefix, (plan.rounds + 1) * len(ENDPOINTS)))  # + queries_of's
    steady = new_token()
    cookie = {"Cookie": f"sessionid={session_key()}"}
    cached = {"Authorization": basic("analyst", "braid-analyst")}

    def timed(path: str, headers: dict[str, str]) -> tuple[float, float]:
        gc.collect()  # no sample pays for the garbage of the one before
        started, cpu = time.perf_counter(), time.process_time()
        get(path, headers)
        return time.perf_counter() - started, time.process_time() - cpu

    return {
        "token, first use": lambda path: timed(path, {"Authorization": f"Bearer {new_token()}"}),
        "token, again": lambda path: timed(path, {"Authorization": f"Bearer {steady}"}),
        "Basic, cold": lambda path: timed(
            path, {"Authorization": basic(next(cold), COLD_PASSWORD)}
        ),
        "Basic, cached": lambda path: timed(path, cached),
        "session": lambda path: timed(path, cookie),
    }


def in_process_get() -> Callable[[str, dict[str, str]], None]:
    """Return a GET through Django's handler in this process."""
    from django.test import Client

    client = Client(HTTP_HOST="127.0.0.1")

    def get(path: str, headers: dict[str, str]) -> None:
        client.cookies.clear()
        response = client.get(path, headers=headers)
        assert response.status_code == 200, (path, response.status_code, response.content)

    return get


def http_get(port: int) -> Callable[[str, dict[str, str]], None]:
    """Return a GET over one kept-alive HTTP connection to 127.0.0.1:port."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)

    def get(path: str, headers: dict[str, str]) -> None:
        connection.request("GET", path, headers={"Host": "127.0.0.1", **headers})
        response = connection.getresponse()
        body = response.read()
        assert response.status == 200, (path, response.status, body[:300])

    return get


type Times = dict[str, dict[str, list[tuple[float, float]]]]  # endpoint -> subject -> samples


def sample(samplers: Samplers, plan: Plan) -> Times:
    """Return endpoint -> subject -> (wall, CPU) seconds, every subject warmed up once, then
    interleaved round by round in a seeded shuffle."""
    order = random.Random(34)
    times: Times = {e: {s: [] for s in SUBJECTS} for e in ENDPOINTS}
    for endpoint in ENDPOINTS:
        for name in ("token, again", "Basic, cached", "session"):
            samplers[name](endpoint)  # warm-up: the cache, the connection, the imports
    for _ in range(plan.rounds):
        draws = [(e, s) for e in ENDPOINTS for s in SUBJECTS
                 for _ in range(1 if s in ONCE_A_ROUND else plan.repeats)]  # fmt: skip
        order.shuffle(draws)
        for endpoint, subject in draws:
            times[endpoint][subject].append(samplers[subject](endpoint))
    return times


@contextmanager
def serving(port: int) -> Iterator[None]:
    """Run `braid serve` on the benchmark's database for the duration of the block."""
    env = {**os.environ, "BRAID_VAR_DIR": tempfile.mkdtemp(prefix="braid-bench-auth-")}
    env.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
    command = [sys.executable, "manage.py", "braid", "serve", "--host", "127.0.0.1",
               "--port", str(port)]  # fmt: skip
    process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        wait_http(port, process)
        yield
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def wait_http(port: int, process: subprocess.Popen[bytes], seconds: float = 60) -> None:
    """Wait until Daphne answers on the port, failing early if it died."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"braid serve exited with {process.returncode}")
        try:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            connection.request("GET", "/login/", headers={"Host": "127.0.0.1"})
            connection.getresponse().read()
            return
        except OSError:
            time.sleep(0.3)
    raise RuntimeError(f"braid serve did not answer on {port} within {seconds} s")


def free_port() -> int:
    """Return a TCP port on 127.0.0.1 that is free right now."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def queries_of() -> dict[str, dict[str, int]]:
    """Return endpoint -> subject -> the SQL statements one in-process GET runs (the GET
    alone: not the set-up of a fresh token or user), each subject used once before."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    plain = in_process_get()
    counted: list[int] = []

    def counting(path: str, headers: dict[str, str]) -> None:
        with CaptureQueriesContext(connection) as captured:
            plain(path, headers)
        counted.append(len(captured))

    samplers = header_samplers(counting, "cold-counted", Plan(rounds=1, repeats=1))
    counts: dict[str, dict[str, int]] = {}
    for endpoint in ENDPOINTS:
        counts[endpoint] = {}
        for subject in SUBJECTS:
            if subject not in FIRST_USE:
                samplers[subject](endpoint)
            samplers[subject](endpoint)
            counts[endpoint][subject] = counted[-1]
    return counts


def auth_alone(plan: Plan) -> dict[str, list[tuple[float, float]]]:
    """Return subject -> (wall, CPU) seconds of authenticate() alone, interleaved as above."""
    from rest_framework.authentication import BaseAuthentication
    from rest_framework.request import Request
    from rest_framework.test import APIRequestFactory

    from braid.lockout import ThrottledBasicAuthentication
    from tokens.authentication import BearerTokenAuthentication

    factory = APIRequestFactory()
    cold = iter(cold_users("cold-alone", plan.rounds))
    steady = new_token()
    cached = basic("analyst", "braid-analyst")

    def timed(scheme: BaseAuthentication, header: str) -> tuple[float, float]:
        request = Request(factory.get(ENDPOINTS[1], HTTP_AUTHORIZATION=header))
        gc.collect()
        started, cpu = time.perf_counter(), time.process_time()
        found = scheme.authenticate(request)
        spent = time.perf_counter() - started, time.process_time() - cpu
        assert found is not None and found[0].get_username().startswith(("analyst", "cold"))
        return spent

    token, password = BearerTokenAuthentication(), ThrottledBasicAuthentication()
    subjects: dict[str, Callable[[], tuple[float, float]]] = {
        "token, first use": lambda: timed(token, f"Bearer {new_token()}"),
        "token, again": lambda: timed(token, f"Bearer {steady}"),
        "Basic, cold": lambda: timed(password, basic(next(cold), COLD_PASSWORD)),
        "Basic, cached": lambda: timed(password, cached),
    }
    subjects["token, again"]()  # its first use: the rounds time it again
    subjects["Basic, cached"]()  # fills the cache
    order = random.Random(35)
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in subjects}
    for _ in range(plan.rounds):
        draws = [name for name in subjects
                 for _ in range(1 if name in ONCE_A_ROUND else plan.repeats)]  # fmt: skip
        order.shuffle(draws)
        for name in draws:
            times[name].append(subjects[name]())
    return times


# ---------------------------------------------------------------- the report


def ms(seconds: float) -> str:
    return f"{seconds * 1e3:,.1f}"


def row(subject: str, samples: list[tuple[float, float]], token_median: float, cpu: bool) -> str:
    """Return one table row: median, its 95% interval, extremes, n, vs the token (and the
    median CPU time of this process, in process)."""
    times = [wall for wall, _ in samples]
    median = statistics.median(times)
    interval = bootstrap_interval(times)
    shown = f"{ms(interval[0])} to {ms(interval[1])}" if interval else "-"
    factor = f"{median / token_median:,.1f}x" if subject != "token, again" else "1x"
    spent = f" {ms(statistics.median(c for _, c in samples))} |" if cpu else ""
    return (f"| {subject} | **{ms(median)}** | {shown} | {ms(min(times))} to {ms(max(times))} "
            f"| {len(times)} |{spent} {factor} |")  # fmt: skip


def table(
    samples: dict[str, list[tuple[float, float]]],
    queries: dict[str, int] | None,
    subjects: tuple[str, ...] = SUBJECTS,
    cpu: bool = False,
) -> list[str]:
    """Return a Markdown table of subjects' times (with this process's CPU time, and with the
    SQL statements when given)."""
    head = "| subject | median ms | 95% CI of median | min to max ms | n |"
    rule = "| --- | ---: | --- | --- | ---: |"
    cpu = cpu or queries is not None
    if cpu:
        head, rule = head + " CPU ms (median) |", rule + " ---: |"
    token = statistics.median(wall for wall, _ in samples["token, again"])
    lines = [head + " vs token again |" + (" SQL |" if queries else ""),
             rule + " ---: |" + (" ---: |" if queries else "")]  # fmt: skip
    for subject in subjects:
        line = row(subject, samples[subject], token, cpu)
        lines.append(line + (f" {queries[subject]} |" if queries else ""))
    return lines


def verdicts(server: Times) -> list[str]:
    """Return a MET/MISSED line per endpoint and token subject against TARGET_MS."""
    lines = []
    for endpoint in ENDPOINTS:
        for subject in ("token, first use", "token, again"):
            median = statistics.median(wall for wall, _ in server[endpoint][subject]) * 1e3
            verdict = "MET" if median < TARGET_MS else "MISSED"
            lines.append(f"{verdict}: token GET < {TARGET_MS:.0f} ms of server time — "
                         f"{endpoint}, {subject}: median {median:,.1f} ms")  # fmt: skip
    return lines


def load_average() -> str:
    """Return the 1, 5 and 15 minute load averages."""
    return ", ".join(f"{value:.2f}" for value in os.getloadavg())


def facts(load_before: str) -> list[str]:
    """Return where and when this ran: date, commit, machine, load."""
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT,
                            capture_output=True, text=True).stdout.strip()  # fmt: skip
    cpu = next((line.partition(":")[2].strip() for line in
                Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), "unknown processor")  # fmt: skip
    now = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    return [f"- measured {now} at commit `{commit or 'unknown'}`",
            f"- {os.cpu_count()} cores, {cpu}; load average (1, 5, 15 min) "
            f"{load_before} before, {load_average()} after",
            "- PostgreSQL 127.0.0.1, a database of its own; PBKDF2 as in production"]  # fmt: skip


def report(
    plan: Plan,
    measured: tuple[Times, Times, dict[str, list[tuple[float, float]]]],
    queries: dict[str, dict[str, int]],
    load_before: str,
) -> str:
    """Return bench/AUTH.md."""
    server, trip, alone = measured
    lines = ["# Authenticated GETs: API token against Basic auth", "",
             "Made by `make bench-auth` (`python -m bench.auth`); `bench/auth.py` says how. "
             f"{plan.rounds} rounds; in each, one sample of `Basic, cold` and {plan.repeats} "
             "of each other subject, per endpoint, shuffled together.", "",
             *facts(load_before), "", "## Verdict", "",
             *(f"- {line}" for line in verdicts(server)), ""]  # fmt: skip
    for endpoint in ENDPOINTS:
        lines += [f"## `GET {endpoint}`", "",
                  "**Server time**: Django's whole handler in the benchmark process.", "",
                  *table(server[endpoint], queries[endpoint]), "",
                  "**Round trip**: `braid serve` (Daphne) in its own process, over one "
                  "kept-alive connection on 127.0.0.1.", "",
                  *table(trip[endpoint], None), ""]  # fmt: skip
    lines += ["## Authentication alone", "",
              "Each scheme's `authenticate()` on a GET's request in this process: what the "
              "scheme adds to a request, whatever the view.", "",
              *table(alone, None, AUTHENTICATED, cpu=True), ""]  # fmt: skip
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer rounds, for a smoke run")
    parser.add_argument("--out", type=Path, help="write the report here (else print it)")
    parser.add_argument("--database", default="braid_bench_auth")
    parser.add_argument("--keep", action="store_true", help="keep the database afterwards")
    args = parser.parse_args()
    plan = QUICK if args.quick else FULL
    load_before = load_average()
    set_up(args.database)
    try:
        samplers = header_samplers(in_process_get(), "cold-here", plan)
        server = sample(samplers, plan)
        queries = queries_of()
        port = free_port()
        with serving(port):
            trip = sample(header_samplers(http_get(port), "cold-served", plan), plan)
        alone = auth_alone(plan)
    finally:
        from django.db import connections

        connections.close_all()
        if not args.keep:
            admin_execute(f"DROP DATABASE IF EXISTS {args.database} WITH (FORCE)")
    text = report(plan, (server, trip, alone), queries, load_before)
    for line in verdicts(server):
        print(line)
    if args.out:
        args.out.write_text(text + "\n")
        print(f"wrote {args.out}")
    else:
        print(text)


if __name__ == "__main__":
    main()
