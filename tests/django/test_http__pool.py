"""HTTP into Django through braid.http: a fixed pool of threads that keep their database
connections, one thread crossing a request, and the WSGI contract kept (body, close)."""

import asyncio
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.signals import request_finished, request_started
from django.core.wsgi import get_wsgi_application
from django.db.backends.base.base import BaseDatabaseWrapper
from django.test import Client

from braid.http import PooledWsgi

type Sent = list[dict[str, Any]]


def scope_of(method: str, path: str, headers: list[tuple[bytes, bytes]]) -> dict[str, Any]:
    return {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1",
            "method": method, "scheme": "http", "path": path, "raw_path": path.encode(),
            "query_string": b"", "root_path": "", "headers": [(b"host", b"testserver"), *headers],
            "client": ("127.0.0.1", 50000), "server": ("testserver", 80)}  # fmt: skip


async def exchange(app: Any, method: str, path: str, body: bytes = b"",
                   headers: list[tuple[bytes, bytes]] | None = None) -> Sent:  # fmt: skip
    """Send one request to an ASGI app, the body in 3 parts; return what it sent back."""
    incoming: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
    third = max(1, len(body) // 3)
    parts = [body[i : i + third] for i in range(0, len(body), third)] or [b""]
    for n, part in enumerate(parts):
        incoming.put_nowait({"type": "http.request", "body": part,
                             "more_body": n < len(parts) - 1})  # fmt: skip
    sent: Sent = []

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await app(scope_of(method, path, headers or []), incoming.get, send)
    return sent


def status_and_body(sent: Sent) -> tuple[int, bytes]:
    assert sent[0]["type"] == "http.response.start"
    assert not sent[-1].get("more_body") and all(m.get("more_body") for m in sent[1:-1])
    return sent[0]["status"], b"".join(m.get("body", b"") for m in sent[1:])


class Recorded:
    """A WSGI app that echoes the body's length and the environ, and records its close()."""

    def __init__(self) -> None:
        self.closed = 0
        self.threads: set[str] = set()

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Iterator[bytes]:
        self.threads.add(threading.current_thread().name)
        length = len(environ["wsgi.input"].read())
        start_response("200 OK", [("Content-Type", "text/plain")])
        return self.body(environ, length)

    def body(self, environ: dict[str, Any], length: int) -> Iterator[bytes]:
        try:
            yield f"{environ['REQUEST_METHOD']} {environ['PATH_INFO']} {length}".encode()
            yield b""  # an empty part is not sent
            yield f" {environ['REMOTE_ADDR']} {environ.get('HTTP_X_TRY', '-')}".encode()
        finally:
            self.closed += 1


def test_the_pool_passes_a_body_over_its_memory_limit_whole_and_closes_the_response() -> None:
    app = Recorded()
    pooled = PooledWsgi(app, threads=2)
    body = b"x" * 200_000  # asgiref spools bodies over 64 KiB to a file
    sent = asyncio.run(exchange(pooled, "POST", "/echo", body, [(b"x-try", b"1")]))
    assert status_and_body(sent) == (200, b"POST /echo 200000 127.0.0.1 1")
    assert [m["type"] for m in sent] == ["http.response.start"] + ["http.response.body"] * 3
    assert app.closed == 1


def test_twelve_requests_at_once_run_on_two_threads_when_the_pool_has_two() -> None:
    app = Recorded()
    pooled = PooledWsgi(app, threads=2)

    async def all_at_once() -> list[Sent]:
        return await asyncio.gather(*(exchange(pooled, "GET", f"/n{i}") for i in range(12)))

    answers = asyncio.run(all_at_once())
    assert [status_and_body(s) for s in answers] == [
        (200, f"GET /n{i} 0 127.0.0.1 -".encode()) for i in range(12)
    ]
    assert app.threads <= {"braid-http_0", "braid-http_1"} and app.closed == 12


def test_too_many_duplicate_headers_get_a_400_and_never_reach_the_app() -> None:
    app = Recorded()
    headers = [(b"x-try", b"1")] * 101
    sent = asyncio.run(exchange(PooledWsgi(app, threads=1), "GET", "/", headers=headers))
    assert status_and_body(sent) == (400, b"Bad Request")
    assert app.threads == set()


def test_a_pool_of_no_threads_is_refused_with_the_reason() -> None:
    with pytest.raises(ValueError, match="at least one thread, not 0"):
        PooledWsgi(Recorded(), threads=0)


@pytest.mark.django_db(transaction=True)
def test_django_through_the_pool_answers_as_its_test_client_and_keeps_each_threads_connection(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    user = User.objects.create_user("ann", password="unused-password-123")
    client = Client()
    client.force_login(user)
    expected = client.get("/api/me/notifications/")
    cookie = f"sessionid={client.cookies['sessionid'].value}".encode()
    connects: list[str] = []
    connect = BaseDatabaseWrapper.connect

    def counted(self: BaseDatabaseWrapper) -> None:
        connects.append(threading.current_thread().name)
        connect(self)

    monkeypatch.setattr(BaseDatabaseWrapper, "connect", counted)
    seen: list[str] = []

    def started(**_: object) -> None:
        seen.append("started")

    def finished(**_: object) -> None:
        seen.append("finished")

    request_started.connect(started)
    request_finished.connect(finished)
    pooled = PooledWsgi(get_wsgi_application(), threads=2)

    async def twelve() -> list[Sent]:
        calls = [exchange(pooled, "GET", "/api/me/notifications/", headers=[(b"cookie", cookie)])
                 for _ in range(12)]  # fmt: skip
        return await asyncio.gather(*calls)

    try:
        answers = asyncio.run(twelve())
    finally:
        request_started.disconnect(started)
        request_finished.disconnect(finished)
    assert {status_and_body(s) for s in answers} == {(200, expected.content)}
    assert seen.count("started") == seen.count("finished") == 12
    # The old handler opened a connection per request (a thread per request): 12 here.
    assert len(connects) <= 2 and set(connects) <= {"braid-http_0", "braid-http_1"}
