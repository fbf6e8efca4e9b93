"""The worker side's Prometheus instruments: steps, actions and sweeps, counted where they
happen (docs/operations.md lists every metric).

They live in the memory of the process that steps, runs or sweeps, on prometheus_client's
default registry. With PROMETHEUS_MULTIPROC_DIR set (scaled mode on one host;
braid.supervise sets it), prometheus_client keeps each process's values in a file of that
directory instead, and `/metrics` sums the files of every process of the host: Daphne's,
each Celery pool process's. What the database can say (runs by flow and status, backlogs,
leases) is not counted here but read at scrape time (braid/db_metrics.py).

A step pays one histogram observation and one counter increment, an action one observation
(docs/operations.md, "Cost", has the measured figures): a few microseconds against the
1.7 ms of a chain's hop (bench/DURABLE.md).
"""

from typing import Any

from prometheus_client import Counter, Histogram, disable_created_metrics

from engine.core.events import ActionFailed, Event

# No `_created` series beside each counter and histogram: they would double the series a
# scrape holds, and multiprocess mode does not report them anyway.
disable_created_metrics()

# Seconds. A step is from under a millisecond (one event on SQLite) to a second or more (a
# fork of 10,000); an action from microseconds (noop) to BRAID_HTTP_TIMEOUT_S and beyond.
STEP_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10)
ACTION_BUCKETS = (0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300)

STEP_SECONDS = Histogram(
    "braid_step_seconds", "Steps committed (a run's pending events applied under its lock), by "
    "the time from taking the lock to the commit; its _count is the steps",
    buckets=STEP_BUCKETS,
)  # fmt: skip
STEP_EVENTS = Counter("braid_step_events", "Inbox events applied by committed steps")
ACTION_SECONDS = Histogram(
    "braid_action_seconds", "Actions run by workers, by action and outcome (completed or "
    "failed), by the time each took; its _count is the actions", ["action", "outcome"],
    buckets=ACTION_BUCKETS,
)  # fmt: skip
SWEEPS = Counter("braid_sweeps", "Sweeps run, by outcome (ok or failed)", ["outcome"])
SWEPT = Counter(
    "braid_sweep_found", "What sweeps found and acted on: timers fired, actions re-sent, "
    "runs whose unapplied events were sent an advance", ["kind"],
)  # fmt: skip

# An action name that no action is registered under fails its node; counting it under its
# own name would let a flow mint label values, so all such names count as one.
UNKNOWN_ACTION = "(unknown)"
# The histogram of each (action, outcome), found once: prometheus_client's labels() takes a
# lock and builds a key at every call, a third of what counting an action cost.
_action_children: dict[tuple[str, str], Any] = {}


def stepped(events: int, seconds: float) -> None:
    """Count one committed step that applied `events` events in `seconds`."""
    STEP_SECONDS.observe(seconds)
    STEP_EVENTS.inc(events)


def action_ran(action: str, known: bool, event: Event, seconds: float) -> None:
    """Count one action run by a worker, with its outcome and duration."""
    key = (action if known else UNKNOWN_ACTION, "failed" if isinstance(event, ActionFailed)
           else "completed")  # fmt: skip
    child = _action_children.get(key)
    if child is None:
        child = _action_children[key] = ACTION_SECONDS.labels(*key)
    child.observe(seconds)


def swept(found: dict[str, int]) -> None:
    """Count one sweep that ended, and what it found."""
    SWEEPS.labels("ok").inc()
    for kind, count in found.items():
        SWEPT.labels(kind).inc(count)


def sweep_failed() -> None:
    """Count one sweep that raised."""
    SWEEPS.labels("failed").inc()
