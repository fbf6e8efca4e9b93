"""Starting and talking to real Braid processes (Daphne, Celery workers) in tests."""

import contextlib
import http.cookiejar
import json
import os
import re
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


def free_port() -> int:
    """Return a TCP port on 127.0.0.1 that is free right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def manage(env: Mapping[str, str], *args: str) -> str:
    """Run `manage.py ARGS` with the environment and return its output; raise on failure."""
    result = subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=dict(env),
        capture_output=True,
        text=True,
        timeout=120,
    )
    if result.returncode != 0:
        raise AssertionError(f"manage.py {' '.join(args)} failed:\n{result.stdout}{result.stderr}")
    return result.stdout


@contextmanager
def running(
    command: list[str], env: Mapping[str, str], log: Path
) -> Iterator[subprocess.Popen[bytes]]:
    """Run a process for the duration of the block, logging to a file; stop it after."""
    with log.open("wb") as out:
        process = subprocess.Popen(command, cwd=ROOT, env=dict(env), stdout=out, stderr=out)
        try:
            yield process
        finally:
            process.terminate()
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def wait_for_port(
    port: int, process: subprocess.Popen[bytes], log: Path, seconds: float = 30
) -> None:
    """Wait until something listens on the port, failing early if the process died."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"process exited with {process.returncode}:\n{log.read_text()}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            time.sleep(0.2)
    raise AssertionError(f"nothing listened on {port} within {seconds} s:\n{log.read_text()}")


class Browserless:
    """A cookie-keeping HTTP client that logs in through Braid's login form."""

    def __init__(self, base_url: str) -> None:
        self.base_url = base_url
        self.cookies = http.cookiejar.CookieJar()
        handler = urllib.request.HTTPCookieProcessor(self.cookies)
        self.opener = urllib.request.build_opener(handler)

    def get(self, path: str) -> tuple[int, bytes]:
        """GET a path; return the status and body, including for error statuses."""
        try:
            with self.opener.open(self.base_url + path, timeout=15) as response:
                return response.status, response.read()
        except urllib.error.HTTPError as error:
            return error.code, error.read()

    def login(self, username: str, password: str) -> None:
        """Log in through the form, with its CSRF token."""
        with self.opener.open(self.login_request(username, password), timeout=15) as response:
            # Each person lands on their own page (braid/landing.py); a failed login stays
            # on /login/.
            landed = response.url.removeprefix(self.base_url)
            assert landed in ("/flows/", "/inbox/", "/runs/"), f"login failed: {response.url}"

    def login_request(self, username: str, password: str) -> urllib.request.Request:
        """Return the login form's POST, with the CSRF token of a fresh login page."""
        _, page = self.get("/login/")
        token = re.search(rb'name="csrfmiddlewaretoken" value="([^"]+)"', page)
        assert token, "the login page has no CSRF token"
        data = urllib.parse.urlencode(
            {"username": username, "password": password, "csrfmiddlewaretoken": token[1].decode()}
        ).encode()
        return urllib.request.Request(
            self.base_url + "/login/", data=data, headers={"Referer": self.base_url + "/login/"}
        )

    def post_json(
        self, path: str, body: object, headers: dict[str, str] | None = None,
        timeout: float = 15,
    ) -> tuple[int, Any]:  # fmt: skip
        """POST JSON with the session's CSRF token (and `headers`); return the status and
        decoded body (Any, as the test client's `.json()` gives it). `timeout`: longer than
        any deadline the server keeps itself, so that only a server that broke it fails."""
        token = next((c.value or "" for c in self.cookies if c.name == "csrftoken"), "")
        request = urllib.request.Request(
            self.base_url + path, data=json.dumps(body).encode(), method="POST",
            headers={"Content-Type": "application/json", "X-CSRFToken": token,
                     "Referer": self.base_url + "/", **(headers or {})},
        )  # fmt: skip
        try:
            with self.opener.open(request, timeout=timeout) as response:
                return response.status, json.loads(response.read())
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read() or b"null")

    def get_json(self, path: str) -> tuple[int, Any]:
        """GET a path and decode its JSON body (Any, as the test client's `.json()` gives it)."""
        status, body = self.get(path)
        return status, json.loads(body)

    def decide_for_run(self, run_id: str, decision: str = "approve") -> None:
        """Decide the run's first request in this (logged-in) approver's inbox; expect 202."""
        _, listing = self.get_json("/api/approvals/")
        request = next(r for r in listing["results"] if r["run"] == run_id)
        status, body = self.post_json(
            f"/api/approvals/{request['id']}/decide/", {"decision": decision}
        )
        assert status == 202, body


