"""The inbox's live layer: after a commit that opens, closes or moves requests, each
inbox socket of a person concerned recomputes that person's count (approvals/consumers.py).

Messages name no request: a socket joins one Channels group per Django group of its
user and one for the user, and a change is sent to the groups of the people it may
concern. Publishing never fails the engine's step: the count is a convenience.
"""

import hashlib
import logging
from collections.abc import Iterable, Sequence

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.db import transaction

from approvals.models import ApprovalRequest

log = logging.getLogger(__name__)
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


def publish(groups: Iterable[str]) -> None:
    """Send `inbox.changed` to each group now; log and carry on if the layer is down."""
    layer = get_channel_layer()
    if layer is None:
        return
    try:
        for name in sorted(groups):
            async_to_sync(layer.group_send)(name, {"type": CHANGED})
    except Exception:  # a broken layer must not break the step that committed
        log.exception("could not publish inbox changes")


def requests_changed(requests: Sequence[ApprovalRequest]) -> None:
    """Publish a change to these requests once the current transaction commits."""
    groups = audience(requests)
    if groups:
        transaction.on_commit(lambda: publish(groups))
