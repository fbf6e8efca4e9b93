"""Every socket under attack: malformed frames, no session, a foreign Origin, another
user's run, and a socket still open after its session logged out.

Through the real ASGI stack (braid.asgi.application) with channels' WebsocketCommunicator;
the logout case also runs against a real `braid serve` (tests/browser, or below when
Daphne can be started).
"""

import asyncio
import json
import logging
import time
from typing import Any

import pytest
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import User
from django.test import Client

from braid.asgi import application
from engine import live
from tests.django.durable_driver import drain
from tests.django.fixture_types import ClientFor, DemoUsers
from tests.django.socket_helpers import turned_away
from tests.django.test_monitor__sockets import ORIGIN, start
from web import sockets as web_sockets

pytestmark = pytest.mark.django_db(transaction=True)

DEEP = 100_000
# name -> what the client sends (text or bytes)
FRAMES: dict[str, dict[str, Any]] = {
    "binary": {"bytes_data": b"\x00\x01\xff" * 100},
    "not JSON": {"text_data": "{'type': 'resync'}"},
    "huge": {"text_data": json.dumps({"type": "resync", "pad": "x" * 1_000_000})},
    "nested 100k": {"text_data": "[" * DEEP + "]" * DEEP},
    "nested 2k": {"text_data": "[" * 2000 + "]" * 2000},
    "a lone surrogate": {"text_data": '{"type": "\\ud800"}'},
    "NaN": {"text_data": '{"type": NaN}'},
    "a list": {"text_data": "[1, 2]"},
    "a number": {"text_data": "7"},
    "null": {"text_data": "null"},
    "a wrong type": {"text_data": '{"type": ["resync"]}'},
    "an unknown type": {"text_data": '{"type": "subscribe", "run": "*"}'},
}


FIRST_TYPES = ("snapshot", "counts", "count")  # what each socket sends first, in path order


def cookie(client: Client) -> tuple[bytes, bytes]:
    return (b"cookie", f"sessionid={client.cookies['sessionid'].value}".encode())


def socket_paths(run_id: str) -> list[str]:
    return [f"/ws/runs/{run_id}/", "/ws/runs/", "/ws/inbox/"]


async def open_socket(path: str, client: Client | None, origin: bytes = ORIGIN[1]) -> Any:
    headers = [(b"origin", origin)] + ([] if client is None else [cookie(client)])
    socket = WebsocketCommunicator(application, path, headers=headers)
    connected, code = await socket.connect(timeout=5)
    return socket, connected, code


def test_every_socket_answers_every_malformed_frame_with_an_error_and_stays_open(
    demo: DemoUsers, client_for: ClientFor
) -> None:
    run = start("b-and-d-or-e", {"urgent": True}, demo["admin"])
    admin = client_for("admin")

    async def scenario() -> dict[str, list[Any]]:
        answers: dict[str, list[Any]] = {}
        for path in socket_paths(str(run.pk)):
            socket, connected, _ = await open_socket(path, admin)
            assert connected, path
            first = await socket.receive_json_from(timeout=5)
            got = []
            for name, frame in FRAMES.items():
                await socket.send_to(**frame)
                reply = await socket.receive_json_from(timeout=5)
                got.append((name, reply["type"], reply["seq"] - first["seq"]))
            await socket.send_to(text_data=json.dumps({"type": "resync"}))
            again = await socket.receive_json_from(timeout=5)
            got.append(("resync", again["type"], again["seq"] - first["seq"]))
            answers[path] = got
            await socket.disconnect()
        return answers

    answers = asyncio.run(scenario())
    expected = [(name, "error", n) for n, name in enumerate(FRAMES, start=1)]
    for path, first_type in zip(socket_paths(str(run.pk)), FIRST_TYPES, strict=True):
        assert answers[path] == [*expected, ("resync", first_type, len(FRAMES) + 1)], path


def test_the_error_says_what_a_client_may_send(demo: DemoUsers, client_for: ClientFor) -> None:
    async def scenario() -> list[dict[str, Any]]:
        socket, connected, _ = await open_socket("/ws/inbox/", client_for("finance"))
        assert connected
        await socket.receive_json_from(timeout=5)
        replies = []
        for name in ("binary", "huge", "nested 100k", "a lone surrogate", "an unknown type"):
            await socket.send_to(**FRAMES[name])
            replies.append(await socket.receive_json_from(timeout=5))
        await socket.disconnect()
        return replies

    details = [(reply["type"], reply["detail"]) for reply in asyncio.run(scenario())]
    assert details == [
        ("error", "send JSON text, not binary"),
        ("error", "a message is at most 4,096 characters"),
        ("error", "a message is at most 4,096 characters"),
        ("error", "not JSON: a lone surrogate (\\ud800) is not Unicode text"),
        ("error", 'the only message a client sends is {"type": "resync"}'),
    ]


