"""What happens around a request opening and closing, whichever runtime opened or closed it:
the request rows, the audit entries (approvals/audit.py), in the engine's own transaction,
a live inbox update after it commits (approvals/live.py), and, for a new request, emails
to the people who may decide it after it commits (approvals/notify.py).

The engine calls these through its run-observer hook (engine/runtime/observers.py), on
which ApprovalsConfig.ready() registers ApprovalsObserver.
"""

import datetime as dt
import uuid
from collections.abc import Mapping, Sequence

from django.db import connection
from django.db.models import Subquery

from approvals import live, notify
from approvals.audit import Entry, append
from approvals.models import ApprovalRequest, ApprovalStatus, EventKind
from approvals.services import record_expired
from engine.core.events import RequestApproval
from engine.core.graph import Outcome
from engine.core.runtime import parse_time
from engine.core.timestamps import format_timestamp
from engine.models import Run
from engine.runtime import clock

ROWS_PER_STATEMENT = 500

DECIDED = frozenset({Outcome.APPROVED.value, Outcome.REJECTED.value})


def opened(requests: Sequence[ApprovalRequest]) -> None:
    """Record that the engine asked for these requests."""
    append(
        [
            Entry(
                EventKind.REQUESTED,
                r,
                detail={"groups": r.groups, "policy": r.policy, "title": r.title},
            )
            for r in requests
        ]
    )
    live.requests_changed(requests)
    notify.after_commit_requested([r.pk for r in requests])


def closed(requests: Sequence[ApprovalRequest], reasons: dict[str, str]) -> None:
    """Record that the engine closed these requests: decided by the policy, or cancelled."""
    entries = []
    for request in requests:
        reason = reasons[request.key]
        if reason in DECIDED:
            entries.append(Entry(EventKind.CLOSED, request, detail={"outcome": reason}))
        else:
            entries.append(Entry(EventKind.CANCELLED, request, detail={"reason": reason}))
    append(entries)
    live.requests_changed(requests)


def reopened(requests: Sequence[ApprovalRequest], by: str) -> None:
    """Record that a retry opened these requests again."""
    append(
        [Entry(EventKind.REOPENED, r, actor=by, detail={"reason": "run retried"}) for r in requests]
    )


class ApprovalsObserver:
    """The approvals app on the engine's run-observer hook (engine.runtime.observers)."""

    def approvals_requested(self, run_id: str, requests: Sequence[RequestApproval]) -> None:
        """Store the new requests and audit them, 500 at a time; a stored key is left as it is."""
        for start in range(0, len(requests), ROWS_PER_STATEMENT):
            open_requests(run_id, requests[start : start + ROWS_PER_STATEMENT])

    def approvals_closed(self, run_id: str, reasons: Mapping[str, str]) -> None:
        """Close the open requests with their reasons and audit them: one UPDATE per 500."""
        keys = list(reasons)
        for start in range(0, len(keys), ROWS_PER_STATEMENT):
            close_requests(run_id, keys[start : start + ROWS_PER_STATEMENT], reasons)

    def approvals_reopened(self, run_id: str, keys: Sequence[str], by: str) -> None:
        """Open closed requests again after a retry, and audit it."""
        closed = ApprovalRequest.objects.filter(
            run_id=run_id, key__in=keys, status=ApprovalStatus.CLOSED
        )
        reopening = list(closed.order_by("id"))
        closed.update(status=ApprovalStatus.OPEN, outcome="", closed_at=None)
        reopened(reopening, by)

    def open_approvals(self, run_id: str) -> list[RequestApproval]:
        """Return the run's open requests as the engine's commands, in the order asked."""
        return [
            RequestApproval(key=r.key, node=r.node, execution_id=r.execution_id,
                            groups=tuple(r.groups), policy=r.policy, title=r.title,
                            instructions=r.instructions, allow_starter=r.allow_starter,
                            shown=tuple((s["field"], s["value"]) for s in r.shown),
                            due=format_timestamp(r.due_at) if r.due_at else None)
            for r in ApprovalRequest.objects.filter(run_id=run_id, status=ApprovalStatus.OPEN)
            .order_by("id")
        ]  # fmt: skip

    def swept(self, now: dt.datetime) -> None:
        """Audit the requests that passed their due time."""
        record_expired(now)


def open_requests(run_id: str, chunk: Sequence[RequestApproval]) -> None:
    """Insert approval requests and audit them; a key already stored is left as it is.

    Each request's starter is copied from its run inside the insert, not read first: a
    step that opens requests sends no statement more for it."""
    starter = Subquery(Run.objects.filter(pk=run_id).values("started_by_id")[:1])
    keys = [r.key for r in chunk]
    known = set(ApprovalRequest.objects.filter(key__in=keys).values_list("key", flat=True))
    ApprovalRequest.objects.bulk_create(
        [ApprovalRequest(run_id=run_id, starter_id=starter, key=r.key, node=r.node,
                         execution_id=r.execution_id,
                         groups=list(r.groups), policy=r.policy, title=r.title,
                         instructions=r.instructions, allow_starter=r.allow_starter,
                         shown=[{"field": f, "value": v} for f, v in r.shown],
                         due_at=parse_time(r.due) if r.due else None)
         for r in chunk if r.key not in known],
        ignore_conflicts=True,
    )  # fmt: skip
    fresh = [key for key in keys if key not in known]
    if fresh:
        opened(list(ApprovalRequest.objects.filter(key__in=fresh).order_by("id")))


def close_requests(run_id: str, chunk: Sequence[str], reasons: Mapping[str, str]) -> None:
    """Close these keys' open requests with their reasons and audit them: one UPDATE per
    reason (a step closes its keys with one reason, or a few), answering the rows it
    closed, then the audit's two statements."""
    by_reason: dict[str, list[str]] = {}
    for key in chunk:
        by_reason.setdefault(reasons[key], []).append(key)
    closing: list[ApprovalRequest] = []
    for reason, keys in by_reason.items():
        closing.extend(close_open(run_id, keys, reason))
    closing.sort(key=lambda request: request.pk)
    closed(closing, dict(reasons))


def close_open(run_id: str, keys: Sequence[str], outcome_text: str) -> list[ApprovalRequest]:
    """Close the run's open requests of these keys with one outcome; return them as closed.

    UPDATE ... RETURNING (PostgreSQL, and SQLite from 3.35; Django asks for 3.37): the rows
    come back from the statement that closes them, with no read before it, and the ORM
    builds them from the columns as it builds any query's rows."""
    fields = {f.name: f for f in ApprovalRequest._meta.concrete_fields}
    quote = connection.ops.quote_name
    status, outcome, closed_at, run, key = (
        quote(fields[name].column or name)
        for name in ("status", "outcome", "closed_at", "run", "key")
    )
    params = [ApprovalStatus.CLOSED.value, outcome_text,
              fields["closed_at"].get_db_prep_save(clock.now(), connection),
              fields["run"].get_db_prep_save(uuid.UUID(str(run_id)), connection),
              ApprovalStatus.OPEN.value, *keys]  # fmt: skip
    table = quote(ApprovalRequest._meta.db_table)
    marks = ", ".join(["%s"] * len(keys))
    sql = (f"UPDATE {table} SET {status} = %s, {outcome} = %s, {closed_at} = %s "
           f"WHERE {run} = %s AND {status} = %s AND {key} IN ({marks}) "
           "RETURNING *")  # fmt: skip
    return list(ApprovalRequest.objects.raw(sql, params))
