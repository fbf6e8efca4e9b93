"""HTTP into Django: its WSGI handler in a fixed pool of threads, under Daphne.

Django's ASGI handler runs each request in a thread made for it (asgiref's
ThreadSensitiveContext), so a request that reads the database opens a connection of its own
(CONN_MAX_AGE cannot keep one), and it crosses between that thread and the event loop for
every middleware's sync half. Here that cost 6 to 20 ms an API call (docs/operations.md).
The WSGI handler in a pool of threads crosses once a request, and each thread keeps its
connection. The pool also bounds how many requests do work at once (BRAID_HTTP_THREADS);
the others wait for a thread. WebSockets still go through Channels.
"""

from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from concurrent.futures import ThreadPoolExecutor
from typing import IO, Any

from asgiref.sync import sync_to_async
from asgiref.wsgi import WsgiToAsgiInstance

type Scope = MutableMapping[str, Any]
type Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
type Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
type WsgiApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]


class PooledWsgi:
    """An ASGI application for HTTP that runs a WSGI application in `threads` threads."""

    def __init__(self, wsgi_application: WsgiApp, threads: int) -> None:
        if threads < 1:
            raise ValueError(f"the HTTP pool needs at least one thread, not {threads}")
        self.wsgi_application = wsgi_application
        self.executor = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="braid-http")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await Exchange(self.wsgi_application, self.executor)(scope, receive, send)


class Exchange(WsgiToAsgiInstance):  # asgiref.wsgi has no annotations: the ignores below
    """One request: asgiref reads its body on the event loop and builds the WSGI environ;
    the WSGI call and its response run in a thread of the pool."""

    def __init__(self, wsgi_application: WsgiApp, executor: ThreadPoolExecutor) -> None:
        super().__init__(wsgi_application)  # type: ignore[no-untyped-call]
        self.executor = executor

    async def run_wsgi_app(self, body: IO[bytes]) -> None:
        # sync_to_async with an executor marks the thread as its loop's, so async_to_sync
        # in a view (a channel layer's group_send) runs on Daphne's loop, as before.
        respond = sync_to_async(self.respond, thread_sensitive=False, executor=self.executor)
        await respond(body)

    def respond(self, body: IO[bytes]) -> None:
        """Call the WSGI application and send its response; close it, as a WSGI server must
        (Django sends request_finished there, which recycles old database connections)."""
        try:
            environ = self.build_environ(self.scope, body)  # type: ignore[no-untyped-call]
        except ValueError:  # too many duplicate headers (asgiref's limit)
            self.sync_send({"type": "http.response.start", "status": 400,
                            "headers": [(b"content-type", b"text/plain")]})  # fmt: skip
            self.sync_send({"type": "http.response.body", "body": b"Bad Request"})
            return
        response = self.wsgi_application(environ, self.start_response)
        try:
            for chunk in response:
                self.send_start()
                if chunk:
                    self.sync_send({"type": "http.response.body", "body": chunk,
                                    "more_body": True})  # fmt: skip
            self.send_start()
            self.sync_send({"type": "http.response.body"})
        finally:
            close = getattr(response, "close", None)
            if close is not None:
                close()

    def send_start(self) -> None:
        """Send the status and headers once, before the first part of the body."""
        if not self.response_started:
            self.response_started = True
            self.sync_send(self.response_start)
