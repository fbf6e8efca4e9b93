"""Egress is deny-by-default: a flow reaches only the hosts and ports an admin listed.

Found by an attacker: with 127.0.0.1 and localhost listed on every port by default, a flow's
http.request fetched the app's own /admin/ page, and the method `MSET key value` stored a
key in a Redis on 127.0.0.1. These tests start real servers on ephemeral ports: an HTTP
server on 127.0.0.1 (and one on [::1]), and a bare TCP listener that records every byte it
receives, standing in for Redis or any other non-HTTP service.
"""

import json
import socket
import threading
import time
from collections import Counter
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from django.conf import settings
from django.test import override_settings

from engine import egress
from engine.actions import http_request
from engine.core.actions import ActionContext, ActionError
from engine.models import Run
from tests.django.durable_driver import drain
from tests.django.fixture_types import ClientFor, DemoUsers

CONTEXT = ActionContext("run", "call", "root:1", 1, "run/call/root:1/1")
METHODS = "GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS"
CRLF = "has a value with CR, LF or NUL"
RESERVED = "is set by Braid and may not be given"
TIMED_OUT = "no complete reply within {} ({:g} s for the request, its redirects and its body)"


class Handler(BaseHTTPRequestHandler):
    """Answers /json; /drip-body and /drip-head send a byte every 0.1 s (5 s in all);
    /hop?n=N waits 0.4 s, then redirects to /hop?n=N-1, and /hop?n=0 is /json."""

    hits: Counter[str] = Counter()

    def do_GET(self) -> None:
        parts = urlsplit(self.path)
        self.hits[parts.path] += 1
        if parts.path == "/drip-head":
            return self.drip(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n" + b"X: " + b"y" * 40)
        if parts.path == "/drip-body":
            self.send_response(200)
            self.send_header("Content-Length", "50")
            self.end_headers()
            return self.drip(b"z" * 50)
        hops = int(parse_qs(parts.query).get("n", ["0"])[0])
        if parts.path == "/hop" and hops > 0:
            time.sleep(0.4)
            self.send_response(302)
            self.send_header("Location", f"/hop?n={hops - 1}")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return None
        body = json.dumps({"host": self.headers["Host"]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
        return None

    def drip(self, data: bytes) -> None:
        """Send one byte every 0.1 s: each read returns quickly, so no socket timeout trips."""
        for index in range(len(data)):
            try:
                self.wfile.write(data[index : index + 1])
                self.wfile.flush()
            except OSError:
                return  # the client gave up
            time.sleep(0.1)

    def log_message(self, format: str, *args: object) -> None:
        return


class IPv6Server(ThreadingHTTPServer):
    address_family = socket.AF_INET6


class Listener:
    """A TCP listener that records what each connection sends (a Redis stand-in); it never
    answers, and closes a connection quiet for `quiet_s`."""

    def __init__(self, quiet_s: float = 0.5) -> None:
        self.quiet_s = quiet_s
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.received: list[bytes] = []
        threading.Thread(target=self.serve, daemon=True).start()

    def serve(self) -> None:
        while True:
            try:
                connection, _ = self.sock.accept()
            except OSError:
                return  # closed
            connection.settimeout(self.quiet_s)
            data = b""
            try:
                while chunk := connection.recv(65536):
                    data += chunk
            except OSError:
                pass  # quiet for quiet_s: what it sent is all it sends
            self.received.append(data)
            connection.close()

    def close(self) -> None:
        self.sock.close()


def serve(server: ThreadingHTTPServer) -> ThreadingHTTPServer:
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


@pytest.fixture(scope="module")
def servers() -> Iterator[tuple[int, int]]:
    """Serve HTTP on 127.0.0.1 and [::1]; yield both ports."""
    started = [serve(ThreadingHTTPServer(("127.0.0.1", 0), Handler)),
               serve(IPv6Server(("::1", 0), Handler))]  # fmt: skip
    yield started[0].server_address[1], started[1].server_address[1]
    for server in started:
        server.shutdown()
        server.server_close()


@pytest.fixture
def hits(servers: tuple[int, int]) -> Counter[str]:
    Handler.hits.clear()
    return Handler.hits


@pytest.fixture
def port(servers: tuple[int, int]) -> int:
    return servers[0]


@pytest.fixture
def listener() -> Iterator[Listener]:
    started = Listener()
    yield started
    started.close()


def call(url: str, **params: object) -> Any:
    return http_request({"url": url, **params}, CONTEXT)


def refusal(url: str, **params: object) -> str:
    with pytest.raises(ActionError) as refused:
        call(url, **params)
    return str(refused.value)


def fetch_graph(**params: object) -> dict[str, Any]:
    """A flow of one http.request task whose params are given."""
    return {
        "format": "braid.graph/1",
        "name": "Fetch",
        "state": {"reply": {"reducer": "overwrite"}},
        "nodes": [
            {"id": "start", "type": "start"},
            {"id": "call", "type": "task", "action": "http.request", "params": params,
             "output": "reply"},
            {"id": "done", "type": "end"},
        ],
        "edges": [{"source": "start", "target": "call"}, {"source": "call", "target": "done"}],
    }  # fmt: skip


def designer_test_run(client: Any, graph: dict[str, Any], given: dict[str, Any]) -> Any:
    """POST the graph to /api/flows/<slug>/test-run/ (the designer's test run)."""
    made = client.post("/api/flows/", {"slug": "probe", "draft": graph},
                       content_type="application/json")  # fmt: skip
    assert made.status_code == 201, made.content
    return client.post("/api/flows/probe/test-run/", {"input": given},
                       content_type="application/json")  # fmt: skip


def durable_run(client: Any, graph: dict[str, Any], given: dict[str, Any]) -> Run:
    """Publish the graph and run it on the durable path to its end."""
    made = client.post("/api/flows/import/", {"graph": graph, "slug": "probed", "publish": True},
                       content_type="application/json")  # fmt: skip
    assert made.status_code == 201, made.content
    started = client.post("/api/runs/", {"flow": "probed", "input": given},
                          content_type="application/json")  # fmt: skip
    assert started.status_code == 201, started.content
    return drain(Run.objects.get(pk=started.json()["id"]))


# The list: empty by default, ports, names, IPv6 ----------------------------------------------


@pytest.mark.django_db
def test_with_the_default_settings_a_flow_cannot_reach_a_server_on_127_0_0_1(
    port: int, hits: Counter[str], demo_users: DemoUsers, client_for: ClientFor
) -> None:
    assert settings.BRAID_HTTP_ALLOWLIST == []
    refused = f"127.0.0.1:{port} is not on BRAID_HTTP_ALLOWLIST"
    graph = fetch_graph(url="${input.url}")
    given = {"url": f"http://127.0.0.1:{port}/json"}
    analyst = client_for("analyst")
    tested = designer_test_run(analyst, graph, given).json()
    assert (tested["status"], tested["error"]) == (
        "failed",
        f"http.request failed after 1 attempt(s): {refused}",
    )
    run = durable_run(analyst, graph, given)
    assert (run.status, run.error) == (
        "failed",
        f"http.request failed after 1 attempt(s): {refused}",
    )
    assert refusal(f"http://localhost:{port}/json") == (
        f"localhost:{port} is not on BRAID_HTTP_ALLOWLIST"
    )
    assert hits == Counter()


def test_a_server_listed_with_its_port_is_reached_and_one_listed_without_is_not(
    port: int, hits: Counter[str]
) -> None:
    with override_settings(BRAID_HTTP_ALLOWLIST=[f"127.0.0.1:{port}"]):
        assert call(f"http://127.0.0.1:{port}/json") == {"host": f"127.0.0.1:{port}"}
    with override_settings(BRAID_HTTP_ALLOWLIST=["127.0.0.1", "localhost", "127.0.0.0/8"]):
        assert refusal(f"http://127.0.0.1:{port}/json") == (
            f"127.0.0.1:{port} is not on BRAID_HTTP_ALLOWLIST"
        )
    assert hits == Counter({"/json": 1})


def test_a_server_on_ipv6_loopback_is_reached_only_when_listed_in_brackets_with_its_port(
    servers: tuple[int, int], hits: Counter[str]
) -> None:
    _, port6 = servers
    url = f"http://[::1]:{port6}/json"
    assert refusal(url) == f"[::1]:{port6} is not on BRAID_HTTP_ALLOWLIST"
    with override_settings(BRAID_HTTP_ALLOWLIST=["::1"]):
        assert refusal(url) == f"[::1]:{port6} is not on BRAID_HTTP_ALLOWLIST"
    with override_settings(BRAID_HTTP_ALLOWLIST=[f"[::1]:{port6}"]):
        assert call(url) == {"host": f"[::1]:{port6}"}
    assert hits == Counter({"/json": 1})


def test_entries_with_and_without_ports_parse_to_their_hosts_and_ports() -> None:
    allowlist = egress.Allowlist.parse([
        "[::1]:8080", "10.0.0.0/8:443", "api.example.com:8443", "API.example.com.", "::1",
        "[fd00::/8]:443", "127.0.0.1:8000", "[::1]",
    ])  # fmt: skip
    assert dict(allowlist.names) == {"api.example.com": frozenset({80, 443, 8443})}
    assert [(str(network), sorted(ports)) for network, ports in allowlist.networks] == [
        ("::1/128", [8080]),
        ("10.0.0.0/8", [443]),
        ("::1/128", [80, 443]),
        ("fd00::/8", [443]),
        ("127.0.0.1/32", [8000]),
        ("::1/128", [80, 443]),
    ]

    def ip(text: str) -> egress.Address:
        address = egress.address_of(text)
        assert address is not None, text
        return address

    assert [allowlist.lists(ip("10.9.8.7"), port) for port in (443, 80)] == [True, False]
    assert [allowlist.lists(ip("::1"), port) for port in (8080, 80, 443, 9000)] == [
        True, True, True, False,
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("entry", "why"),
    [
        ("127.1", "entry '127.1' is not a host name, address or network"),
        ("a b", "entry 'a b' is not a host name, address or network"),
        ("*", "entry '*' is not a host name, address or network"),
        ("host:0", "entry 'host:0': the port must be a number from 1 to 65535"),
        ("host:65536", "entry 'host:65536': the port must be a number from 1 to 65535"),
        ("host:http", "entry 'host:http': the port must be a number from 1 to 65535"),
        ("[::1", "entry '[::1': write an IPv6 entry as [address]:port"),
        ("[::1]8080", "entry '[::1]8080': write an IPv6 entry as [address]:port"),
    ],
)
def test_an_entry_that_cannot_be_read_is_refused_with_the_entry_named(entry: str, why: str) -> None:
    with pytest.raises(ValueError) as refused:
        egress.Allowlist.parse([entry])
    assert str(refused.value) == why
    with override_settings(BRAID_HTTP_ALLOWLIST=[entry]):
        assert refusal("http://127.0.0.1/") == f"BRAID_HTTP_ALLOWLIST: {why}"


def public(host: str, port: int) -> list[str]:
    """A DNS stand-in answering a public address: what 127.0.0.1 cannot give a test."""
    return ["93.184.215.14"]


def check(url: str, *entries: str) -> str:
    """Return the address a URL would connect to, or why it is refused."""
    try:
        return egress.check(url, egress.Allowlist.parse(entries), public).address
    except ActionError as error:
        return str(error)


def test_a_public_host_is_reachable_only_when_listed_and_only_on_its_ports() -> None:
    assert check("https://api.example.com/", "api.example.com") == "93.184.215.14"
    assert check("http://api.example.com/", "api.example.com") == "93.184.215.14"
    assert check("https://other.example.com/", "api.example.com") == (
        "other.example.com:443 is not on BRAID_HTTP_ALLOWLIST"
    )
    assert check("https://api.example.com:8443/", "api.example.com") == (
        "api.example.com:8443 is not on BRAID_HTTP_ALLOWLIST"
    )
    assert check("https://api.example.com:8443/", "api.example.com:8443") == "93.184.215.14"
    assert check("https://api.example.com/", "api.example.com:8443") == (
        "api.example.com:443 is not on BRAID_HTTP_ALLOWLIST"
    )
    assert check("https://93.184.215.14/", "api.example.com") == (
        "93.184.215.14:443 is not on BRAID_HTTP_ALLOWLIST"
    )
    assert check("https://93.184.215.14/", "93.184.0.0/16:443") == "93.184.215.14"


@pytest.mark.parametrize(
    ("answer", "embedded"),
    [
        ("64:ff9b::a9fe:a9fe", "169.254.169.254 through NAT64"),
        ("64:ff9b::7f00:1", "127.0.0.1 through NAT64"),
        ("64:ff9b:1::a00:5", "a local-use NAT64 prefix"),
        ("::7f00:1", "127.0.0.1, IPv4-compatible"),
        ("2002:7f00:1::1", "127.0.0.1 through 6to4"),
        ("2002:a00:5::1", "10.0.0.5 through 6to4"),
    ],
)
def test_an_ipv6_answer_that_embeds_an_internal_ipv4_address_is_internal(
    answer: str, embedded: str
) -> None:
    allowlist = egress.Allowlist.parse(["api.example.com"])
    with pytest.raises(ActionError) as refused:
        egress.check("https://api.example.com/", allowlist, lambda host, port: [answer])
    assert str(refused.value) == (
        f"api.example.com:443 resolves to {answer}, which is not on BRAID_HTTP_ALLOWLIST: an "
        f"internal address must be listed itself (such as [{answer}]:443)"
    ), embedded
    nat64_public = "64:ff9b::5db8:d70e"  # 93.184.215.14
    assert egress.check("https://api.example.com/", allowlist, lambda h, p: [nat64_public]) == (
        egress.Destination("https", "api.example.com", 443, nat64_public, "/")
    )


# What is sent: the method and the header fields ----------------------------------------------


@pytest.mark.django_db
def test_a_literal_mset_method_is_refused_by_validation_with_its_code_and_node(
    listener: Listener, demo_users: DemoUsers, client_for: ClientFor
) -> None:
    graph = fetch_graph(url=f"http://127.0.0.1:{listener.port}/", method="MSET key value")
    with override_settings(BRAID_HTTP_ALLOWLIST=[f"127.0.0.1:{listener.port}"]):
        analyst = client_for("analyst")
        checked = analyst.post("/api/flows/import/check/", {"graph": graph},
                               content_type="application/json")  # fmt: skip
        tested = designer_test_run(analyst, graph, {})
    expected = {
        "code": "task.http_method_invalid",
        "severity": "error",
        "message": f"Task `call`: method 'MSET key value' is not one of {METHODS}.",
        "node": "call",
        "edge": None,
        "edge_index": None,
        "field": "params.method",
        "position": None,
    }
    assert checked.json()["errors"] == [expected]
    assert (tested.status_code, tested.json()["code"], tested.json()["errors"]) == (
        400,
        "run.refused",
        [expected],
    )
    assert listener.received == []


@pytest.mark.django_db
def test_a_computed_mset_method_is_refused_at_send_time_before_a_byte_is_sent(
    listener: Listener, demo_users: DemoUsers, client_for: ClientFor
) -> None:
    graph = fetch_graph(url="${input.url}", method="${input.method}")
    given = {"url": f"http://127.0.0.1:{listener.port}/", "method": "MSET key value"}
    expected = (
        f"http.request failed after 1 attempt(s): method 'MSET key value' is not one of {METHODS}"
    )
    with override_settings(BRAID_HTTP_ALLOWLIST=[f"127.0.0.1:{listener.port}"]):
        analyst = client_for("analyst")
        tested = designer_test_run(analyst, graph, given).json()
        run = durable_run(analyst, graph, given)
    assert (tested["status"], tested["error"]) == ("failed", expected)
    assert (run.status, run.error) == ("failed", expected)
    with socket.create_connection(("127.0.0.1", listener.port)) as probe:
        probe.sendall(b"PING\r\n")  # the listener does record what reaches it
    deadline = time.monotonic() + 5
    while not listener.received and time.monotonic() < deadline:
        time.sleep(0.05)
    assert listener.received == [b"PING\r\n"]


@pytest.mark.parametrize(
    ("params", "why"),
    [
        ({"method": "get"}, f"method 'get' is not one of {METHODS}"),
        ({"method": "GET / HTTP/1.1\r\nX:"},
         f"method 'GET / HTTP/1.1\\r\\nX:' is not one of {METHODS}"),
        ({"headers": {"X-Note": "a\r\nX-Injected: 1"}}, f"header 'X-Note' {CRLF}"),
        ({"headers": {"X-Note": "a\r\n X-Folded: 1"}}, f"header 'X-Note' {CRLF}"),
        ({"headers": {"X-Note": "a\x00b"}}, f"header 'X-Note' {CRLF}"),
        ({"headers": {"X Note": "a"}}, "header name 'X Note' is not an RFC 9110 token"),
        ({"headers": {"X-Note:": "a"}}, "header name 'X-Note:' is not an RFC 9110 token"),
        ({"headers": {"": "a"}}, "header name '' is not an RFC 9110 token"),
        ({"headers": {"Host": "admin.internal"}}, f"header 'Host' {RESERVED}"),
        ({"headers": {"transfer-encoding": "chunked"}}, f"header 'transfer-encoding' {RESERVED}"),
        ({"headers": {"X-Count": 3}}, "header 'X-Count' has a value that is not a string"),
    ],
)  # fmt: skip
def test_an_unsendable_method_or_header_is_refused_before_connecting(
    listener: Listener, params: dict[str, Any], why: str
) -> None:
    with override_settings(BRAID_HTTP_ALLOWLIST=[f"127.0.0.1:{listener.port}"]):
        assert refusal(f"http://127.0.0.1:{listener.port}/", **params) == why
    time.sleep(0.1)  # a connection would have been accepted by now
    assert listener.received == []


def test_literal_header_problems_are_validation_errors_with_the_header_named() -> None:
    from designer.services import check_graph

    graph = fetch_graph(url="https://api.example.com/", method="${input.method}",
                        headers={"X Note": "a", "X-Line": "a\r\nb: c", "X-Ok": "${input.x}",
                                 "Content-Length": "0", "X-Fine": "plain"})  # fmt: skip
    report = check_graph(graph)
    assert [(p.code.value, p.node, p.field, p.message) for p in report.errors] == [
        ("task.http_header_invalid", "call", "params.headers.X Note",
         "Task `call`: header name 'X Note' is not an RFC 9110 token."),
        ("task.http_header_invalid", "call", "params.headers.X-Line",
         "Task `call`: header 'X-Line' has a value with CR, LF or NUL."),
        ("task.http_header_invalid", "call", "params.headers.Content-Length",
         "Task `call`: header 'Content-Length' is set by Braid and may not be given."),
    ]  # fmt: skip


# What it may cost: the body, the reply, the total time ---------------------------------------


def test_a_body_over_the_request_cap_is_refused_before_connecting(listener: Listener) -> None:
    body = {"pad": "x" * 200}
    assert len(json.dumps(body)) == 211
    listed = [f"127.0.0.1:{listener.port}"]
    with override_settings(BRAID_HTTP_ALLOWLIST=listed, BRAID_HTTP_MAX_REQUEST_BYTES=100):
        assert refusal(f"http://127.0.0.1:{listener.port}/", method="POST", json=body) == (
            "the request body is 211 bytes, over BRAID_HTTP_MAX_REQUEST_BYTES (100 bytes)"
        )
    time.sleep(0.1)
    assert listener.received == []


def test_a_reply_over_the_response_cap_fails_with_the_setting_named(
    port: int, hits: Counter[str]
) -> None:
    listed = [f"127.0.0.1:{port}"]
    with override_settings(BRAID_HTTP_ALLOWLIST=listed, BRAID_HTTP_MAX_RESPONSE_BYTES=10):
        assert refusal(f"http://127.0.0.1:{port}/json") == (
            f"127.0.0.1:{port}: the reply is over BRAID_HTTP_MAX_RESPONSE_BYTES (10 bytes)"
        )
    assert hits == Counter({"/json": 1})


@pytest.mark.parametrize("path", ["/drip-body", "/drip-head", "/hop?n=5"])
def test_a_slow_server_is_cut_off_at_the_total_time_cap(
    port: int, hits: Counter[str], path: str
) -> None:
    listed = [f"127.0.0.1:{port}"]
    with override_settings(BRAID_HTTP_ALLOWLIST=listed, BRAID_HTTP_TIMEOUT_S=1):
        began = time.monotonic()
        why = refusal(f"http://127.0.0.1:{port}{path}")
        took = time.monotonic() - began
    assert why == TIMED_OUT.format("BRAID_HTTP_TIMEOUT_S", 1)
    assert 1.0 <= took < 2.0, took
    if path.startswith("/hop"):  # hops start at 0, 0.4 and 0.8 s (a busy machine: 0.4, 0.8)
        assert hits["/hop"] in (2, 3), hits
    else:
        assert hits == Counter({path: 1})


def test_a_shorter_timeout_param_cuts_sooner_and_a_longer_one_does_not_extend_the_cap(
    port: int, hits: Counter[str]
) -> None:
    listed = [f"127.0.0.1:{port}"]
    with override_settings(BRAID_HTTP_ALLOWLIST=listed, BRAID_HTTP_TIMEOUT_S=1):
        began = time.monotonic()
        assert refusal(f"http://127.0.0.1:{port}/drip-body", timeout_s=0.5) == (
            TIMED_OUT.format("timeout_s", 0.5)
        )
        assert 0.5 <= time.monotonic() - began < 1.0
        assert refusal(f"http://127.0.0.1:{port}/drip-body", timeout_s=60) == (
            TIMED_OUT.format("BRAID_HTTP_TIMEOUT_S", 1)
        )
        assert refusal(f"http://127.0.0.1:{port}/json", timeout_s=0) == (
            "timeout_s must be more than 0, not 0"
        )
    assert hits == Counter({"/drip-body": 2})


def test_an_https_server_that_never_answers_the_handshake_is_cut_off_at_the_cap() -> None:
    silent = Listener(quiet_s=5)
    listed = [f"127.0.0.1:{silent.port}"]
    with override_settings(BRAID_HTTP_ALLOWLIST=listed, BRAID_HTTP_TIMEOUT_S=1):
        began = time.monotonic()
        why = refusal(f"https://127.0.0.1:{silent.port}/")
        took = time.monotonic() - began
    assert why == TIMED_OUT.format("BRAID_HTTP_TIMEOUT_S", 1)
    assert 1.0 <= took < 2.0, took
    deadline = time.monotonic() + 5
    while not silent.received and time.monotonic() < deadline:
        time.sleep(0.05)
    assert [data[:1] for data in silent.received] == [b"\x16"]  # one TLS ClientHello record
    silent.close()