def test_every_socket_refuses_no_session_and_a_foreign_origin(
    demo: DemoUsers, client_for: ClientFor
) -> None:
    run = start("b-and-d-or-e", {"urgent": True}, demo["analyst"])

    async def outcome(path: str, client: Client | None, origin: bytes) -> Any:
        socket, connected, code = await open_socket(path, client, origin)
        if not connected:
            return ("refused", code)
        message = await socket.receive_output(timeout=5)
        await socket.disconnect()
        return (message["type"], message.get("code"))

    async def scenario() -> dict[str, list[Any]]:
        result = {}
        for path in socket_paths(str(run.pk)):
            result[path] = [
                await outcome(path, None, ORIGIN[1]),
                await outcome(path, client_for("analyst"), b"http://evil.example"),
                await outcome(path, client_for("analyst"), b"http://127.0.0.1.evil.example"),
                await outcome(path, client_for("analyst"), b"null"),
            ]
        return result

    refused = ("refused", 1000)  # the Origin check closes the handshake before any consumer
    # Without a session the consumer accepts and closes at once, so a browser reads 4401.
    for path, outcomes in asyncio.run(scenario()).items():
        assert outcomes == [("websocket.close", 4401), refused, refused, refused], path


def test_another_users_run_is_refused_to_its_socket_but_not_to_its_approvers(
    demo: DemoUsers, client_for: ClientFor
) -> None:
    run = start("invoice-sign-off", {"invoice": {"id": "I", "amount": 9, "vendor": "V"}},
                demo["analyst"])  # fmt: skip
    drain(run)

    async def code(user: str) -> Any:
        socket, connected, refused = await open_socket(f"/ws/runs/{run.pk}/", client_for(user))
        if not connected:
            return refused
        message = await socket.receive_output(timeout=5)
        await socket.disconnect()
        return message.get("code") or json.loads(message["text"])["type"]

    async def scenario() -> list[Any]:
        return [await code(user) for user in ("analyst", "finance", "legal", "admin")]

    # finance and legal are asked to decide this run, so it is theirs to see (docs/permissions.md)
    assert asyncio.run(scenario()) == ["snapshot", "snapshot", "snapshot", "snapshot"]
    other = start("b-and-d-or-e", {"urgent": True}, demo["admin"])

    async def foreign() -> list[Any]:
        result = []
        for user in ("analyst", "finance"):
            socket = WebsocketCommunicator(
                application, f"/ws/runs/{other.pk}/", headers=[ORIGIN, cookie(client_for(user))]
            )
            result.append(await turned_away(socket))
        return result

    assert asyncio.run(foreign()) == [4403, 4403]


def test_logging_out_closes_every_socket_of_that_session_within_five_seconds(
    demo: DemoUsers, client_for: ClientFor
) -> None:
    run = start("b-and-d-or-e", {"urgent": True}, demo["admin"])
    leaving = Client()
    leaving.force_login(demo["admin"])
    staying = client_for("admin")  # the same user in another browser: unaffected

    async def scenario() -> tuple[list[Any], float, list[Any]]:
        mine: list[Any] = []
        theirs: list[Any] = []
        for path in socket_paths(str(run.pk)):
            for client, sockets in ((leaving, mine), (staying, theirs)):
                socket, connected, _ = await open_socket(path, client)
                assert connected
                await socket.receive_json_from(timeout=5)
                sockets.append(socket)
        began = time.monotonic()
        response = await asyncio.to_thread(leaving.post, "/logout/")
        assert response.status_code == 302
        closes = [await socket.receive_output(timeout=5) for socket in mine]
        elapsed = time.monotonic() - began
        still = []
        for socket in theirs:
            await socket.send_to(text_data=json.dumps({"type": "resync"}))
            still.append((await socket.receive_json_from(timeout=5))["type"])
            await socket.disconnect()
        return [(c["type"], c.get("code")) for c in closes], elapsed, still

    closes, elapsed, still = asyncio.run(scenario())
    assert closes == [("websocket.close", 4401)] * 3
    assert elapsed < 5
    assert still == ["snapshot", "counts", "count"]


def test_after_logout_the_old_cookie_opens_no_socket_and_no_origin_opens_none(
    demo: DemoUsers, client_for: ClientFor
) -> None:
    leaving = client_for("finance")
    old = cookie(leaving)
    leaving.post("/logout/")

    async def scenario() -> list[Any]:
        codes = []
        for path in ("/ws/runs/", "/ws/inbox/"):
            socket = WebsocketCommunicator(application, path, headers=[ORIGIN, old])
            codes.append(await turned_away(socket))
            bare = WebsocketCommunicator(application, path, headers=[cookie(client_for("admin"))])
            codes.append(await turned_away(bare))
        return codes

    assert asyncio.run(scenario()) == [4401, 1000, 4401, 1000]


