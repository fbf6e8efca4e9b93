"""The in-process runtime: drives `step` to completion or to a pause, calling actions here.

It commits every step to an ExecutionStore before carrying out the step's commands, the
same order the Celery runtime keeps. Timers are waited out on a Clock (a real one for the
command line, a manual one in tests); the runtime stops when the run finished, or when only
a person's decision can advance it.
"""

from __future__ import annotations

import datetime as dt
import itertools
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from engine.core import expression_limits
from engine.core.actions import ActionContext, ActionError, ActionRegistry
from engine.core.events import (
    ActionCompleted,
    ActionFailed,
    ApprovalDecided,
    CloseApproval,
    Command,
    Decision,
    Event,
    Refused,
    RequestApproval,
    RunAction,
    RunStatus,
    Start,
    TimerFired,
    Trace,
    WriteRow,
)
from engine.core.graph import Graph
from engine.core.parts import restore, take_delta
from engine.core.scheduler import step
from engine.core.state import RunState
from engine.core.stepper import Pick
from engine.core.store import ExecutionStore
from engine.core.timestamps import format_timestamp
from engine.core.values import json_size, nests_deeper_than, not_json

STORED = (Trace, WriteRow, RequestApproval, CloseApproval)  # the commands a commit stores


class Clock(Protocol):
    """Where the runtime reads the time and waits for timers."""

    def now(self) -> dt.datetime:
        """Return the current time (aware, UTC)."""
        ...

    def sleep(self, seconds: float) -> None:
        """Wait this long."""
        ...


class RealClock:
    """The wall clock."""

    def now(self) -> dt.datetime:
        return dt.datetime.now(dt.UTC)

    def sleep(self, seconds: float) -> None:
        time.sleep(max(0.0, seconds))


@dataclass
class ManualClock:
    """A clock that moves only when the runtime sleeps: timers fire without waiting."""

    current: dt.datetime = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)

    def now(self) -> dt.datetime:
        return self.current

    def sleep(self, seconds: float) -> None:
        self.current += dt.timedelta(seconds=max(0.0, seconds))


def parse_time(text: str) -> dt.datetime:
    """Return the aware datetime of an RFC 3339 string."""
    return dt.datetime.fromisoformat(text.replace("Z", "+00:00"))


class NoSuchApproval(LookupError):
    """No open approval matches the node (and execution) asked for."""


class AmbiguousApproval(LookupError):
    """Several approvals are open at the node path (a foreach's items): name an execution."""


class EventRefused(Exception):
    """The run refused an event (e.g. an approver outside the node's groups)."""


@dataclass(frozen=True, slots=True)
class OpenApproval:
    """Where an open approval waits: its key, node path and execution id."""

    key: str
    node: str
    execution_id: str


def choose_approval(
    candidates: Iterable[OpenApproval], node: str, execution_id: str | None = None
) -> OpenApproval:
    """Return the one open approval at a node path (and execution id, when given).

    Raise NoSuchApproval when none matches and AmbiguousApproval when several do; both
    messages list the execution ids open at that node.
    """
    at_node = [c for c in candidates if c.node == node]
    matching = [c for c in at_node if execution_id in (None, c.execution_id)]
    if len(matching) == 1:
        return matching[0]
    if not at_node:
        raise NoSuchApproval(f"no open approval at {node!r}")
    listed = ", ".join(c.execution_id for c in at_node)
    if not matching:
        raise NoSuchApproval(
            f"no open approval at {node!r} has the execution id {execution_id!r}; "
            f"open there: {listed}"
        )
    raise AmbiguousApproval(
        f"{len(matching)} approvals are open at {node!r}; name one by its execution id: {listed}"
    )


