"""The Django store: ExecutionStore over Run, NodeState, TraceEvent and the approvals the
run observers hold.

Each batch of node-row writes is one fenced upsert (engine/runtime/fence.py), sent in the
storage backend's form: a VALUES list on SQLite, an `unnest` of arrays bound on the server
on PostgreSQL, with the same fence.
"""

import hashlib
import json
import uuid
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from django.db import connection, transaction
from django.db.models import F

from engine.core.events import CloseApproval, RequestApproval, RunStatus, Trace, WriteRow
from engine.core.events import RowStatus as CoreRowStatus
from engine.core.parts import SnapshotDelta, assemble, is_head
from engine.core.rows import NodeRow
from engine.core.store import ApprovalCommand, StoredRun, UnknownRun
from engine.models import NodeState, Run, RunPart, Runtime, TraceEvent
from engine.runtime import clock, observers
from engine.runtime.backends import backend
from engine.runtime.fence import collapse
from engine.runtime.part_changes import record_changes


def write_rows(run_id: str, rows: Sequence[WriteRow]) -> None:
    """Apply fenced writes as one statement (PostgreSQL) or one per 500 nodes; no read before."""
    if rows:
        backend().write_rows(str(run_id), collapse(rows))


def insert_trace(run_id: str, first: int, trace: Sequence[Trace]) -> None:
    """Append trace events from sequence number `first`, reading nothing back."""
    if trace:
        backend().insert_trace(run_id, first, trace)


def record_approvals(run_id: str, approvals: Sequence[ApprovalCommand]) -> None:
    """Tell the run observers of the step's new approvals, then of what it closed (the
    first reason counts)."""
    asked = [c for c in approvals if isinstance(c, RequestApproval)]
    if asked:
        observers.approvals_requested(run_id, asked)
    reasons: dict[str, str] = {}
    for command in approvals:
        if isinstance(command, CloseApproval):
            reasons.setdefault(command.key, command.reason)
    if reasons:
        observers.approvals_closed(run_id, reasons)


def write_parts(run_id: str, delta: SnapshotDelta) -> None:
    """Delete the parts a step dropped, then upsert the parts it put: a statement each.

    With `replace`, every stored part of the run goes first. On PostgreSQL each statement
    binds two arrays, whatever the number of parts; SQLite takes 500 parts a statement.
    """
    if delta.replace:
        RunPart.objects.filter(run_id=run_id).delete()
    if delta.drop or delta.put:
        backend().write_parts(run_id, delta.drop, delta.put)


def stored_snapshot(run_id: str, snapshot: dict[str, Any]) -> dict[str, Any]:
    """Return a run's whole snapshot: a head with its parts assembled, or as stored."""
    if not is_head(snapshot):
        return snapshot
    return assemble(snapshot, stored_parts(run_id))


def stored_parts(run_id: str) -> Iterator[tuple[str, Any]]:
    """Return a run's stored parts, decoded."""
    return backend().stored_parts(run_id)


def changed_parts(run_id: str, since: int, now: int) -> dict[str, Any] | None:
    """Return the parts put or dropped after version `since` up to `now`, as stored now
    (GONE for a part no longer stored), or None when a version in between left no record
    of its changes (a retry, a whole snapshot, or pruned): then only a full load will do.

    The caller holds the run's lock, so `now` is the stored version.
    """
    return backend().changed_parts(run_id, since, now)


def graphs_digest(documents: Mapping[str, Any]) -> str:
    """Return the key under which runs with these graph documents share their decoding."""
    return hashlib.sha256(json.dumps(documents, sort_keys=True).encode()).hexdigest()


