"""How long each inbox event waited to be applied, measured on the database's clock, and
which waits longer than one sweep interval an injected fault explains.

An event's wait runs from its `created_at` to its `applied_at`, the stamp the step that
took it wrote with the server's clock (postgresql_sql.lock_and_take_sql); an event still
unapplied waits until the sample's `now()`. The end is the stamp, not the sample that
first sees it applied: samples come about once a second, as long as the limit itself.
"""

import datetime as dt
import time
from collections.abc import Iterable
from dataclasses import dataclass, field

from chaos.faults import KINDS, took_effect

# An event whose step stamped it before a sample and committed after it is read again by
# the next samples while its stamp is this recent (a step of a worker stopped for 6 s).
SLACK_S = 30.0


@dataclass(frozen=True)
class Wait:
    """One event's wait: applied (ended at its stamp), or still waiting at `ended_at`."""

    event: int
    run: str
    key: str
    created_at: dt.datetime
    ended_at: dt.datetime
    applied: bool

    @property
    def seconds(self) -> float:
        """How long the event waited, in seconds (never below 0)."""
        return max(0.0, (self.ended_at - self.created_at).total_seconds())

    def describe(self) -> str:
        """The wait in a line of the report."""
        end = "applied" if self.applied else "still unapplied"
        return (f"event {self.event} of run {self.run} ({self.key[:60]}) waited "
                f"{self.seconds:.2f} s from {self.created_at:%H:%M:%S.%f}, {end}")  # fmt: skip


@dataclass(frozen=True)
class Window:
    """A time an injected fault can explain waits in, on the database's clock: from when
    it began to when it ended, plus the recovery after it."""

    kind: str
    start: dt.datetime
    end: dt.datetime

    def explains(self, wait: Wait, limit: dt.timedelta) -> bool:
        """Whether the wait ended inside the window and began at most `limit` before it:
        the fault accounts for the time inside, the limit for the time before."""
        return self.start - limit <= wait.created_at and self.start <= wait.ended_at <= self.end


def spans(windows: list[Window]) -> list[Window]:
    """Join windows that share a moment into one (faults in a row), in time order."""
    joined: list[Window] = []
    for window in sorted(windows, key=lambda w: w.start):
        if joined and window.start <= joined[-1].end:
            last = joined[-1]
            joined[-1] = Window(f"{last.kind}, {window.kind}", last.start,
                                max(last.end, window.end))  # fmt: skip
        else:
            joined.append(window)
    return joined


def classify(
    waits: Iterable[Wait], windows: list[Window], limit_s: float
) -> tuple[list[Wait], list[Wait]]:
    """Split waits into those no fault explains (they count) and those one does."""
    joined, limit = spans(windows), dt.timedelta(seconds=limit_s)
    counted: list[Wait] = []
    exempt: list[Wait] = []
    for wait in sorted(waits, key=lambda w: w.event):
        explained = any(span.explains(wait, limit) for span in joined)
        (exempt if explained else counted).append(wait)
    return counted, exempt


@dataclass
class Calibration:
    """The driver's monotonic clock against the database's: the sample whose round trip
    was shortest pins them together."""

    round_trip: float = float("inf")
    database: dt.datetime | None = None
    monotonic: float = 0.0

    def note(self, before: float, after: float, database: dt.datetime) -> None:
        """Keep this reading of the database's clock if its round trip was the shortest."""
        if after - before < self.round_trip:
            self.round_trip, self.database = after - before, database
            self.monotonic = (before + after) / 2

    def at(self, monotonic: float) -> dt.datetime:
        """The database's time at a moment of the driver's monotonic clock."""
        if self.database is None:
            raise RuntimeError("the database's clock was never read")
        return self.database + dt.timedelta(seconds=monotonic - self.monotonic)


