"""The store protocol every runtime persists through, and its in-memory implementation.

One `commit` saves a step: the snapshot (whole, or as a SnapshotDelta of the parts the
step changed), the fenced node-row writes, the trace events and the approval requests
opened and closed, together. `load` returns the whole snapshot either way. The Django store
implements the same protocol over SQL; both pass `tests/core/store_contract.py`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from engine.core.events import CloseApproval, RequestApproval, RunStatus, Trace, WriteRow
from engine.core.parts import SnapshotDelta, assemble, is_head
from engine.core.rows import NodeRow, apply_write
from engine.core.values import dumps

ApprovalCommand = RequestApproval | CloseApproval


class UnknownRun(KeyError):
    """No run has this id."""


@dataclass(frozen=True, slots=True)
class StoredRun:
    """What a store holds about a run besides its rows and trace."""

    run_id: str
    flow: str
    input: Any
    status: RunStatus
    snapshot: dict[str, Any]
    graphs: dict[str, Any]
    error: str | None = None


class ExecutionStore(Protocol):
    """Where runs, node rows and trace events live."""

    def create(self, run_id: str, flow: str, input_value: Any, graphs: dict[str, Any]) -> None:
        """Register a new run with the graph documents it runs; raise ValueError if taken."""
        ...

    def commit(
        self, run_id: str, status: RunStatus, snapshot: dict[str, Any] | SnapshotDelta,
        rows: Sequence[WriteRow], trace: Sequence[Trace], error: str | None = None,
        approvals: Sequence[ApprovalCommand] = (),
    ) -> None:  # fmt: skip
        """Save one step atomically: snapshot, fenced row writes, trace events, approvals.

        A whole snapshot replaces what was stored; a delta puts and drops parts under a
        new head (with `replace`, its parts are all there is).

        A request opens once per key (asking again changes nothing, open or closed); a
        close ends an open request with its reason and leaves a closed one as it was.
        """
        ...

    def load(self, run_id: str) -> StoredRun:
        """Return the run; raise UnknownRun."""
        ...

    def rows(self, run_id: str) -> dict[str, NodeRow]:
        """Return the run's node rows by path."""
        ...

    def trace(self, run_id: str) -> list[Trace]:
        """Return the run's trace events in commit order."""
        ...

    def approvals(self, run_id: str) -> list[RequestApproval]:
        """Return the run's open approval requests in the order they were opened."""
        ...


@dataclass
class InMemoryStore:
    """The store protocol over dicts, for the in-process runtime and the core's tests."""

    runs: dict[str, StoredRun] = field(default_factory=dict)
    node_rows: dict[str, dict[str, NodeRow]] = field(default_factory=dict)
    traces: dict[str, list[Trace]] = field(default_factory=dict)
    requests: dict[str, dict[str, RequestApproval]] = field(default_factory=dict)
    closed: dict[str, dict[str, str]] = field(default_factory=dict)
    # run -> its snapshot as a log of commits (`runs` holds an empty snapshot)
    snapshots: dict[str, DeltaLog] = field(default_factory=dict)

    def create(self, run_id: str, flow: str, input_value: Any, graphs: dict[str, Any]) -> None:
        if run_id in self.runs:
            raise ValueError(f"run {run_id} exists")
        self.runs[run_id] = StoredRun(run_id, flow, input_value, RunStatus.RUNNING, {}, graphs)
        self.node_rows[run_id] = {}
        self.traces[run_id] = []
        self.requests[run_id] = {}
        self.closed[run_id] = {}
        self.snapshots[run_id] = DeltaLog()

    def commit(
        self, run_id: str, status: RunStatus, snapshot: dict[str, Any] | SnapshotDelta,
        rows: Sequence[WriteRow], trace: Sequence[Trace], error: str | None = None,
        approvals: Sequence[ApprovalCommand] = (),
    ) -> None:  # fmt: skip
        stored = self.runs.get(run_id)
        if stored is None:
            raise UnknownRun(run_id)
        self.snapshots[run_id].append(snapshot)
        if status is not stored.status or error != stored.error:
            self.runs[run_id] = StoredRun(
                run_id, stored.flow, stored.input, status, {}, stored.graphs, error
            )
        write_rows(self.node_rows[run_id], rows)
        self.traces[run_id].extend(trace)
        if approvals:
            record_approvals(self.requests[run_id], self.closed[run_id], approvals)

    def load(self, run_id: str) -> StoredRun:
        if run_id not in self.runs:
            raise UnknownRun(run_id)
        stored = self.runs[run_id]
        snapshot, parts = self.snapshots[run_id].replay()
        if is_head(snapshot):
            snapshot = assemble(snapshot, parts.items())
        return replace(stored, snapshot=snapshot)

    def known(self, run_id: str) -> None:
        """Raise UnknownRun unless the run exists."""
        if run_id not in self.runs:
            raise UnknownRun(run_id)

    def rows(self, run_id: str) -> dict[str, NodeRow]:
        self.known(run_id)
        return dict(self.node_rows[run_id])

    def trace(self, run_id: str) -> list[Trace]:
        self.known(run_id)
        return list(self.traces[run_id])

    def approvals(self, run_id: str) -> list[RequestApproval]:
        self.known(run_id)
        closed = self.closed[run_id]
        return [request for key, request in self.requests[run_id].items() if key not in closed]


