"""The inbox's live layer: after a commit that opens, closes or moves requests, each
inbox socket of a person concerned recomputes that person's count (approvals/consumers.py).

Messages name no request: a socket joins one Channels group per Django group of its
user and one for the user, and a change is sent to the groups of the people it may
concern. Publishing never fails the engine's step: the count is a convenience.
"""

import hashlib
from collections.abc import Iterable, Sequence

from approvals.models import ApprovalRequest
from engine import live

CHANGED = "inbox.changed"


def group_for(kind: str, name: str) -> str:
    """Return a Channels group name for a Django group or a user name (any characters)."""
    digest = hashlib.sha256(name.encode()).hexdigest()[:24]
    return f"inbox.{kind}.{digest}"


def audience(requests: Iterable[ApprovalRequest]) -> set[str]:
    """Return the Channels groups of everyone a change to these requests may concern."""
    groups: set[str] = set()
    for request in requests:
        groups.update(group_for("group", name) for name in request.groups)
        people = {*request.delegated_to, *request.delegated_from}
        if request.assignee_id is not None:
            groups.add(group_for("uid", str(request.assignee_id)))
        groups.update(group_for("user", name) for name in people)
    return groups


def requests_changed(requests: Sequence[ApprovalRequest]) -> None:
    """Publish a change to these requests once the current transaction commits.

    The notice goes through the monitor's publisher thread (engine/live.py), which hands
    it to Daphne's event loop under the in-memory layer and to Redis in scaled mode; the
    committing step never waits on the channel layer.
    """
    live.notify_after_commit(audience(requests), CHANGED)
