"""`/ws/inbox/`: the caller's count of open requests, sent at once and after each change.

Messages: `{"type": "count", "seq": n, "open": k}` with an increasing per-connection
`seq`. Close codes: 4401 when not logged in.
"""

from typing import Any

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer

from approvals import services
from approvals.live import group_for
from braid.auth import group_names
from engine import live


class InboxConsumer(AsyncJsonWebsocketConsumer):  # type: ignore[misc]
    """Sends the user's open-request count, then a new count whenever it may have changed."""

    async def connect(self) -> None:
        user = self.scope.get("user")
        if user is None or not user.is_authenticated or not user.is_active:
            await self.close(code=4401)
            return
        self.user = user
        self.seq = 0
        self.last: int | None = None
        self.joined = await database_sync_to_async(self.groups_of_user)()
        live.attach_serving_loop()
        for name in self.joined:
            await self.channel_layer.group_add(name, self.channel_name)
        await self.accept()
        await self.send_count(force=True)

    def groups_of_user(self) -> list[str]:
        """Return the Channels groups that carry changes concerning this user."""
        names = [group_for("group", name) for name in group_names(self.user)]
        names += [group_for("user", self.user.get_username()), group_for("uid", str(self.user.pk))]
        return names

    async def disconnect(self, code: int) -> None:
        for name in getattr(self, "joined", []):
            await self.channel_layer.group_discard(name, self.channel_name)

    async def receive_json(self, content: Any, **kwargs: Any) -> None:
        """`{"type": "resync"}` asks for the count again."""
        if isinstance(content, dict) and content.get("type") == "resync":
            await self.send_count(force=True)

    async def inbox_changed(self, message: dict[str, Any]) -> None:
        """A change that may concern the user: recount, and send when the count moved."""
        await self.send_count(force=False)

    async def send_count(self, force: bool) -> None:
        count = await database_sync_to_async(services.open_count)(self.user)
        if not force and count == self.last:
            return
        self.last = count
        self.seq += 1
        await self.send_json({"type": "count", "seq": self.seq, "open": count})