def base_env(**overrides: str) -> dict[str, str]:
    """Return this process's environment with Braid settings overridden."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("DJANGO_ALLOW")}
    env.pop("DATABASE_URL", None)
    env.pop("REDIS_URL", None)
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    env["DJANGO_HTTPS"] = "0"  # plain http on 127.0.0.1
    env.update(overrides)
    return env


@contextmanager
def braid_serving(var_dir: Path, port: int | None = None, **env_overrides: str) -> Iterator[str]:
    """Run Braid as `make run` does (`braid serve`: Daphne with the embedded worker) on a
    fresh SQLite database under var_dir, with the demo loaded; yield its base URL. `port`:
    one chosen before (a provider must know Braid's address first), else a free one."""
    with braid_server_process(var_dir, port, **env_overrides) as (base_url, _):
        yield base_url


@contextmanager
def braid_server_process(
    var_dir: Path, port: int | None = None, **env_overrides: str
) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """braid_serving, yielding the server's process too."""
    env = base_env(BRAID_VAR_DIR=str(var_dir), **env_overrides)
    manage(env, "migrate", "--noinput")
    manage(env, "braid", "demo")
    port = port or free_port()
    log = var_dir / "serve.log"
    command = [sys.executable, "manage.py", "braid", "serve", "--host", "127.0.0.1",
               "--port", str(port)]  # fmt: skip
    with running(command, env, log) as server:
        wait_for_port(port, server, log)
        yield f"http://127.0.0.1:{port}", server


def socket_headers(client: Browserless) -> dict[str, str]:
    """Return the headers a browser of this client's session sends on a websocket."""
    session = next(c.value for c in client.cookies if c.name == "sessionid")
    return {"Origin": client.base_url, "Cookie": f"sessionid={session}"}


def watch_run(
    client: Browserless, run_id: str, until: str, then: Callable[[], None] | None = None,
    seconds: float = 30,
) -> list[dict[str, Any]]:  # fmt: skip
    """Connect to /ws/runs/<id>/ as the client's user and collect messages until the run's
    status is `until`; return them (the snapshot first). `then` runs, in a thread, once
    the snapshot has arrived."""
    from websockets.sync.client import connect

    url = client.base_url.replace("http://", "ws://") + f"/ws/runs/{run_id}/"
    messages: list[dict[str, Any]] = []
    deadline = time.monotonic() + seconds
    with connect(url, additional_headers=socket_headers(client), open_timeout=10) as socket:
        while time.monotonic() < deadline:
            message = json.loads(socket.recv(timeout=max(0.1, deadline - time.monotonic())))
            messages.append(message)
            if len(messages) == 1 and then is not None:
                threading.Thread(target=then, daemon=True).start()
            if message.get("status") == until:
                return messages
    raise AssertionError(f"the run did not reach {until} within {seconds} s: {messages}")


@contextmanager
def scaled_serving(
    database_url: str, redis_url: str, var_dir: Path, workers: int, **env_overrides: str
) -> Iterator[str]:
    """Run scaled mode: Daphne plus `workers` separate `celery worker` processes over the
    database and Redis, migrated with the demo loaded; yield Daphne's base URL."""
    env = base_env(DATABASE_URL=database_url, REDIS_URL=redis_url, BRAID_VAR_DIR=str(var_dir),
                   **env_overrides)  # fmt: skip
    manage(env, "migrate", "--noinput")
    manage(env, "braid", "demo")
    port = free_port()
    daphne = [str(BIN / "daphne"), "-b", "127.0.0.1", "-p", str(port), "braid.asgi:application"]
    worker = [str(BIN / "celery"), "-A", "braid", "worker", "--concurrency=1", "--loglevel=INFO"]
    with contextlib.ExitStack() as stack:
        web = stack.enter_context(running(daphne, env, var_dir / "daphne.log"))
        for number in range(1, workers + 1):
            command = [*worker, f"--hostname=w{number}@%h"]
            stack.enter_context(running(command, env, var_dir / f"worker-{number}.log"))
        wait_for_port(port, web, var_dir / "daphne.log")
        yield f"http://127.0.0.1:{port}"
