"""The http.request action cannot reach what BRAID_HTTP_ALLOWLIST does not list.

Two real HTTP servers: one on 127.0.0.1 (listed, with its port, by the `listed` fixture)
that answers and redirects, one on 127.0.0.2 (a loopback address that is not listed) that
must never be reached. The attacks are the URL forms an attacker uses to name an internal
address, given directly and through a redirect from the allowed server, and a run whose
input chooses the URL. tests/django/test_attack__egress.py covers the empty default list,
ports, methods, headers and the limits.
"""

import json
import threading
from collections import Counter
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit
from urllib.parse import quote as percent

import pytest
from django.test import override_settings
from pytest_django import Settings

from engine import egress
from engine.actions import http_request
from engine.core.actions import ActionContext, ActionError
from engine.models import Run
from tests.django.durable_driver import drain
from tests.django.fixture_types import ClientFor, DemoUsers

CONTEXT = ActionContext("run", "call", "root:1", 1, "run/call/root:1/1")


class Recorder(BaseHTTPRequestHandler):
    """Answers /json, /big, /nan and /redirect?to=URL; counts each request by server and
    path."""

    hits: Counter[str] = Counter()

    def do_GET(self) -> None:
        address = self.server.server_address
        assert isinstance(address, tuple), address  # an IP server's (host, port)
        server = address[0]
        parts = urlsplit(self.path)
        self.hits[f"{server}{parts.path}"] += 1
        if parts.path == "/redirect":
            self.send_response(int(parse_qs(parts.query).get("status", ["302"])[0]))
            self.send_header("Location", parse_qs(parts.query).get("to", ["/redirect"])[0])
            self.end_headers()
            return
        size = 5000 if parts.path == "/big" else 0
        body = json.dumps({"host": self.headers["Host"], "pad": "x" * size}).encode()
        if parts.path == "/nan":  # Python's json writes these; JSON has no such numbers
            body = b'{"rate": NaN, "cap": Infinity}'

        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_POST = do_GET

    def log_message(self, format: str, *args: object) -> None:
        return


@pytest.fixture(scope="module")
def servers() -> Iterator[tuple[int, int]]:
    """Serve on 127.0.0.1 and 127.0.0.2; yield both ports."""
    started = [ThreadingHTTPServer((host, 0), Recorder) for host in ("127.0.0.1", "127.0.0.2")]
    for server in started:
        threading.Thread(target=server.serve_forever, daemon=True).start()
    yield started[0].server_address[1], started[1].server_address[1]
    for server in started:
        server.shutdown()
        server.server_close()


@pytest.fixture(autouse=True)
def listed(servers: tuple[int, int]) -> Iterator[None]:
    """List the allowed server, by address and by name, on its own port only."""
    port, _ = servers
    with override_settings(BRAID_HTTP_ALLOWLIST=[f"127.0.0.1:{port}", f"localhost:{port}"]):
        yield


@pytest.fixture
def hits(servers: tuple[int, int]) -> Counter[str]:
    Recorder.hits.clear()
    return Recorder.hits


NOT_STANDARD = "is an address in a non-standard form; write it in standard form (such as 127.0.0.1)"


