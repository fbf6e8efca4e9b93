"""`/ws/inbox/`: the caller's count of open requests, sent at once and after each change
(counted at most once per RECOUNT_S, the changes of a burst together).

Messages: `{"type": "count", "seq": n, "open": k}` with an increasing per-connection
`seq`; `{"type": "error", "seq": n, "detail": ...}` answers anything but `{"type":
"resync"}` (web/sockets.py). Close codes: 4401 when not logged in, or when the socket's
session logs out; 1011 when a count failed (the database did not answer), as any failed
handler closes it: the page connects again and counts anew.
"""

import asyncio
import json
import logging
import time
from typing import Any

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer

from approvals import services
from approvals.live import group_for
from engine import live
from web import sockets
from web.auth import group_names

logger = logging.getLogger(__name__)
INTERNAL_ERROR = 1011  # RFC 6455: the server met a condition that kept it from going on

# A socket counts at most once per this many seconds: a change inside the window is
# counted once at its end. Changes come in bursts (a step opens or closes many requests,
# every worker process publishes its own), and each count is a query per connected user.
RECOUNT_S = 0.5


class InboxConsumer(AsyncWebsocketConsumer):
    """Sends the user's open-request count, then a new count whenever it may have changed."""

    async def connect(self) -> None:
        user = self.scope.get("user")
        if user is None or not user.is_authenticated or not user.is_active:
            await sockets.refuse(self, sockets.NOT_LOGGED_IN)
            return
        self.user = user
        self.seq = 0
        self.last: int | None = None
        self.counted_at = 0.0  # time.monotonic() of the last count
        self.recount: asyncio.Task[None] | None = None  # the count due at the window's end
        self.joined = await database_sync_to_async(self.groups_of_user)()
        self.joined += sockets.groups_to_close_on(self.scope)
        live.attach_serving_loop()
        for name in self.joined:
            await self.channel_layer.group_add(name, self.channel_name)
        await self.accept()
        sockets.socket_opened("inbox")
        self.counted = True
        await self.send_count(force=True)

    def groups_of_user(self) -> list[str]:
        """Return the Channels groups that carry changes concerning this user."""
        names = [group_for("group", name) for name in group_names(self.user)]
        names += [group_for("user", self.user.get_username()), group_for("uid", str(self.user.pk))]
        return names

    async def disconnect(self, code: int) -> None:
        recount = getattr(self, "recount", None)
        if recount is not None:
            recount.cancel()
        if getattr(self, "counted", False):
            sockets.socket_closed("inbox")
            self.counted = False
        for name in getattr(self, "joined", []):
            await self.channel_layer.group_discard(name, self.channel_name)

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        """`{"type": "resync"}` asks for the count again; anything else gets an error."""
        problem = sockets.read_client_message(text_data, bytes_data)
        if problem is None:
            await self.send_count(force=True)
        else:
            await self.send_message({"type": "error", "detail": problem})

    async def session_ended(self, message: dict[str, Any]) -> None:
        """The socket's session logged out: close as if it had never logged in."""
        await self.close(code=sockets.NOT_LOGGED_IN)

    async def inbox_changed(self, message: dict[str, Any]) -> None:
        """A change that may concern the user: recount, and send when the count moved; at
        most once per RECOUNT_S, the changes inside a window counted once at its end."""
        if self.recount is not None:
            return  # counted when the window ends, this change with it
        wait = self.counted_at + RECOUNT_S - time.monotonic()
        if wait <= 0:
            await self.send_count(force=False)
        else:
            self.recount = asyncio.create_task(self.count_after(wait))

    async def count_after(self, wait: float) -> None:
        """Count once `wait` seconds from now.

        A count that fails closes the socket, as it does when it fails in a handler: this
        task's exception would reach nobody, and the page would show a count that no
        longer moves until the next change.
        """
        await asyncio.sleep(wait)
        self.recount = None
        try:
            await self.send_count(force=False)
        except Exception:
            logger.exception("inbox socket of %s: the count failed; closing it",
                             self.user.get_username())  # fmt: skip
            await self.close(code=INTERNAL_ERROR)

    async def send_count(self, force: bool) -> None:
        self.counted_at = time.monotonic()
        count = await database_sync_to_async(services.open_count)(self.user)
        if not force and count == self.last:
            return
        self.last = count
        await self.send_message({"type": "count", "open": count})

    async def send_message(self, message: dict[str, Any]) -> None:
        """Send one message with the next sequence number."""
        self.seq += 1
        await self.send(text_data=json.dumps({**message, "seq": self.seq}))
