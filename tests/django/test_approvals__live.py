"""/ws/inbox/: the count of open requests, at once and after each change that concerns it."""

import json
from typing import Any, cast

import pytest
from asgiref.sync import async_to_sync
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import AnonymousUser
from django.test import Client

from braid.routing import websocket_router
from tests.django.approval_helpers import INVOICE, decide, request_id, start
from tests.django.durable_driver import drain
from tests.django.fixture_types import ClientFor, DemoUsers
from tests.django.socket_helpers import turned_away

pytestmark = pytest.mark.django_db(transaction=True)


def connect(user: Any) -> WebsocketCommunicator:
    """Return a communicator for /ws/inbox/ as a user (the auth middleware's result)."""
    communicator = WebsocketCommunicator(websocket_router, "/ws/inbox/")
    # The auth middleware's key, which channels' typed test scope does not list.
    cast(dict[str, Any], communicator.scope)["user"] = user
    return communicator


async def receive(communicator: WebsocketCommunicator) -> dict[str, Any]:
    """Return the next JSON message (within 5 s)."""
    decoded: dict[str, Any] = json.loads(await communicator.receive_from(timeout=5))
    return decoded


def test_each_approver_gets_their_count_at_once_and_again_when_it_moves(
    demo: DemoUsers, client_for: ClientFor
) -> None:
    async def scenario() -> None:
        finance, legal = connect(demo["finance"]), connect(demo["legal"])
        assert (await finance.connect())[0] and (await legal.connect())[0]
        assert await receive(finance) == {"type": "count", "seq": 1, "open": 0}
        assert await receive(legal) == {"type": "count", "seq": 1, "open": 0}
        run = await database_sync_to_async(start)(
            client_for("analyst"), "invoice-sign-off", INVOICE
        )
        assert await receive(finance) == {"type": "count", "seq": 2, "open": 1}
        assert await receive(legal) == {"type": "count", "seq": 2, "open": 1}

        def approve_fin() -> None:
            assert (
                decide(client_for("finance"), request_id(run, "fin"), "approve").status_code == 202
            )
            drain(run)

        await database_sync_to_async(approve_fin)()
        assert await receive(finance) == {"type": "count", "seq": 3, "open": 0}
        assert await legal.receive_nothing(timeout=0.3)  # legal's count did not move
        await legal.send_json_to({"type": "resync"})
        assert await receive(legal) == {"type": "count", "seq": 3, "open": 1}
        await finance.disconnect()
        await legal.disconnect()

    async_to_sync(scenario)()


def test_a_delegation_moves_the_count_from_the_delegator_to_the_delegate(
    demo: DemoUsers, client_for: ClientFor
) -> None:
    from django.contrib.auth.models import Group, User

    controller = User.objects.create_user("controller")
    controller.groups.add(Group.objects.get(name="finance"))

    async def scenario() -> None:
        run = await database_sync_to_async(start)(
            client_for("analyst"), "invoice-sign-off", INVOICE
        )
        finance, other = connect(demo["finance"]), connect(controller)
        await finance.connect()
        await other.connect()
        assert (await receive(finance))["open"] == (await receive(other))["open"] == 1

        def hand_over() -> None:
            client = Client()
            client.force_login(demo["finance"])
            body = json.dumps({"to": "controller"})
            url = f"/api/approvals/{request_id(run, 'fin')}/delegate/"
            assert client.post(url, body, content_type="application/json").status_code == 200

        await database_sync_to_async(hand_over)()
        assert await receive(finance) == {"type": "count", "seq": 2, "open": 0}
        assert await other.receive_nothing(timeout=0.3)  # still 1: now theirs alone
        await finance.disconnect()
        await other.disconnect()

    async_to_sync(scenario)()


def test_a_burst_of_changes_is_counted_once_at_the_end_of_the_window(
    demo: DemoUsers, client_for: ClientFor, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each count is a query per connected person, and a step that opens or closes many
    requests, from every worker process, sends many changes: a socket counts at most once
    per RECOUNT_S, and the changes inside a window once at its end."""
    from channels.layers import get_channel_layer

    from approvals import consumers, services
    from approvals.live import group_for

    monkeypatch.setattr(consumers, "RECOUNT_S", 2.0)  # longer than the run's start takes
    counted: list[str] = []
    count = services.open_count

    def counting(user: Any) -> int:
        counted.append(user.get_username())
        return count(user)

    monkeypatch.setattr(services, "open_count", counting)

    async def scenario() -> None:
        finance = connect(demo["finance"])
        await finance.connect()
        assert await receive(finance) == {"type": "count", "seq": 1, "open": 0}
        await database_sync_to_async(start)(client_for("analyst"), "invoice-sign-off", INVOICE)
        layer = get_channel_layer()
        assert layer is not None
        for _ in range(20):
            await layer.group_send(group_for("user", "finance"), {"type": "inbox.changed"})
        assert await receive(finance) == {"type": "count", "seq": 2, "open": 1}
        assert await finance.receive_nothing(timeout=0.3)
        assert counted == ["finance", "finance"]  # at connect, then once for the burst
        await finance.disconnect()

    async_to_sync(scenario)()


def test_a_count_that_fails_at_the_end_of_the_window_closes_the_socket_with_1011(
    demo: DemoUsers, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The count at a window's end runs in a task of its own: its failure (the database
    gone) reached nobody, and the socket stayed open with a count that no longer moved."""
    from channels.layers import get_channel_layer

    from approvals import consumers, services
    from approvals.live import group_for

    monkeypatch.setattr(consumers, "RECOUNT_S", 0.5)
    counts = iter([0])

    def failing(user: Any) -> int:
        try:
            return next(counts)
        except StopIteration:
            raise RuntimeError("the database did not answer") from None

    monkeypatch.setattr(services, "open_count", failing)

    async def scenario() -> None:
        finance = connect(demo["finance"])
        await finance.connect()
        assert await receive(finance) == {"type": "count", "seq": 1, "open": 0}
        layer = get_channel_layer()
        assert layer is not None
        await layer.group_send(group_for("user", "finance"), {"type": "inbox.changed"})
        assert await finance.receive_output(timeout=5) == {"type": "websocket.close",
                                                           "code": 1011}  # fmt: skip

    async_to_sync(scenario)()


def test_a_socket_without_a_login_is_closed_with_4401() -> None:
    async def scenario() -> None:
        assert await turned_away(connect(AnonymousUser())) == 4401

    async_to_sync(scenario)()


def test_the_asgi_application_reads_the_session_cookie_and_checks_the_origin(
    demo: DemoUsers,
) -> None:
    from braid.asgi import application

    client = Client()
    client.force_login(demo["finance"])
    cookie = f"sessionid={client.cookies['sessionid'].value}".encode()

    async def scenario() -> None:
        good = WebsocketCommunicator(
            application,
            "/ws/inbox/",
            headers=[(b"cookie", cookie), (b"origin", b"http://127.0.0.1")],
        )
        assert (await good.connect())[0]
        assert await receive(good) == {"type": "count", "seq": 1, "open": 0}
        await good.disconnect()
        foreign = WebsocketCommunicator(
            application,
            "/ws/inbox/",
            headers=[(b"cookie", cookie), (b"origin", b"http://evil.example")],
        )
        assert (await foreign.connect())[0] is False

    async_to_sync(scenario)()