@dataclass
class DeltaLog:
    """A run's stored snapshot: the JSON text of each commit since it was last compacted.

    A commit appends one text (its head and the parts it put and dropped, or a whole
    snapshot), so a step pays one encoding of what it changed, as an append-only log in a
    database would. Loading replays the texts, and leaves the log compacted into one.
    """

    texts: list[str] = field(default_factory=list)

    def append(self, snapshot: dict[str, Any] | SnapshotDelta) -> None:
        """Log a commit's snapshot or delta; one that replaces everything starts the log."""
        if isinstance(snapshot, SnapshotDelta):
            entry = {"head": snapshot.head, "put": snapshot.put, "drop": snapshot.drop}
            whole = snapshot.replace
        else:
            entry, whole = {"head": snapshot, "put": {}, "drop": []}, True
        if whole:
            self.texts.clear()
        self.texts.append(dumps(entry))

    def replay(self) -> tuple[dict[str, Any], dict[str, Any]]:
        """Return the last head (or whole snapshot) and the parts stored; compact the log."""
        head: dict[str, Any] = {}
        parts: dict[str, Any] = {}
        for text in self.texts:
            entry = json.loads(text)
            for key in entry["drop"]:
                parts.pop(key, None)
            parts.update(entry["put"])
            head = entry["head"]
        if len(self.texts) > 1:
            self.texts = [dumps({"head": head, "put": parts, "drop": []})]
        return head, parts


def apply_parts(parts: dict[str, str], snapshot: dict[str, Any] | SnapshotDelta) -> str:
    """Store a whole snapshot or a delta's parts (encoded now, as a database would); return
    the JSON text of what goes in the run's snapshot: the whole snapshot, or the delta's head.

    Text is decoded when it is read (`load`), as a database would: a step pays the
    encoding of what it changed, not a copy of it.
    """
    if not isinstance(snapshot, SnapshotDelta):
        parts.clear()
        return dumps(snapshot)
    if snapshot.replace:
        parts.clear()
    for key in snapshot.drop:
        parts.pop(key, None)
    for key, value in snapshot.put.items():
        parts[key] = dumps(value)
    return dumps(snapshot.head)


def write_rows(rows: dict[str, NodeRow], writes: Iterable[WriteRow]) -> None:
    """Apply fenced writes in order."""
    for write in writes:
        apply_write(rows, write)


def record_approvals(
    requests: dict[str, RequestApproval], closed: dict[str, str],
    approvals: Iterable[ApprovalCommand],
) -> None:  # fmt: skip
    """Open requests by key, then close them with the first reason given (as SQL would)."""
    commands = list(approvals)
    for command in commands:
        if isinstance(command, RequestApproval):
            requests.setdefault(command.key, command)
    for command in commands:
        if isinstance(command, CloseApproval) and command.key in requests:
            closed.setdefault(command.key, command.reason)
