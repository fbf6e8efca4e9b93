"""What goes into the scheduler (events) and what comes out (commands, trace, rows).

Every value here is a dataclass with `to_json`/`from_json`, so adapters can queue,
persist and replay them. Times are RFC 3339 strings carried by the events themselves,
which keeps `step` pure: it never reads a clock.

They are values, never changed once made, but not `frozen`: a run makes about ten per
node (five trace events, two rows, an action and its result), and a frozen dataclass's
`__init__` sets every field through `object.__setattr__`, which made them 2-3 times as
slow to build (about 6 µs of a fork branch's 50). Slots keep them small. Trace events,
rows and actions, the most numerous, also take their fields by position: the scheduler
builds them that way, as matching five keywords took half of building one.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from enum import StrEnum
from typing import Any, ClassVar

from engine.core.values import JSON


class RunStatus(StrEnum):
    """Where a run stands as a whole."""

    RUNNING = "running"
    WAITING = "waiting"
    COMPLETED = "completed"
    FAILED = "failed"
    CANCELLED = "cancelled"

    @property
    def finished(self) -> bool:
        """Return whether nothing can happen to the run any more."""
        return self in FINISHED


FINISHED = frozenset({RunStatus.COMPLETED, RunStatus.FAILED, RunStatus.CANCELLED})


class RowStatus(StrEnum):
    """The only statuses a node row is ever written with (CONTRACT §3)."""

    RUNNING = "running"
    WAITING = "waiting"
    COMPLETED = "completed"
    FAILED = "failed"

    @property
    def terminal(self) -> bool:
        """Return whether the status ends the node's execution."""
        return self in (RowStatus.COMPLETED, RowStatus.FAILED)


class Decision(StrEnum):
    """An approver's answer."""

    APPROVE = "approve"
    REJECT = "reject"


def tagged_json(item: Event | Command) -> dict[str, Any]:
    """Return an event's or a command's fields as JSON, tagged with its kind.

    What `dataclasses.asdict` gave (lists, tuples and dicts copied, scalars shared), for
    about 40% less: a step of a fork of 1,000 encodes 1,000 actions.
    """
    return {"kind": item.kind, **{name: copied(getattr(item, name)) for name in names(type(item))}}


_NAMES: dict[type, tuple[str, ...]] = {}


def names(cls: type[Event | Command]) -> tuple[str, ...]:
    """Return a dataclass's field names in order."""
    found = _NAMES.get(cls)
    if found is None:
        found = _NAMES[cls] = tuple(f.name for f in fields(cls))
    return found


