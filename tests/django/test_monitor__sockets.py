"""The monitor's sockets through the real ASGI stack: login, permission, Origin, push."""

import asyncio
import json
from typing import Any

import pytest
from channels.testing import WebsocketCommunicator
from django.test import Client
from pytest_django import Settings

from braid.asgi import application
from designer.models import FlowVersion
from engine.models import Run
from engine.runtime import runs
from runs import services
from tests.django.durable_driver import drain
from tests.django.fixture_types import ClientFor, DemoUsers
from tests.django.socket_helpers import turned_away

ORIGIN = (b"origin", b"http://127.0.0.1:8000")
pytestmark = pytest.mark.django_db(transaction=True)


def start(flow: str, data: dict[str, Any], user: Any = None) -> Run:
    version = FlowVersion.objects.filter(flow__slug=flow).order_by("-number").first()
    assert version is not None
    graphs = services.resolve_graphs(version.graph)
    return runs.create_run(graphs, f"{flow} v1", data, version, user)


def headers(
    client: Client | None, origin: tuple[bytes, bytes] = ORIGIN
) -> list[tuple[bytes, bytes]]:
    cookie = (
        []
        if client is None
        else [(b"cookie", f"sessionid={client.cookies['sessionid'].value}".encode())]
    )
    return [origin, *cookie]


async def connect(
    path: str, client: Client | None, **kw: Any
) -> tuple[WebsocketCommunicator, bool, Any]:
    socket = WebsocketCommunicator(application, path, headers=headers(client, **kw))
    connected, code = await socket.connect(timeout=5)
    return socket, connected, code


async def closed_with(path: str, client: Client | None, **kw: Any) -> Any:
    return await turned_away(
        WebsocketCommunicator(application, path, headers=headers(client, **kw))
    )


def test_a_socket_refuses_the_anonymous_a_foreign_run_an_unknown_run_and_a_wrong_origin(
    demo: DemoUsers, client_for: ClientFor
) -> None:
    run = start("b-and-d-or-e", {"urgent": True}, demo["admin"])
    path = f"/ws/runs/{run.pk}/"

    async def scenario() -> list[Any]:
        return [
            await closed_with(path, None),
            await closed_with(path, client_for("analyst")),
            await closed_with(
                "/ws/runs/6f9619ff-8b86-d011-b42d-00cf4fc964ff/", client_for("admin")
            ),
            await closed_with("/ws/runs/not-a-uuid/", client_for("admin")),
            await closed_with(
                path, client_for("admin"), origin=(b"origin", b"http://evil.example")
            ),
        ]

    anonymous, foreign, unknown, malformed, wrong_origin = asyncio.run(scenario())
    assert (anonymous, foreign, unknown, malformed) == (4401, 4403, 4404, 4404)
    assert wrong_origin in (403, 1000, None)  # the Origin check denies the handshake itself


def test_a_run_socket_sends_a_snapshot_then_coalesced_deltas_in_sequence(
    demo: DemoUsers, client_for: ClientFor
) -> None:
    run = start("b-and-d-or-e", {"urgent": False}, demo["admin"])

    async def scenario() -> tuple[dict[str, Any], list[dict[str, Any]], dict[str, Any]]:
        socket, connected, _ = await connect(f"/ws/runs/{run.pk}/", client_for("admin"))
        assert connected
        snapshot = await socket.receive_json_from(timeout=5)
        await asyncio.to_thread(drain, run)
        deltas = []
        while True:
            delta = await socket.receive_json_from(timeout=5)
            deltas.append(delta)
            if delta["status"] == "completed":
                break
        await socket.send_to(text_data=json.dumps({"type": "resync"}))
        again = await socket.receive_json_from(timeout=5)
        await socket.send_to(text_data="{not json")
        error = await socket.receive_json_from(timeout=5)
        await socket.disconnect()
        return snapshot, deltas, {"again": again, "error": error}

    snapshot, deltas, rest = asyncio.run(scenario())
    assert (snapshot["type"], snapshot["seq"], snapshot["status"]) == ("snapshot", 1, "running")
    assert snapshot["colors"]["start"] == "pending"
    assert [d["seq"] for d in deltas] == list(range(2, 2 + len(deltas)))
    assert all(d["type"] == "delta" for d in deltas)
    assert len(deltas) <= 3, "a run that ends in one drain is pushed in a few coalesced deltas"
    final = {**snapshot["colors"]}
    reasons = {**snapshot["reasons"]}
    for delta in deltas:
        final.update(delta["colors"])
        reasons.update(delta["reasons"])
    assert final["d"] == "skipped" and final["e"] == "completed" and final["done"] == "completed"
    assert reasons["d"] == "Not taken: `check` chose `false`"
    again = rest["again"]
    assert (again["type"], again["seq"], again["status"]) == (
        "snapshot",
        2 + len(deltas),
        "completed",
    )
    assert again["colors"] == final
    assert rest["error"]["type"] == "error" and rest["error"]["seq"] == again["seq"] + 1
    # The execution tree: the snapshot's, with every delta's changed executions applied,
    # is the tree a fresh snapshot (and the API) derives.
    executions = {e["id"]: e for e in snapshot["executions"]}
    for delta in deltas:
        executions.update({e["id"]: e for e in delta.get("executions", [])})
    assert list(executions.values()) == again["executions"]
    assert [(e["id"], e["status"]) for e in again["executions"]] == [
        ("root:1", "completed"), ("root:1:split.left:1", "completed"),
        ("root:1:split.right:1", "completed"),
    ]  # fmt: skip
    api = client_for("admin").get(f"/api/runs/{run.pk}/executions/").json()["executions"]
    assert api == again["executions"]


def test_the_runs_socket_counts_runs_and_sends_the_rows_that_changed(
    demo: DemoUsers, client_for: ClientFor, settings: Settings
) -> None:
    settings.BRAID_LIVE = False  # the first run is there before the socket, unannounced
    start("staged-gathers", {}, demo["analyst"])
    start("staged-gathers", {}, demo["admin"])  # not the analyst's: not counted for them
    settings.BRAID_LIVE = True

    async def scenario() -> tuple[dict[str, Any], list[dict[str, Any]], dict[str, Any]]:
        socket, connected, _ = await connect("/ws/runs/", client_for("analyst"))
        assert connected
        first = await socket.receive_json_from(timeout=5)
        run = await asyncio.to_thread(start, "b-and-d-or-e", {"urgent": True}, demo["analyst"])
        counts = await socket.receive_json_from(timeout=5)
        rows = await socket.receive_json_from(timeout=5)
        await socket.disconnect()
        return first, [counts, rows], {"run": str(run.pk)}

    first, (counts, rows), started = asyncio.run(scenario())
    assert first == {"type": "counts", "counts": {"running": 1}, "seq": 1}
    assert counts == {"type": "counts", "counts": {"running": 2}, "seq": 2}
    assert rows["type"] == "runs" and rows["seq"] == 3
    assert [r["id"] for r in rows["runs"]] == [started["run"]]