def refusals(port: int, other: int) -> dict[str, str]:
    """URLs that name a destination the list does not allow, each with why it is refused."""
    user_part = "a user part, backslash or space in the host is refused"
    backslash = f"http://127.0.0.2:{other}\\@127.0.0.1:{port}/json"  # backslash confusion
    return {
        f"http://127.0.0.2:{other}/json": f"127.0.0.2:{other} is not on BRAID_HTTP_ALLOWLIST",
        f"http://127.0.0.1:{other}/json": f"127.0.0.1:{other} is not on BRAID_HTTP_ALLOWLIST",
        "http://127.0.0.1/json": "127.0.0.1:80 is not on BRAID_HTTP_ALLOWLIST",
        f"http://2130706433:{port}/json": f"'2130706433' {NOT_STANDARD}",  # one decimal number
        f"http://0x7f.1:{port}/json": f"'0x7f.1' {NOT_STANDARD}",  # hexadecimal, short form
        f"http://0177.0.0.1:{port}/json": f"'0177.0.0.1' {NOT_STANDARD}",  # octal
        f"http://127.1:{port}/json": f"'127.1' {NOT_STANDARD}",  # short form
        f"http://0:{port}/json": f"'0' {NOT_STANDARD}",  # 0.0.0.0 reaches this host on Linux
        f"http://[::ffff:127.0.0.2]:{other}/json":  # IPv4-mapped IPv6
            f"127.0.0.2:{other} is not on BRAID_HTTP_ALLOWLIST",
        f"http://[::1]:{port}/json": f"[::1]:{port} is not on BRAID_HTTP_ALLOWLIST",
        "http://169.254.169.254/latest/meta-data/":  # cloud metadata
            "169.254.169.254:80 is not on BRAID_HTTP_ALLOWLIST",
        f"http://127.0.0.1@127.0.0.2:{other}/json":  # user part
            f"'http://127.0.0.1@127.0.0.2:{other}/json': {user_part}",
        backslash: f"{backslash!r}: {user_part}",
        f"http://127.0.0.2:{other}#@127.0.0.1:{port}/json":
            f"127.0.0.2:{other} is not on BRAID_HTTP_ALLOWLIST",
        f"file:///etc/passwd?{port}":
            f"'file:///etc/passwd?{port}': only http and https URLs may be requested",
        f"ftp://127.0.0.1:{port}/json":
            f"'ftp://127.0.0.1:{port}/json': only http and https URLs may be requested",
        f"http://evil.example:{port}/json": f"evil.example:{port} is not on BRAID_HTTP_ALLOWLIST",
    }  # fmt: skip


def attacks(port: int, other: int) -> list[str]:
    """URLs that name a destination the list does not allow (or a scheme it refuses)."""
    return list(refusals(port, other))


def call(url: str, **params: object) -> Any:
    return http_request({"url": url, **params}, CONTEXT)


def refusal(url: str) -> str:
    with pytest.raises(ActionError) as refused:
        call(url)
    return str(refused.value)


def test_an_allowed_host_is_reached_with_its_own_name_as_host(
    servers: tuple[int, int], hits: Counter[str]
) -> None:
    port, _ = servers
    assert call(f"http://127.0.0.1:{port}/json") == {"host": f"127.0.0.1:{port}", "pad": ""}
    assert call(f"http://LOCALHOST.:{port}/json")["host"] == f"localhost.:{port}"
    assert hits == Counter({"127.0.0.1/json": 2})


def test_a_reply_with_nan_or_infinity_is_its_text_not_a_number_json_cannot_store(
    servers: tuple[int, int], hits: Counter[str]
) -> None:
    port, _ = servers
    assert call(f"http://127.0.0.1:{port}/nan") == '{"rate": NaN, "cap": Infinity}'
    assert hits == Counter({"127.0.0.1/nan": 1})


def test_every_internal_address_form_is_refused_before_connecting(
    servers: tuple[int, int], hits: Counter[str]
) -> None:
    port, other = servers
    assert {url: refusal(url) for url in attacks(port, other)} == refusals(port, other)
    assert hits == Counter()


def test_a_redirect_to_an_internal_address_is_refused_and_never_followed(
    servers: tuple[int, int], hits: Counter[str]
) -> None:
    port, other = servers
    for target in attacks(port, other):
        for status in (301, 302, 303, 307, 308):
            url = f"http://127.0.0.1:{port}/redirect?status={status}&to={quote(target)}"
            with pytest.raises(ActionError):
                call(url)
    assert hits == Counter({"127.0.0.1/redirect": 5 * len(attacks(port, other))})


def test_a_redirect_to_an_allowed_host_is_followed_and_a_loop_ends(
    servers: tuple[int, int], hits: Counter[str]
) -> None:
    port, _ = servers
    allowed = quote(f"http://localhost:{port}/json")
    assert call(f"http://127.0.0.1:{port}/redirect?to={allowed}", method="POST", json={}) == {
        "host": f"localhost:{port}",
        "pad": "",
    }
    loop = f"http://127.0.0.1:{port}/redirect"
    assert refusal(loop) == f"more than 5 redirects, the last to http://127.0.0.1:{port}/redirect"
    assert hits == Counter({"127.0.0.1/redirect": 7, "127.0.0.1/json": 1})