def copied(value: Any) -> Any:
    """Return a copy of a JSON-like value: dicts, lists and tuples copied, scalars shared."""
    if isinstance(value, dict):
        return {key: copied(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(copied(item) for item in value)
    return value


# ---------------------------------------------------------------------------- events


@dataclass(kw_only=True, slots=True)
class Event:
    """Something that happened to a run; `key` names the wait it answers, if any."""

    kind: ClassVar[str]
    at: str

    def to_json(self) -> dict[str, Any]:
        """Return the event as JSON, tagged with its kind."""
        return tagged_json(self)


@dataclass(kw_only=True, slots=True)
class Start(Event):
    """Start the run with its input."""

    kind: ClassVar[str] = "start"
    input: JSON = None


@dataclass(kw_only=True, slots=True)
class ActionCompleted(Event):
    """An action finished; `outcome` is `next` unless the action declares others."""

    kind: ClassVar[str] = "action.completed"
    key: str
    output: JSON = None
    outcome: str = "next"


@dataclass(kw_only=True, slots=True)
class ActionFailed(Event):
    """An action raised or timed out; the node retries while attempts remain."""

    kind: ClassVar[str] = "action.failed"
    key: str
    error: str


@dataclass(kw_only=True, slots=True)
class ApprovalDecided(Event):
    """One approver decided one suspended approval."""

    kind: ClassVar[str] = "approval.decided"
    key: str
    user: str
    groups: tuple[str, ...]
    decision: Decision
    comment: str = ""


@dataclass(kw_only=True, slots=True)
class TimerFired(Event):
    """A timer set by a SetTimer command came due."""

    kind: ClassVar[str] = "timer.fired"
    key: str


@dataclass(kw_only=True, slots=True)
class Cancel(Event):
    """Someone cancelled the run."""

    kind: ClassVar[str] = "cancel"
    by: str
    reason: str = ""


@dataclass(kw_only=True, slots=True)
class Redrive(Event):
    """Run a failed action again, from the state just before its failure (a retry).

    The adapter restores that state first; this event then sends the action with the next
    attempt, so nothing that had completed runs again.
    """

    kind: ClassVar[str] = "redrive"
    key: str
    by: str


EVENT_TYPES: dict[str, type[Event]] = {
    cls.kind: cls
    for cls in (Start, ActionCompleted, ActionFailed, ApprovalDecided, TimerFired, Cancel, Redrive)
}


def event_from_json(data: dict[str, Any]) -> Event:
    """Rebuild an event from Event.to_json(); raise ValueError for an unknown kind."""
    fields = dict(data)
    kind = fields.pop("kind", None)
    cls = EVENT_TYPES.get(str(kind))
    if cls is None:
        raise ValueError(f"unknown event kind {kind!r}")
    if cls is ApprovalDecided:
        fields["groups"] = tuple(fields.get("groups", ()))
        fields["decision"] = Decision(fields["decision"])
    return cls(**fields)


# -------------------------------------------------------------------------- commands


@dataclass(kw_only=True, slots=True)
class Command:
    """Something an adapter must carry out after committing the step."""

    kind: ClassVar[str]

    def to_json(self) -> dict[str, Any]:
        """Return the command as JSON, tagged with its kind."""
        return tagged_json(self)


@dataclass(slots=True)
class RunAction(Command):
    """Run a registered action; answer with ActionCompleted/ActionFailed carrying `key`.

    `key` is the idempotency key: run, node path, execution id and attempt.
    """

    kind: ClassVar[str] = "run_action"
    key: str
    action: str
    params: JSON
    node: str
    execution_id: str
    attempt: int
    timeout_s: float | None = None


@dataclass(kw_only=True, slots=True)
class RequestApproval(Command):
    """Open an approval request for people; answer with ApprovalDecided carrying `key`."""

    kind: ClassVar[str] = "request_approval"
    key: str
    node: str
    execution_id: str
    groups: tuple[str, ...]
    policy: JSON
    title: str
    instructions: str
    shown: tuple[tuple[str, JSON], ...] = ()
    due: str | None = None
    allow_starter: bool = False


@dataclass(kw_only=True, slots=True)
class CloseApproval(Command):
    """The request is no longer wanted (decided, or its frame was cancelled)."""

    kind: ClassVar[str] = "close_approval"
    key: str
    reason: str


@dataclass(kw_only=True, slots=True)
class SetTimer(Command):
    """Fire TimerFired with `key` at `due` (durably: adapters store the due time)."""

    kind: ClassVar[str] = "set_timer"
    key: str
    due: str


@dataclass(kw_only=True, slots=True)
class CancelTimer(Command):
    """The timer is no longer wanted."""

    kind: ClassVar[str] = "cancel_timer"
    key: str


@dataclass(slots=True)
class WriteRow(Command):
    """A fenced node-row write (CONTRACT §3): applied unless superseded."""

    kind: ClassVar[str] = "write_row"
    node: str
    status: RowStatus
    execution_id: str
    result: JSON = None
    attempt: int = 1


@dataclass(slots=True)
class Trace(Command):
    """One append-only trace event."""

    kind: ClassVar[str] = "trace"
    event: str
    execution_id: str
    node: str | None = None
    at: str = ""
    detail: dict[str, JSON] = field(default_factory=dict)


@dataclass(kw_only=True, slots=True)
class Refused(Command):
    """An event the run did not accept (a duplicate, late, or from the wrong person).

    Adapters log it; it never enters the trace, so a redelivered message leaves no mark.
    """

    kind: ClassVar[str] = "refused"
    event: str
    reason: str


@dataclass(kw_only=True, slots=True)
class RunFinished(Command):
    """The run ended: completed, failed (with the cause) or cancelled."""

    kind: ClassVar[str] = "run_finished"
    status: RunStatus
    state: dict[str, JSON]
    error: str | None = None
