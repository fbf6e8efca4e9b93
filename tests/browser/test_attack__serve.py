"""The sockets of a real `braid serve` (Daphne) under attack, without a browser.

Daphne itself refuses a message over 1 MiB (it fails the connection) before any consumer
reads it; the consumers answer the rest with an error and stay open; the server keeps
serving; logging out closes every socket of that session (all three routes) within 5 s;
a handshake to a path no socket serves is refused (403) without an error in the log; and a
run socket for no such run is accepted only to be closed with 4404, which a page can read.
"""

import json
import time
import urllib.request
from contextlib import ExitStack
from pathlib import Path

import pytest
from websockets.exceptions import ConnectionClosed, InvalidStatus
from websockets.sync.client import ClientConnection, connect

from tests.processes import Browserless, socket_headers

pytestmark = pytest.mark.browser


def open_socket(stack: ExitStack, client: Browserless, path: str) -> ClientConnection:
    """Connect as the client's session for the stack's duration; read the first message."""
    url = client.base_url.replace("http://", "ws://") + path
    headers = socket_headers(client)
    socket = stack.enter_context(
        connect(url, additional_headers=headers, open_timeout=10, max_size=None)
    )
    json.loads(socket.recv(timeout=10))  # the snapshot or first count
    return socket


def close_code(socket: ClientConnection, seconds: float) -> int | str:
    """Wait for the server to close the socket; return its close code, "dropped" when it
    closed the connection without a close frame, "open" when it did not close in time."""
    deadline = time.monotonic() + seconds
    try:
        while time.monotonic() < deadline:
            socket.recv(timeout=max(0.05, deadline - time.monotonic()))
    except ConnectionClosed as closed:
        return closed.rcvd.code if closed.rcvd else "dropped"
    except TimeoutError:
        return "open"
    return "open"


def test_daphne_and_the_consumers_survive_malformed_frames(braid_server: str) -> None:
    admin = Browserless(braid_server)
    admin.login("admin", "braid-admin")
    replies: list[object] = []
    with ExitStack() as stack:
        for path in ("/ws/runs/", "/ws/inbox/"):
            socket = open_socket(stack, admin, path)
            for frame in (b"\x00\xff" * 10, "[" * 3000 + "]" * 3000, '{"type": "\\udc00"}'):
                socket.send(frame)
                replies.append(json.loads(socket.recv(timeout=10))["type"])
            # Daphne fails the connection (1009) while the client is still sending: the
            # close frame is lost with the reset, so the client sees the connection dropped,
            # during the send itself when the reset comes first.
            try:
                socket.send("x" * (2 * 1024 * 1024))
            except ConnectionClosed as closed:
                replies.append(closed.rcvd.code if closed.rcvd else "dropped")
            else:
                replies.append(close_code(socket, 10))
        with urllib.request.urlopen(braid_server + "/healthz", timeout=10) as health:
            healthy = json.loads(health.read())["ok"]
        open_socket(stack, admin, "/ws/inbox/")  # the server still accepts sockets
    assert replies == ["error", "error", "error", "dropped"] * 2
    assert healthy is True


def test_logging_out_closes_all_three_sockets_of_the_session_within_5_s(braid_server: str) -> None:
    analyst = Browserless(braid_server)
    analyst.login("analyst", "braid-analyst")
    status, run = analyst.post_json("/api/runs/", {"flow": "staged-gathers", "input": {}})
    assert status == 201
    paths = [f"/ws/runs/{run['id']}/", "/ws/runs/", "/ws/inbox/"]
    token = next(c.value or "" for c in analyst.cookies if c.name == "csrftoken")
    logout = urllib.request.Request(
        braid_server + "/logout/", data=b"", method="POST",
        headers={"X-CSRFToken": token, "Referer": braid_server + "/"},
    )  # fmt: skip
    with ExitStack() as stack:
        sockets = [open_socket(stack, analyst, path) for path in paths]
        began = time.monotonic()
        with analyst.opener.open(logout, timeout=10) as response:
            landed = response.url
        codes = [close_code(socket, 5) for socket in sockets]
        elapsed = time.monotonic() - began
    assert landed == braid_server + "/login/"
    assert codes == [4401, 4401, 4401]
    assert elapsed < 5


def handshake_status(client: Browserless, path: str) -> int | str:
    """Open a socket as the client's session; return the HTTP status the handshake was
    refused with, else what followed the accept: "open" (a first message) or the close
    code."""
    url = client.base_url.replace("http://", "ws://") + path
    try:
        with connect(url, additional_headers=socket_headers(client), open_timeout=10) as socket:
            socket.recv(timeout=10)
            return "open"
    except InvalidStatus as refused:
        return refused.response.status_code
    except ConnectionClosed as closed:
        return closed.rcvd.code if closed.rcvd else "dropped"


def test_a_handshake_to_a_path_no_socket_serves_is_refused_and_logs_no_error(
    braid_server: str, braid_server_dir: Path
) -> None:
    log = braid_server_dir / "serve.log"
    finance = Browserless(braid_server)
    finance.login("finance", "braid-finance")
    logged_before = log.stat().st_size
    paths = ["/ws/nothing/", "/ws/runs/a/b/", "/ws/inbox/extra/", "/ws/", "/ws/runs/not-a-run/"]
    statuses = [handshake_status(finance, path) for path in paths]
    statuses.append(handshake_status(finance, "/ws/inbox/"))  # the server still serves sockets
    time.sleep(0.5)  # Daphne writes its access and error lines after answering
    with log.open("rb") as lines:
        lines.seek(logged_before)
        written = lines.read().decode(errors="replace")
    assert statuses == [403, 403, 403, 403, 4404, "open"]
    alarming = ("Traceback", "Exception", "Error", " 500")
    assert [line for line in written.splitlines() if any(w in line for w in alarming)] == []
