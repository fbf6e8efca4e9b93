"""The metrics the database holds, read at scrape time: exact whichever process scrapes and
however many workers there are, on any number of hosts (docs/operations.md).

Runs by flow and status, failures, open approvals by group, timer lag, the outbox's and
the inbox's backlogs, and the workers' leases: each family is one query or two, with no
state kept between scrapes, so `/metrics` on any Daphne says the same.
"""

import datetime as dt
import logging
import time
from collections import Counter
from collections.abc import Iterable, Iterator
from typing import Any

from django.conf import settings
from django.db import DatabaseError
from django.db.models import Count, Min, Q
from prometheus_client import Metric
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.registry import Collector

from approvals.models import ApprovalRequest, ApprovalStatus
from engine.models import Dispatch, PendingEvent, Run, RunStatus, Timer, TraceEvent, WorkerLease
from engine.runtime import clock

logger = logging.getLogger(__name__)

# The `flow` label of a run of a graph file (`braid run FILE`), which has no stored flow.
NO_FLOW = "(file)"
FINAL = (RunStatus.COMPLETED, RunStatus.CANCELLED)  # a run in one never leaves it
Family = Metric  # what a collector yields: counter and gauge families here


class DatabaseCollector(Collector):
    """A prometheus_client collector whose every scrape asks the database."""

    def collect(self) -> Iterator[Family]:
        began = time.perf_counter()
        try:
            families = list(database_families(clock.now()))
        except DatabaseError:
            logger.warning("the database metrics could not be read", exc_info=True)
            families = []
        up = GaugeMetricFamily("braid_database_up", "1 if the database metrics were read")
        up.add_metric([], 1.0 if families else 0.0)
        spent = GaugeMetricFamily(
            "braid_database_metrics_seconds", "Time this scrape spent reading the database"
        )
        spent.add_metric([], time.perf_counter() - began)
        yield from [*families, up, spent]


def database_families(now: dt.datetime) -> Iterator[Family]:
    """Yield every family read from the database."""
    yield from run_families()
    yield from approval_families(now)
    yield from timer_families(now)
    yield from backlog_families(now)
    yield from lease_families(now)


def run_families() -> Iterator[Family]:
    """Runs started, by status now, and finished (completed, failed, cancelled), by flow."""
    by_status: dict[tuple[str, str], int] = {}
    for slug, status, count in (
        Run.objects.values_list("flow_version__flow__slug", "status")
        .annotate(count=Count("pk"))
        .order_by()  # the model's ordering would join the GROUP BY
    ):
        by_status[(slug or NO_FLOW, status)] = count
    flows = sorted({flow for flow, _ in by_status})
    started = CounterMetricFamily("braid_runs_started", "Runs created, by flow", labels=["flow"])
    now = GaugeMetricFamily("braid_runs", "Runs by flow and status now", labels=["flow", "status"])
    for flow in flows:
        started.add_metric([flow], sum(n for (f, _), n in by_status.items() if f == flow))
        for status in RunStatus:
            now.add_metric([flow, status.value], by_status.get((flow, status.value), 0))
    yield from [started, now, finished_family(flows, by_status)]


def finished_family(flows: list[str], by_status: dict[tuple[str, str], int]) -> Family:
    """Runs finished by flow and status: completed and cancelled are final, so the runs in
    them are counted; a failed run may be retried, so each failure (its `run.failed` trace
    event, which stays) is counted, and the count never goes down."""
    failures: dict[str | None, int] = dict(
        TraceEvent.objects.filter(event=f"run.{RunStatus.FAILED.value}")
        .values_list("run__flow_version__flow__slug")
        .annotate(count=Count("pk"))
        .order_by()
        .values_list("run__flow_version__flow__slug", "count")
    )
    family = CounterMetricFamily(
        "braid_runs_finished", "Runs that completed or were cancelled, and run failures, by "
        "flow", labels=["flow", "status"],
    )  # fmt: skip
    for flow in flows:
        for status in FINAL:
            family.add_metric([flow, status.value], by_status.get((flow, status.value), 0))
        failed = failures.get(None if flow == NO_FLOW else flow, 0)
        family.add_metric([flow, RunStatus.FAILED.value], failed)
    return family


