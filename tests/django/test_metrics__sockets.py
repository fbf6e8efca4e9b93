"""braid_websockets: each accepted socket counts while it is open, a refused one never."""

import pytest
from asgiref.sync import async_to_sync
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.test import Client
from pytest_django import Settings

from braid.asgi import application
from engine.runtime import runs
from runs import services
from tests.django.fixture_types import ClientFor, DemoUsers
from tests.django.metric_samples import TOKEN, Samples, scrape
from tests.django.socket_helpers import turned_away

pytestmark = pytest.mark.django_db(transaction=True)


async def open_socket(path: str, client: Client | None) -> tuple[WebsocketCommunicator, bool]:
    """Open a socket as the client's session (anonymous without one), from the right origin."""
    headers = [(b"origin", b"http://127.0.0.1:8000")]
    if client is not None:
        headers.append((b"cookie", f"sessionid={client.cookies['sessionid'].value}".encode()))
    socket = WebsocketCommunicator(application, path, headers=headers)
    connected, _ = await socket.connect(timeout=5)
    return socket, connected


def sockets_open(samples: Samples) -> dict[str, float]:
    """Return braid_websockets by socket (a socket never opened in this process: 0)."""
    return {kind: samples.get(("braid_websockets", frozenset({("socket", kind)})), 0.0)
            for kind in ("run", "runs", "inbox")}  # fmt: skip


def test_open_sockets_are_counted_by_socket_until_they_close(
    demo: DemoUsers, client_for: ClientFor, settings: Settings
) -> None:
    settings.BRAID_METRICS_TOKEN = TOKEN
    admin, finance = client_for("admin"), client_for("finance")
    finance.get("/inbox/")  # the session's cookie
    admin.get("/runs/")
    version = services.latest_version("b-and-d-or-e")
    run = runs.create_run(services.resolve_graphs(version.graph), "b-and-d-or-e v1",
                          {"urgent": True}, version, demo["admin"])  # fmt: skip

    async def scenario() -> list[dict[str, float]]:
        read = database_sync_to_async(lambda: sockets_open(scrape()))
        seen = [await read()]
        inbox, inbox_ok = await open_socket("/ws/inbox/", finance)
        runs, runs_ok = await open_socket("/ws/runs/", admin)
        one, one_ok = await open_socket(f"/ws/runs/{run.pk}/", admin)
        origin = [(b"origin", b"http://127.0.0.1:8000")]
        refused = await turned_away(WebsocketCommunicator(application, "/ws/runs/", origin))
        assert (inbox_ok, runs_ok, one_ok, refused) == (True, True, True, 4401)  # anonymous
        seen.append(await read())
        await inbox.disconnect()
        await one.disconnect()
        seen.append(await read())
        await runs.disconnect()
        seen.append(await read())
        return seen

    first, opened, two_closed, all_closed = async_to_sync(scenario)()
    assert {kind: opened[kind] - first[kind] for kind in first} == {
        "run": 1.0, "runs": 1.0, "inbox": 1.0
    }  # fmt: skip
    assert {kind: two_closed[kind] - first[kind] for kind in first} == {
        "run": 0.0, "runs": 1.0, "inbox": 0.0
    }  # fmt: skip
    assert all_closed == first
