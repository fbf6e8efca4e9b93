"""What every socket shares: reading a client's frame safely, and closing on logout.

A client sends only `{"type": "resync"}`. Anything else (binary, over MAX_MESSAGE, JSON
that nests too deeply, a lone surrogate, another shape) is answered with an error message
and the socket stays open: before this module, a frame of 2,000 nested brackets raised a
RecursionError in the monitor's consumer and a binary frame a ValueError in the inbox's,
each ending the connection with 1011.

Each socket joins the group of its login session and the group of its user. Logging out
(Django's user_logged_out) sends the session's group `session.ended`; deactivating or
deleting a user, or changing their password, sends it to the user's group. The consumers
then close with 4401, within the live publisher's flush (engine/live.py: the in-memory
layer under `braid serve`, Redis in scaled mode). A socket of the same user in another
browser stays open on logout.
"""

import hashlib
from collections.abc import Mapping
from typing import Any

from channels.generic.websocket import AsyncWebsocketConsumer
from django.contrib.auth.hashers import UNUSABLE_PASSWORD_PREFIX
from django.db.models.signals import post_delete
from django.http import HttpRequest
from prometheus_client import Gauge

from engine import live
from web.documents import DocumentError, load_document

MAX_MESSAGE = 4096
SESSION_ENDED = "session.ended"
NOT_LOGGED_IN = 4401
NO_SUCH_SOCKET = 4404
RESYNC_ONLY = 'the only message a client sends is {"type": "resync"}'

# Open websockets of this Daphne process, by socket (`run`, `runs`, `inbox`). Under
# PROMETHEUS_MULTIPROC_DIR only the processes alive now count (livesum): a dead Daphne's
# file is dropped by braid.supervise, or by whoever restarts it (docs/operations.md).
OPEN_SOCKETS = Gauge("braid_websockets", "Websocket connections open now, by socket",
                     ["socket"], multiprocess_mode="livesum")  # fmt: skip


def socket_opened(kind: str) -> None:
    """Count one more open socket of this kind (after its handshake was accepted)."""
    OPEN_SOCKETS.labels(kind).inc()


def socket_closed(kind: str) -> None:
    """Count one open socket of this kind less (one that socket_opened counted)."""
    OPEN_SOCKETS.labels(kind).dec()


def read_client_message(text_data: str | None, bytes_data: bytes | None) -> str | None:
    """Return None for a resync request, else the error detail to answer the frame with."""
    if text_data is None:
        return "send JSON text, not binary"
    if len(text_data) > MAX_MESSAGE:
        return f"a message is at most {MAX_MESSAGE:,} characters"
    try:
        message = load_document(text_data)
    except DocumentError as error:
        return f"not JSON: {error.message}"
    if isinstance(message, dict) and message.get("type") == "resync":
        return None
    return RESYNC_ONLY


def groups_to_close_on(scope: Mapping[str, object]) -> list[str]:
    """Return the groups whose `session.ended` closes this socket: its session's, its user's."""
    key = getattr(scope.get("session"), "session_key", None)
    pk = getattr(scope.get("user"), "pk", None)
    groups = [] if not key else [group_of_session(key)]
    return groups + ([group_of_user(pk)] if pk is not None else [])


def group_of_user(pk: object) -> str:
    """Return the group of every socket of one user."""
    return f"sockets.user.{pk}"


def group_of_session(session_key: str) -> str:
    """Return a session's group name: a digest, so the key never appears in Redis."""
    return "session." + hashlib.sha256(session_key.encode()).hexdigest()[:32]


def close_sockets_of_session(sender: object, request: HttpRequest | None, **kwargs: Any) -> None:
    """user_logged_out receiver: tell the session's sockets to close."""
    key = getattr(getattr(request, "session", None), "session_key", None)
    if key:
        live.notify_after_commit({group_of_session(key)}, SESSION_ENDED)


def close_sockets_of_inactive_user(sender: object, instance: Any, **kwargs: Any) -> None:
    """post_save/post_delete receiver on the user model: a user who may no longer log in
    (deactivated or deleted), or whose password changed, keeps no socket open."""
    deleted = kwargs.get("signal") is post_delete
    if deleted or not instance.is_active or getattr(instance, "_braid_password_changed", False):
        live.notify_after_commit({group_of_user(instance.pk)}, SESSION_ENDED)


def note_password_change(sender: type[Any], instance: Any, **kwargs: Any) -> None:
    """pre_save receiver on the user model: remember whether the password hash changes.

    Django ends the user's other sessions when it does (the session hash); their sockets
    were opened before and would stay. Saves that name their fields without the password
    (the last-login stamp at every login) cost no query.
    """
    instance._braid_password_changed = False
    fields = kwargs.get("update_fields")
    if instance.pk is None or (fields is not None and "password" not in fields):
        return
    stored = sender.objects.filter(pk=instance.pk).values_list("password", flat=True).first()
    # A first password, set over none or an unusable one (a user just created), replaces
    # one that never logged anybody in, so no socket can be open on it.
    usable = bool(stored) and not str(stored).startswith(UNUSABLE_PASSWORD_PREFIX)
    instance._braid_password_changed = usable and stored != instance.password


async def refuse(consumer: AsyncWebsocketConsumer, code: int) -> None:
    """Turn a socket away with `code` (4401, 4403, 4404) in a close frame the page can read.

    A handshake closed before it is accepted reaches a browser as close code 1006, the same
    as a server that is down: a run view that reconnects after its session logged out (its
    socket dropped first for another reason, or the session expired while it was away)
    would retry forever instead of saying so. So the socket is accepted and closed at once,
    before anything is sent or any group joined.
    """
    await consumer.accept()
    await consumer.close(code=code)


class NoSuchSocket(AsyncWebsocketConsumer):
    """The last route: a handshake to any other path is refused with 4404 before it is
    accepted (Daphne answers it 403), instead of channels' URLRouter raising ValueError,
    which Daphne logged as an application error and answered 500."""

    async def connect(self) -> None:
        await self.close(code=NO_SUCH_SOCKET)