def test_deactivating_deleting_or_new_password_closes_all_the_users_sockets(
    demo: DemoUsers, client_for: ClientFor
) -> None:
    doomed = User.objects.create_user("temp", password="braid-temp-pw")
    gone = User.objects.create_user("gone", password="braid-gone-pw")
    rekeyed = User.objects.create_user("rekeyed", password="braid-rekeyed-pw")
    sessions = {}
    for user in (doomed, gone, rekeyed):
        client = Client()
        client.force_login(user)
        sessions[user.username] = client

    async def scenario() -> tuple[list[Any], float]:
        sockets = []
        for client in (*sessions.values(), sessions["temp"]):  # two sockets of one user
            socket, connected, _ = await open_socket("/ws/inbox/", client)
            assert connected
            await socket.receive_json_from(timeout=5)
            sockets.append(socket)
        began = time.monotonic()

        def revoke() -> None:
            doomed.is_active = False
            doomed.save()
            gone.delete()
            rekeyed.set_password("a new password")
            rekeyed.save()

        await asyncio.to_thread(revoke)
        closes = [await socket.receive_output(timeout=5) for socket in sockets]
        return [(c["type"], c.get("code")) for c in closes], time.monotonic() - began

    closes, elapsed = asyncio.run(scenario())
    assert closes == [("websocket.close", 4401)] * 4
    assert elapsed < 5


def test_saving_a_user_without_a_new_password_closes_nothing(
    demo: DemoUsers, client_for: ClientFor
) -> None:
    finance = client_for("finance")

    async def scenario() -> Any:
        socket, connected, _ = await open_socket("/ws/inbox/", finance)
        assert connected
        await socket.receive_json_from(timeout=5)
        user = await asyncio.to_thread(User.objects.get, username="finance")
        user.first_name = "Fin"
        await asyncio.to_thread(user.save)
        await asyncio.to_thread(client_for, "finance")  # a login elsewhere stamps last_login
        await asyncio.sleep(0.3)  # past the publisher's flush, had anything been sent
        await socket.send_to(text_data='{"type": "resync"}')
        answer = await socket.receive_json_from(timeout=5)
        await socket.disconnect()
        return answer["type"]

    assert asyncio.run(scenario()) == "count"


def test_a_new_users_first_password_closes_nobodys_socket(monkeypatch: pytest.MonkeyPatch) -> None:
    # get_or_create then set_password (as `braid demo` does) replaces an empty password:
    # it logged nobody in, so it is not a password change. A user id is reused after a
    # test's flush, and such a close reached a later test's socket of the same id.
    sent: list[tuple[set[str], str]] = []
    monkeypatch.setattr(
        live, "notify_after_commit", lambda groups, kind: sent.append((groups, kind))
    )
    user, _ = User.objects.get_or_create(username="fresh")
    user.set_password("braid-fresh-pw")
    user.save()
    assert sent == []
    user.set_password("braid-other-pw")
    user.save()
    assert sent == [({web_sockets.group_of_user(user.pk)}, web_sockets.SESSION_ENDED)]


UNROUTED = ["/ws/nothing/", "/ws/runs/a/b/", "/ws/inbox/extra/", "/ws/", "/", "/ws/runs",
            "/ws/" + "x" * 5000 + "/", "/ws/\x00/"]  # fmt: skip
NO_SUCH_RUN = ["/ws/runs/not-a-uuid/", "/ws/runs/\x00/", f"/ws/runs/{'9' * 22}/"]


def test_a_handshake_to_any_other_path_is_refused_with_4404_and_logs_no_error(
    demo: DemoUsers, client_for: ClientFor, caplog: pytest.LogCaptureFixture
) -> None:
    async def scenario() -> list[Any]:
        codes = []
        for path in UNROUTED + NO_SUCH_RUN:
            for client in (None, client_for("finance")):
                socket, connected, code = await open_socket(path, client)
                if connected:  # accepted only to be closed with a code the page can read
                    code = (await socket.receive_output(timeout=5)).get("code")
                codes.append((path, connected, code))
        return codes

    with caplog.at_level(logging.WARNING):
        codes = asyncio.run(scenario())
    # A path no route serves is refused alike to everyone at the handshake; a run socket
    # asks who you are (4401) before it looks for the run, and says so in a close frame.
    assert codes == [
        *[(path, False, code) for path in UNROUTED for code in (4404, 4404)],
        *[(path, True, code) for path in NO_SUCH_RUN for code in (4401, 4404)],
    ]
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR] == []


def test_a_session_cookie_no_session_key_can_be_opens_no_socket_and_logs_no_error(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def scenario() -> list[Any]:
        codes = []
        for cookie in (b"sessionid=abcdefgh\x00ij", b"sessionid=" + b"a" * 5000):
            for path in ("/ws/inbox/", "/ws/runs/"):
                socket = WebsocketCommunicator(
                    application, path, headers=[ORIGIN, (b"cookie", cookie)]
                )
                codes.append(await turned_away(socket))
        return codes

    with caplog.at_level(logging.WARNING):
        assert asyncio.run(scenario()) == [4401] * 4
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR] == []