@dataclass
class InProcessRuntime:
    """Runs flows in this process against a store, with actions from a registry."""

    store: ExecutionStore
    actions: ActionRegistry
    clock: Clock = field(default_factory=RealClock)
    pick: Pick | None = None
    snapshot_every_step: bool = True
    max_timer_wait_s: float | None = None
    # How long to wait for a timer while a person is asked (a `wait` racing an approval):
    # None stops at the person, as a decision may come any time (braid run: --max-wait).
    approval_timer_wait_s: float | None = None
    # What the next commit stores of the steps not committed yet: rows, trace, approvals
    # (other commands are carried out at once; holding them would only grow the heap).
    pending: list[Command] = field(default_factory=list, repr=False)
    refused: list[Refused] = field(default_factory=list, repr=False)
    # The last time stamped and its text: a run's events are stamped many times a second.
    stamped: tuple[dt.datetime | None, str] = field(default=(None, ""), repr=False)

    def start(
        self, run_id: str, graphs: Mapping[str, Graph], flow: str, input_value: Any
    ) -> RunState:
        """Create and run a run until it finishes or waits for a person."""
        self.store.create(run_id, flow, input_value, {k: g.to_json() for k, g in graphs.items()})
        state = RunState(run_id=run_id, graphs=graphs)
        return self.advance(state, Start(at=self.stamp(), input=input_value))

    def load(self, run_id: str) -> RunState:
        """Rebuild a stored run's state from its snapshot and its graphs."""
        stored = self.store.load(run_id)
        graphs = {key: Graph.from_json(document) for key, document in stored.graphs.items()}
        return restore(stored.snapshot, graphs)

    def decide(
        self, state: RunState, node: str, user: str, groups: tuple[str, ...],
        decision: Decision, comment: str = "", execution_id: str | None = None,
    ) -> RunState:  # fmt: skip
        """Deliver one approver's decision at a node path; return the state it runs on to.

        choose_approval picks the approval; EventRefused says why the run refused it.
        """
        waiting = [OpenApproval(key, state.path(frame), frame.execution_id)
                   for key, frame in state.approvals()]  # fmt: skip
        chosen = choose_approval(waiting, node, execution_id)
        event = ApprovalDecided(
            at=self.stamp(), key=chosen.key, user=user, groups=groups, decision=decision,
            comment=comment,
        )  # fmt: skip
        self.refused.clear()
        state = self.advance(state, event)
        if self.refused:
            raise EventRefused(self.refused[0].reason)
        return state

    def stamp(self) -> str:
        """Return the clock's time as RFC 3339."""
        now = self.clock.now()
        if now != self.stamped[0]:
            self.stamped = (now, format_timestamp(now))
        return self.stamped[1]

    def advance(self, state: RunState, event: Event) -> RunState:
        """Apply the event and everything it causes; wait out timers while nobody is asked."""
        events: deque[Event] = deque([event])
        while True:
            while events:
                state = self.apply(state, events.popleft(), events)
            timer = self.next_timer(state)
            if timer is None:
                break
            due, key = timer
            wait = (parse_time(due) - self.clock.now()).total_seconds()
            if self.max_timer_wait_s is not None and wait > self.max_timer_wait_s:
                break
            self.clock.sleep(wait)
            events.append(TimerFired(at=self.stamp(), key=key))
        if not self.snapshot_every_step:
            self.commit(state, [])
        return state

    def next_timer(self, state: RunState) -> tuple[str, str] | None:
        """Return the timer to wait for: none once the run finished, nor while a person is
        asked unless it is due within approval_timer_wait_s."""
        timers = state.timers()
        if state.status.finished or not timers:
            return None
        if state.approvals():
            limit = self.approval_timer_wait_s
            due = (parse_time(timers[0][0]) - self.clock.now()).total_seconds()
            if limit is None or due > limit:
                return None
        return timers[0]

    def apply(self, state: RunState, event: Event, events: deque[Event]) -> RunState:
        """Step once, commit, then carry out the commands (actions run here, now)."""
        state, commands = step(state, event, self.pick)
        held = not (self.snapshot_every_step or state.status.finished)
        if not held:
            self.commit(state, commands)
        # One pass over the commands (a fork's step makes thousands): most are stored ones.
        for command in commands:
            if isinstance(command, STORED):
                if held:
                    self.pending.append(command)
            elif isinstance(command, RunAction):
                events.append(self.run_action(command, state.run_id))
            elif isinstance(command, Refused):
                self.refused.append(command)
        return state

    def commit(self, state: RunState, commands: list[Command]) -> None:
        """Save what the state changed with the rows, trace and approvals of the commands
        (and held ones)."""
        rows: list[WriteRow] = []
        trace: list[Trace] = []
        approvals: list[RequestApproval | CloseApproval] = []
        for command in itertools.chain(self.pending, commands):  # one pass: most are trace
            if isinstance(command, Trace):
                trace.append(command)
            elif isinstance(command, WriteRow):
                rows.append(command)
            elif isinstance(command, (RequestApproval, CloseApproval)):
                approvals.append(command)
        self.pending.clear()
        status = state.status if state.started else RunStatus.RUNNING
        self.store.commit(
            state.run_id, status, take_delta(state), rows, trace, state.error, approvals=approvals
        )

    def run_action(self, command: RunAction, run_id: str) -> Event:
        """Call an action and turn its result or exception into an event."""
        return perform(self.actions, command, run_id, self.stamp)


def perform(actions: ActionRegistry, command: RunAction, run_id: str,
            stamp: Callable[[], str]) -> Event:  # fmt: skip
    """Call a command's action; return ActionCompleted, or ActionFailed for any exception."""
    context = ActionContext(run_id, command.node, command.execution_id, command.attempt,
                            command.key)  # fmt: skip
    try:
        spec = actions.get(command.action)
        params = command.params if isinstance(command.params, dict) else {}
        result = spec.call(params, context)
    except ActionError as error:
        return ActionFailed(at=stamp(), key=command.key, error=str(error))
    except Exception as error:  # an action's bug is that node's failure, not the run's
        return ActionFailed(at=stamp(), key=command.key, error=f"{type(error).__name__}: {error}")
    if result.output is None:  # a no-op's output: nothing to nest, convert or measure
        return ActionCompleted(at=stamp(), key=command.key, output=None, outcome=result.outcome)
    limit = expression_limits.limits().max_value_depth
    if nests_deeper_than(result.output, limit):  # it would be stored and walked: refuse it here
        too_deep = f"the output nests deeper than {limit} levels (BRAID_VALUE_MAX_DEPTH)"
        return ActionFailed(at=stamp(), key=command.key, error=too_deep)
    if (problem := not_json(result.output, "the output")) is not None:  # nor could it be stored
        return ActionFailed(at=stamp(), key=command.key, error=problem)
    size, most = json_size(result.output), expression_limits.limits().max_value_bytes
    if size > most:  # it would travel in an event and be stored: refuse it here, too
        too_large = (
            f"the output is {size:,} bytes of JSON; the limit is {most:,} (BRAID_VALUE_MAX_BYTES)"
        )
        return ActionFailed(at=stamp(), key=command.key, error=too_large)
    return ActionCompleted(
        at=stamp(), key=command.key, output=result.output, outcome=result.outcome
    )
