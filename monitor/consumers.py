"""The monitor's sockets: one run's colors at /ws/runs/<id>/, the runs list at /ws/runs/.

Each connection authenticates in connect() (the session user, then the API's rule for
reading runs; the Origin is checked by the ASGI stack before), sends a snapshot, and then
sends only what changed. The engine only says "run X changed" (engine/live.py); the
consumer recomputes the tree (one SELECT of rows beside the run) at most every
COALESCE_S, so a 10,000-item foreach sends a few messages, not 10,000. Each message
carries a sequence number; a client that misses one asks for {"type": "resync"}.

Close codes: 4401 not logged in (also sent when the socket's session logs out), 4403 not
allowed, 4404 no such run. web/sockets.py reads what a client sends.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from typing import Any

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer
from django.db.models import Count

from engine import live
from engine.models import Run
from monitor import deltas, reading
from runs.api import listed, rows, visible_runs
from web import sockets
from web.permissions import Act, allows

COALESCE_S = 0.1
LIST_COALESCE_S = 0.25
NOT_LOGGED_IN, NOT_ALLOWED, NO_SUCH_RUN = 4401, 4403, 4404


class LiveConsumer(AsyncWebsocketConsumer):
    """What both sockets share: the login check, sequence numbers, coalesced refreshes."""

    groups_joined: list[str]
    socket_kind = ""  # its label on braid_websockets (web.sockets.OPEN_SOCKETS)

    async def connect(self) -> None:
        self.seq = 0
        self.groups_joined = []
        self.counted = False
        self.refresh_task: asyncio.Task[None] | None = None
        user = self.scope.get("user")
        if user is None or not user.is_authenticated:
            await sockets.refuse(self, NOT_LOGGED_IN)
            return
        refusal = await database_sync_to_async(self.refusal)(user)
        if refusal:
            await sockets.refuse(self, refusal)
            return
        live.attach_serving_loop()
        for group in [*self.group_names(), *sockets.groups_to_close_on(self.scope)]:
            await self.channel_layer.group_add(group, self.channel_name)
            self.groups_joined.append(group)
        await self.accept()
        sockets.socket_opened(self.socket_kind)
        self.counted = True
        await self.send_snapshot()

    async def disconnect(self, code: int) -> None:
        if getattr(self, "counted", False):
            sockets.socket_closed(self.socket_kind)
            self.counted = False
        for group in self.groups_joined:
            await self.channel_layer.group_discard(group, self.channel_name)
        if self.refresh_task is not None:
            self.refresh_task.cancel()

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        """Take {"type": "resync"}; answer anything else with an error message."""
        problem = sockets.read_client_message(text_data, bytes_data)
        if problem is None:
            await self.send_snapshot()
        else:
            await self.send_message({"type": "error", "detail": problem})

    async def session_ended(self, event: dict[str, Any]) -> None:
        """The socket's session logged out: close as if it had never logged in."""
        await self.close(code=NOT_LOGGED_IN)

    async def send_message(self, message: dict[str, Any]) -> None:
        """Send one message with the next sequence number."""
        self.seq += 1
        await self.send(text_data=json.dumps({**message, "seq": self.seq}, default=str))

    def schedule_refresh(self, delay: float) -> None:
        """Refresh once after `delay`, however many changes arrive meanwhile."""
        if self.refresh_task is None or self.refresh_task.done():
            self.refresh_task = asyncio.create_task(self.refresh_after(delay))

    async def refresh_after(self, delay: float) -> None:
        await asyncio.sleep(delay)
        self.refresh_task = None
        await self.send_changes()

    # Each socket defines these.
    def refusal(self, user: Any) -> int:
        raise NotImplementedError

    def group_names(self) -> list[str]:
        raise NotImplementedError

    async def send_snapshot(self) -> None:
        raise NotImplementedError

    async def send_changes(self) -> None:
        raise NotImplementedError


class RunConsumer(LiveConsumer):
    """One run: a snapshot of rows, colors and reasons, then what changed."""

    socket_kind = "run"

    def refusal(self, user: Any) -> int:
        try:
            run_id = uuid.UUID(str(self.scope["url_route"]["kwargs"]["run_id"]))
        except ValueError:
            return NO_SUCH_RUN
        self.run_id = str(run_id)
        if not allows(user, Act.READ_RUNS):
            return NOT_ALLOWED
        if not Run.objects.filter(pk=run_id).exists():
            return NO_SUCH_RUN
        if not visible_runs(Run.objects.filter(pk=run_id), user).exists():
            return NOT_ALLOWED
        return 0

    def group_names(self) -> list[str]:
        return [live.run_group(self.run_id)]

    def load(self, whole: bool = False) -> dict[str, Any] | None:
        """Return the run's tree and its executions: all of them, or those that changed."""
        run = Run.objects.filter(pk=self.run_id).first()
        if run is None:
            return None
        if whole or not hasattr(self, "executions"):
            self.executions = reading.LiveExecutions(self.run_id)
            return {**reading.run_tree(run), "executions": self.executions.all(run)}
        return {**reading.run_tree(run), "executions": self.executions.changed(run)}

    async def send_snapshot(self) -> None:
        tree = await database_sync_to_async(self.load)(whole=True)
        if tree is None:
            await self.close(code=NO_SUCH_RUN)
            return
        self.last = tree
        await self.send_message({"type": "snapshot", **tree})

    async def run_changed(self, event: dict[str, Any]) -> None:
        self.schedule_refresh(COALESCE_S)

    async def send_changes(self) -> None:
        tree = await database_sync_to_async(self.load)()
        if tree is None:
            await self.close(code=NO_SUCH_RUN)
            return
        delta = deltas.tree_delta(self.last, tree)
        if delta is None:
            return
        self.last = tree
        await self.send_message(delta)


class RunsConsumer(LiveConsumer):
    """The runs list: counts by status over the runs the user may read, and changed rows."""

    socket_kind = "runs"

    def refusal(self, user: Any) -> int:
        self.user = user
        return 0 if allows(user, Act.READ_RUNS) else NOT_ALLOWED

    def group_names(self) -> list[str]:
        self.changed_runs: set[str] = set()
        return [live.RUNS_GROUP]

    def counts(self) -> dict[str, int]:
        """Count the user's visible runs by status, in the database (one grouped query)."""
        grouped = visible_runs(Run.objects.all(), self.user).order_by().values("status")
        return {row["status"]: row["n"] for row in grouped.annotate(n=Count("pk"))}

    def changed(self, run_ids: list[str]) -> tuple[list[dict[str, Any]], dict[str, int]]:
        """Return the rows of the changed runs the user may read and, if any, the counts:
        one trip to the database thread for both."""
        runs = visible_runs(Run.objects.filter(pk__in=run_ids), self.user)
        shown = rows(listed(runs).order_by("-created_at"))
        return shown, self.counts() if shown else {}

    async def send_snapshot(self) -> None:
        counts = await database_sync_to_async(self.counts)()
        await self.send_message({"type": "counts", "counts": counts})

    async def runs_changed(self, event: dict[str, Any]) -> None:
        self.changed_runs.update(str(run) for run in event.get("runs", []))
        self.schedule_refresh(LIST_COALESCE_S)

    async def send_changes(self) -> None:
        run_ids, self.changed_runs = sorted(self.changed_runs), set()
        shown, counts = await database_sync_to_async(self.changed)(run_ids)
        if not shown:
            return  # none of the changed runs is one this user may read
        await self.send_message({"type": "counts", "counts": counts})
        await self.send_message({"type": "runs", "runs": shown})