def approval_families(now: dt.datetime) -> Iterator[Family]:
    """Open approval requests by group: how many, how many overdue, the oldest one's age."""
    open_ones: Counter[str] = Counter()
    overdue: Counter[str] = Counter()
    oldest: dict[str, dt.datetime] = {}
    rows = ApprovalRequest.objects.filter(status=ApprovalStatus.OPEN).values_list(
        "groups", "created_at", "due_at"
    )
    for groups, created_at, due_at in rows:
        for group in set(groups_of(groups)):
            open_ones[group] += 1
            overdue[group] += due_at is not None and due_at <= now
            oldest[group] = min(created_at, oldest.get(group, created_at))
    count = GaugeMetricFamily("braid_approvals_open", "Open approval requests, by group",
                              labels=["group"])  # fmt: skip
    late = GaugeMetricFamily("braid_approvals_overdue", "Open approval requests past their "
                             "due time, by group", labels=["group"])  # fmt: skip
    age = GaugeMetricFamily("braid_approvals_oldest_open_seconds", "Age of the oldest open "
                            "approval request, by group", labels=["group"])  # fmt: skip
    for group in sorted(open_ones):
        count.add_metric([group], open_ones[group])
        late.add_metric([group], overdue[group])
        age.add_metric([group], seconds_since(oldest[group], now))
    yield from [count, late, age]


def groups_of(groups: Any) -> Iterable[str]:
    """Return a request's group names (a JSON list of names)."""
    return [str(name) for name in groups] if isinstance(groups, list) else []


def timer_families(now: dt.datetime) -> Iterator[Family]:
    """Timers set and due, and the lag: how long the oldest due timer has waited to fire."""
    found = Timer.objects.aggregate(
        set=Count("pk"), due=Count("pk", filter=Q(due_at__lte=now)),
        oldest_due=Min("due_at", filter=Q(due_at__lte=now)),
    )  # fmt: skip
    timers = GaugeMetricFamily("braid_timers", "Timers not fired yet, by state (pending: not "
                               "due yet; due: due and not fired)", labels=["state"])  # fmt: skip
    timers.add_metric(["pending"], found["set"] - found["due"])
    timers.add_metric(["due"], found["due"])
    lag = GaugeMetricFamily("braid_timer_lag_seconds", "Now less the due time of the oldest "
                            "timer due and not fired yet; 0 when none is")  # fmt: skip
    oldest = found["oldest_due"]
    lag.add_metric([], seconds_since(oldest, now) if oldest is not None else 0.0)
    yield from [timers, lag]


def backlog_families(now: dt.datetime) -> Iterator[Family]:
    """The outbox's open dispatches by state and the inbox's unapplied events, with ages."""
    unclaimed = Q(claimed_by="")
    found = Dispatch.objects.filter(completed_at=None).aggregate(
        unsent=Count("pk", filter=unclaimed & Q(published_at=None)),
        queued=Count("pk", filter=unclaimed & Q(published_at__isnull=False)),
        running=Count("pk", filter=~unclaimed),
        oldest=Min("created_at", filter=unclaimed),
    )
    backlog = GaugeMetricFamily(
        "braid_dispatch_backlog", "Actions recorded and not done, by state (unsent: not "
        "published yet; queued: sent, no worker claimed it; running: claimed)",
        labels=["state"],
    )  # fmt: skip
    for state in ("unsent", "queued", "running"):
        backlog.add_metric([state], found[state])
    oldest = GaugeMetricFamily("braid_dispatch_oldest_unclaimed_seconds", "Age of the oldest "
                               "action no worker has claimed; 0 when none")  # fmt: skip
    oldest.add_metric([], seconds_since(found["oldest"], now) if found["oldest"] else 0.0)
    inbox = PendingEvent.objects.filter(applied_at=None).aggregate(
        count=Count("pk"), oldest=Min("created_at")
    )
    events = GaugeMetricFamily("braid_inbox_backlog", "Events recorded and not applied by a "
                               "step yet")  # fmt: skip
    events.add_metric([], inbox["count"])
    waited = GaugeMetricFamily("braid_inbox_oldest_seconds", "Age of the oldest event not "
                               "applied yet; 0 when none")  # fmt: skip
    waited.add_metric([], seconds_since(inbox["oldest"], now) if inbox["oldest"] else 0.0)
    yield from [backlog, oldest, events, waited]


def lease_families(now: dt.datetime) -> Iterator[Family]:
    """Worker processes by lease: alive, or dead (silent past BRAID_LEASE_DEAD_S, kept an
    hour before the sweeper forgets them)."""
    since = now - dt.timedelta(seconds=settings.BRAID_LEASE_DEAD_S)
    found = WorkerLease.objects.aggregate(
        alive=Count("pk", filter=Q(beat_at__gte=since)),
        dead=Count("pk", filter=Q(beat_at__lt=since)),
    )
    leases = GaugeMetricFamily("braid_worker_leases", "Worker processes by lease state: alive, "
                               "or dead within the last hour", labels=["state"])  # fmt: skip
    leases.add_metric(["alive"], found["alive"])
    leases.add_metric(["dead"], found["dead"])
    yield leases


def seconds_since(moment: dt.datetime, now: dt.datetime) -> float:
    """Return the seconds from `moment` to now, never below 0."""
    return max(0.0, (now - moment).total_seconds())