def test_a_listed_name_that_resolves_to_an_unlisted_internal_address_is_refused(
    servers: tuple[int, int], hits: Counter[str]
) -> None:
    port, _ = servers
    addresses = list(dict.fromkeys(egress.resolve("localhost", port)))
    first = egress.shown(addresses[0], port)
    with override_settings(BRAID_HTTP_ALLOWLIST=[f"localhost:{port}"]):
        assert refusal(f"http://localhost:{port}/json") == (
            f"localhost:{port} resolves to {', '.join(addresses)}, which is not on "
            f"BRAID_HTTP_ALLOWLIST: an internal address must be listed itself (such as {first})"
        )
    with override_settings(BRAID_HTTP_ALLOWLIST=[f"localhost:{port}", "127.0.0.0/8"]):
        assert refusal(f"http://localhost:{port}/json").startswith(f"localhost:{port} resolves")
    with override_settings(BRAID_HTTP_ALLOWLIST=[f"localhost:{port}", f"127.0.0.0/8:{port}"]):
        assert call(f"http://localhost:{port}/json")["host"] == f"localhost:{port}"
    assert hits == Counter({"127.0.0.1/json": 1})


def test_the_checked_address_is_the_one_connected_to() -> None:
    allowlist = egress.Allowlist.parse(["api.example.com", "10.0.0.0/8"])
    answers = {"api.example.com": ["169.254.169.254", "10.1.2.3", "93.184.215.14"]}
    destination = egress.check("https://API.example.com/v1?q=1", allowlist, resolver(answers))
    assert destination == egress.Destination("https", "api.example.com", 443, "10.1.2.3", "/v1?q=1")
    only_metadata = resolver({"api.example.com": ["169.254.169.254", "::ffff:a9fe:a9fe"]})
    with pytest.raises(ActionError) as refused:
        egress.check("http://api.example.com/", egress.Allowlist.parse(["api.example.com"]),
                     only_metadata)  # fmt: skip
    assert str(refused.value) == (
        "api.example.com:80 resolves to 169.254.169.254, which is not on BRAID_HTTP_ALLOWLIST: "
        "an internal address must be listed itself (such as 169.254.169.254:80)"
    )


def test_a_reply_over_the_limit_fails_the_action_not_the_worker(
    servers: tuple[int, int], hits: Counter[str], settings: Settings
) -> None:
    port, _ = servers
    settings.BRAID_HTTP_MAX_RESPONSE_BYTES = 1000
    assert refusal(f"http://127.0.0.1:{port}/big") == (
        f"127.0.0.1:{port}: the reply is over BRAID_HTTP_MAX_RESPONSE_BYTES (1,000 bytes)"
    )


@pytest.mark.django_db
def test_a_run_whose_input_names_an_internal_url_fails_with_the_reason(
    servers: tuple[int, int], demo: DemoUsers, client_for: ClientFor
) -> None:

    port, other = servers
    graph = {
        "format": "braid.graph/1",
        "name": "Fetch",
        "state": {"reply": {"reducer": "overwrite"}},
        "nodes": [
            {"id": "start", "type": "start"},
            {"id": "call", "type": "task", "action": "http.request",
             "params": {"url": "${input.url}"}, "output": "reply"},
            {"id": "done", "type": "end"},
        ],
        "edges": [{"source": "start", "target": "call"}, {"source": "call", "target": "done"}],
    }  # fmt: skip
    analyst = client_for("analyst")
    made = analyst.post("/api/flows/import/", {"graph": graph, "slug": "fetch", "publish": True},
                        content_type="application/json")  # fmt: skip
    assert made.status_code == 201, made.content
    target = quote(f"http://127.0.0.2:{other}/json")
    runs = []
    for url in (f"http://127.0.0.1:{port}/redirect?to={target}", f"http://127.0.0.1:{port}/json"):
        body = {"flow": "fetch", "input": {"url": url}}
        started = analyst.post("/api/runs/", body, content_type="application/json")
        runs.append(drain(Run.objects.get(pk=started.json()["id"])))
    assert [(run.status, run.state.get("reply")) for run in runs] == [
        ("failed", None),
        ("completed", {"host": f"127.0.0.1:{port}", "pad": ""}),
    ]
    assert runs[0].error == (
        f"http.request failed after 1 attempt(s): 127.0.0.2:{other} is not on BRAID_HTTP_ALLOWLIST"
    )


def quote(url: str) -> str:
    return percent(url, safe="")


def resolver(answers: dict[str, list[str]]) -> egress.Resolver:
    """A DNS stand-in: the one part of this attack that cannot be had on 127.0.0.1."""
    return lambda host, port: answers[host.lower()]
