"""What happens around a request opening and closing, whichever runtime opened or closed it:
the audit entries (approvals/audit.py), in the engine's own transaction, a live inbox
update after it commits (approvals/live.py), and, for a new request, emails to the people
who may decide it after it commits (approvals/notify.py)."""

from collections.abc import Sequence

from approvals import live, notify
from approvals.audit import Entry, append
from approvals.models import ApprovalRequest, EventKind
from engine.core.graph import Outcome

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