class DjangoStore:
    """The ExecutionStore protocol on the project's database."""

    def __init__(
        self, flow_version: Any = None, started_by: Any = None,
        runtime: Runtime = Runtime.IN_PROCESS, idempotency: tuple[str, str] = ("", ""),
    ) -> None:  # fmt: skip
        self.flow_version = flow_version
        self.started_by = started_by
        self.runtime = runtime
        self.idempotency = idempotency  # the start's Idempotency-Key and request digest

    def create(self, run_id: str, flow: str, input_value: Any, graphs: dict[str, Any]) -> None:
        if Run.objects.filter(pk=run_id).exists():
            raise ValueError(f"run {run_id} exists")
        self.insert_run(run_id, flow, input_value, graphs)

    def insert_run(self, run_id: str, flow: str, input_value: Any, graphs: dict[str, Any]) -> Run:
        """Insert the run's row, one statement, and return it as stored: for an id made
        here, which no row can hold, so nothing is looked up first."""
        run = self.new_run(run_id, flow, input_value, graphs)
        run.save(force_insert=True)
        return run

    def new_run(self, run_id: str, flow: str, input_value: Any, graphs: dict[str, Any]) -> Run:
        """The run's row, not stored yet."""
        return Run(
            pk=uuid.UUID(run_id),  # a UUID, as the row reads back
            label=flow, graphs=graphs, graphs_digest=graphs_digest(graphs),
            input=input_value,
            status=RunStatus.RUNNING.value, flow_version=self.flow_version,
            started_by=self.started_by, runtime=self.runtime,
            idempotency_key=self.idempotency[0], idempotency_digest=self.idempotency[1],
        )  # fmt: skip

    # No savepoint inside a caller's transaction: a failed commit fails the whole step.
    @transaction.atomic(savepoint=False)
    def commit(
        self, run_id: str, status: RunStatus, snapshot: dict[str, Any] | SnapshotDelta,
        rows: Sequence[WriteRow], trace: Sequence[Trace], error: str | None = None,
        approvals: Sequence[ApprovalCommand] = (), *, trace_length: int | None = None,
        columns: dict[str, Any] | None = None, version: int | None = None,
    ) -> None:  # fmt: skip
        """Save one step. A caller that holds the run's lock passes the `trace_length` it
        read with it (saving a read), `columns` of the run to set in the same UPDATE, and
        the `version` this commit makes, under which a delta's part keys are recorded for
        workers whose cached state is older (changed_parts)."""
        if trace_length is None:
            locked = Run.objects.select_for_update(no_key=True).only("trace_length")
            trace_length = locked.get(pk=run_id).trace_length
        first = trace_length
        columns = columns or {}
        if backend().commits_at_once(snapshot, columns):
            assert isinstance(snapshot, SnapshotDelta)
            if approvals:
                record_approvals(run_id, approvals)
            backend().commit_at_once(run_id, status, snapshot, rows, trace, first, error,
                                     columns, version)  # fmt: skip
            return
        insert_trace(run_id, first, trace)
        write_rows(run_id, rows)
        if approvals:
            record_approvals(run_id, approvals)
        if isinstance(snapshot, SnapshotDelta):
            write_parts(run_id, snapshot)
            head = snapshot.head
        else:
            RunPart.objects.filter(run_id=run_id).delete()
            head = snapshot
        Run.objects.filter(pk=run_id).update(
            status=status.value, snapshot=head, error=error or "",
            trace_length=first + len(trace), updated_at=clock.now(),
            snapshot_version=F("snapshot_version") + 1, **columns,
        )  # fmt: skip
        if version is not None and isinstance(snapshot, SnapshotDelta) and not snapshot.replace:
            record_changes(run_id, snapshot, status, version)

    def load(self, run_id: str) -> StoredRun:
        try:
            run = Run.objects.filter(pk=uuid.UUID(str(run_id))).first()
        except ValueError:
            run = None
        if run is None:
            raise UnknownRun(run_id)
        snapshot = stored_snapshot(str(run.pk), run.snapshot)
        return StoredRun(str(run.pk), run.label, run.input, RunStatus(run.status), snapshot,
                         run.graphs, run.error or None)  # fmt: skip

    def rows(self, run_id: str) -> dict[str, NodeRow]:
        # The ORM's SQL, run on the cursor, and every result decoded by one json.loads of a
        # JSON array: at 10,000 rows (the monitor's tree) the ORM's per-row converters cost
        # four times the query, and a json.loads per row twice it.
        query = NodeState.objects.filter(run_id=run_id).values_list(
            "node", "status", "execution_id", "result", "attempt"
        )
        sql, params = query.query.sql_with_params()
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
            found = cursor.fetchall()
        results = json.loads("[" + ",".join("null" if r[3] is None else r[3] for r in found) + "]")
        statuses = {status.value: status for status in CoreRowStatus}
        # tuple.__new__ skips the named tuple's own __new__, a Python function: 10,000 rows
        # in 4.4 ms instead of 6.2.
        make = tuple.__new__
        return {
            node: make(NodeRow, (node, statuses[status], execution_id, result, attempt))
            for (node, status, execution_id, _, attempt), result in zip(found, results, strict=True)
        }

    def trace(self, run_id: str) -> list[Trace]:
        return [
            Trace(
                event=t.event,
                execution_id=t.execution_id,
                node=t.node or None,
                at=t.at,
                detail=t.detail,
            )
            for t in TraceEvent.objects.filter(run_id=run_id).order_by("seq")
        ]

    def approvals(self, run_id: str) -> list[RequestApproval]:
        try:
            known = Run.objects.filter(pk=uuid.UUID(str(run_id))).exists()
        except ValueError:
            known = False
        if not known:
            raise UnknownRun(run_id)
        return observers.open_approvals(run_id)
