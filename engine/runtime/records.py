"""The rows the runtime hands between its parts: an inbox event, an outbox dispatch, and
the actions a step hands back to the task that runs them itself."""

import enum
from dataclasses import dataclass, field
from typing import Any, NamedTuple


class DispatchRow(NamedTuple):
    """An outbox row as a worker handles it: what it runs, for which run, under which key.

    Plain tuples, not model instances: a fork of 1,000 writes, claims and records 1,000 of
    them, and building a Django model costs about 20 µs.
    """

    pk: int
    run_id: Any
    key: str
    command: dict[str, Any]


class InboxRow(NamedTuple):
    """An inbox event a step applies, as lock_and_take returns it."""

    pk: int
    key: str
    event: dict[str, Any]


@dataclass
class Taken:
    """Up to `limit` new actions that steps hand to their caller to run itself, unsent.

    An action task that ran out of work takes the next action of the runs it advanced, so
    a chain runs in one task without a broker round trip per node. A taken action is
    claimed in the step's own commit, so the sweeper re-sends it if this process dies.
    """

    limit: int
    dispatches: list[DispatchRow] = field(default_factory=list)


# The run columns a step reads with its lock.
RUN_COLUMNS = ("id", "snapshot", "snapshot_version", "step_attempts", "trace_length",
               "graphs_digest")  # fmt: skip


class Begun(enum.Enum):
    """What begin_step found."""

    COUNTED = "counted"  # the attempt is counted: step now
    HELD = "held"  # another worker holds the run, and events wait: it applies them
    IDLE = "idle"  # nothing is pending (or the run is gone)