@dataclass
class EventWaits:
    """The live sampler: every call reads the unapplied events and those applied since
    the last call, and keeps the waits longer than `limit_s` and the longest one."""

    limit_s: float
    open: dict[int, Wait] = field(default_factory=dict)
    done: set[int] = field(default_factory=set)
    over: dict[int, Wait] = field(default_factory=dict)
    longest: Wait | None = None
    last_now: dt.datetime | None = None
    clock: Calibration = field(default_factory=Calibration)
    samples: int = 0

    def sample(self, full: bool = False) -> None:
        """Read the events that may have moved since the last sample (`full`: all of them).

        An event measured once is not measured again: only a retry puts an applied event
        back to unapplied, and the driver retries no run.
        """
        before = time.monotonic()
        now, rows = self.read(full or self.last_now is None)
        self.clock.note(before, time.monotonic(), now)
        for event, run, key, created_at, applied_at in rows:
            if event in self.done:
                continue
            if applied_at is None:
                self.open[event] = wait = Wait(event, run, key, created_at, now, False)
            else:
                self.done.add(event)
                self.open.pop(event, None)
                wait = Wait(event, run, key, created_at, applied_at, True)
            self.note(wait)
        self.last_now = now
        self.samples += 1

    def read(self, full: bool) -> tuple[dt.datetime, list[tuple[int, str, str, dt.datetime,
                                                                 dt.datetime | None]]]:  # fmt: skip
        """The database's `now()` and the events to look at, in one statement."""
        from django.db import connection

        from engine.models import PendingEvent

        since = (self.last_now or dt.datetime.now(dt.UTC)) - dt.timedelta(seconds=SLACK_S)
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT clock.at, e.id, e.run_id::text, e.key, e.created_at, e.applied_at "
                f"FROM (SELECT now() AS at) AS clock LEFT JOIN {PendingEvent._meta.db_table} e "
                "ON (%s OR e.applied_at IS NULL OR e.applied_at >= %s OR e.id = ANY(%s))",
                [full, since, sorted(self.open)],
            )
            rows = cursor.fetchall()
        return rows[0][0], [row[1:] for row in rows if row[1] is not None]

    def note(self, wait: Wait) -> None:
        """Keep the wait if it is the longest, or longer than the limit."""
        if self.longest is None or wait.seconds > self.longest.seconds:
            self.longest = wait
        if wait.seconds > self.limit_s:
            self.over[wait.event] = wait

    @property
    def measured(self) -> int:
        """How many events' waits were measured (applied, or seen waiting)."""
        return len(self.done) + len(self.open)


def fault_windows(faults: list[dict[str, object]], fired_s: list[float],
                  restarts: list[tuple[float, float]], clock: Calibration, started: float,
                  recovery: dict[str, float]) -> list[Window]:  # fmt: skip
    """The windows of the faults that took effect, on the database's clock (times in
    seconds after the workload `started`): from when the injector began each one to when
    it ended, plus its kind's `recovery`. A crash after commit lasts from when it fired;
    a worker the supervisor restarted (killed, or exited on its own after a Redis restart)
    from when its death was noticed until its log said it was ready."""
    spans = [(str(f["kind"]), float(str(f["actual_s"])), float(str(f["ended_s"])))
             for f in faults if f["kind"] != "crash-after-commit" and took_effect(f)]  # fmt: skip
    spans += [("crash-after-commit", at, at) for at in fired_s]
    spans += [("worker restart", begun, ready) for begun, ready in restarts]
    return [Window(kind, clock.at(started + start),
                   clock.at(started + end) + dt.timedelta(seconds=recovery[kind]))
            for kind, start, end in spans]  # fmt: skip


# Celery's consumer retries a lost broker connection after 2 s, then 4 s: a worker whose
# first retry came before the restarted Redis listened connects up to 4 s after it did.
BROKER_RETRY_S = 4.0


def recovery_s() -> dict[str, float]:
    """How long after each kind of fault ended the waits it caused may last: the sweeper
    re-advances an event unapplied for 2 sweep intervals at its next sweep, so within 3
    intervals; after a Redis restart, also the workers' reconnection (docs/reliability.md)."""
    from django.conf import settings

    sweeper = 3 * float(settings.BRAID_SWEEP_INTERVAL_S)
    return {**dict.fromkeys([*KINDS, "worker restart"], sweeper),
            "redis-restart": sweeper + BROKER_RETRY_S}  # fmt: skip
