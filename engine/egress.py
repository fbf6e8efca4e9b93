"""Where the `http.request` action may connect: BRAID_HTTP_ALLOWLIST, checked at every hop.

The list is the whole set of reachable destinations, and it is empty by default: nothing is
reachable until an admin lists it. An entry is a host name (`api.example.com`), an IP
address (`127.0.0.1`, `::1`) or a network (`10.0.0.0/8`), each optionally with a port
(`api.example.com:8443`, `127.0.0.1:8000`, `[::1]:8080`, `10.0.0.0/8:443`, `[fd00::/8]:443`).
An entry without a port allows ports 80 and 443 only. A URL is allowed when:

- it is http or https, names a host, and has no user part, backslash, space or control
  character (parsers disagree on those, and an attacker exploits the disagreement);
- its host and port are on the list: a name exactly (case and a trailing dot aside), an
  address literal when it is written in standard form and lies in a listed address or
  network. `2130706433`, `0x7f.1`, `0177.0.0.1` and `127.1` are not standard forms: the C
  resolver would read each as 127.0.0.1, so they are refused outright;
- the address it connects to is public, or listed itself on that port: a listed name whose
  DNS answers only with internal addresses (loopback, private, link-local such as
  169.254.169.254, unspecified, reserved, multicast, or an IPv6 form that embeds one) is
  refused unless one of those addresses is listed too (`localhost:8000,127.0.0.1:8000`).

The connection then goes to the address that was checked, never to a second DNS answer
(no rebinding between check and connect), and each redirect is checked the same way
before it is followed (at most MAX_REDIRECTS). Proxies from the environment are not used.
The method and header fields are checked before anything is sent (engine/core/http_rules.py),
and the request body, the reply and the total time are bounded (`Limits`).
"""

from __future__ import annotations

import contextlib
import http.client
import ipaddress
import socket
import ssl
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any
from urllib.parse import urljoin, urlsplit

from engine.core.actions import ActionError
from engine.core.http_rules import headers_problems, method_problem

MAX_REDIRECTS = 5
REDIRECTS = frozenset({301, 302, 303, 307, 308})
DEFAULT_PORTS = frozenset({80, 443})
SETTING = "BRAID_HTTP_ALLOWLIST"
Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network
Resolver = Callable[[str, int], list[str]]
FORBIDDEN_IN_NETLOC = frozenset("@\\ \t\r\n")
NAME_CHARACTERS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-._")
# IPv6 forms that carry an IPv4 address a gateway or tunnel may deliver to: judge that one.
NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
LOCAL_NAT64 = ipaddress.IPv6Network("64:ff9b:1::/48")
IPV4_COMPATIBLE = ipaddress.IPv6Network("::/96")


@dataclass(frozen=True, slots=True)
class Destination:
    """A checked URL: where to connect (an address) and what to ask for."""

    scheme: str
    host: str
    port: int
    address: str
    target: str  # path and query, as sent on the request line


@dataclass(frozen=True, slots=True)
class Allowlist:
    """BRAID_HTTP_ALLOWLIST read once: the ports of each listed name, address and network."""

    names: MappingProxyType[str, frozenset[int]]
    networks: tuple[tuple[Network, frozenset[int]], ...]

    @classmethod
    def parse(cls, entries: Sequence[str]) -> Allowlist:
        """Read the entries; raise ValueError naming the first that cannot be read."""
        names: dict[str, frozenset[int]] = {}
        networks: list[tuple[Network, frozenset[int]]] = []
        for entry in entries:
            host, ports = split_entry(entry)
            network = network_of(host)
            if network is not None:
                networks.append((network, ports))
                continue
            name = normal_name(host)
            if not name or not set(name) <= NAME_CHARACTERS or looks_numeric(name):
                raise ValueError(f"entry {entry!r} is not a host name, address or network")
            names[name] = names.get(name, frozenset()) | ports
        return cls(MappingProxyType(names), tuple(networks))

    def lists_name(self, name: str, port: int) -> bool:
        """Return whether the name is listed on the port."""
        return port in self.names.get(name, frozenset())

    def lists(self, address: Address, port: int) -> bool:
        """Return whether the address, or a network it lies in, is listed on the port."""
        return any(address in network and port in ports for network, ports in self.networks)


def split_entry(entry: str) -> tuple[str, frozenset[int]]:
    """Return an entry's host part and its ports (80 and 443 when it names none)."""
    text = entry.strip()
    if text.startswith("["):
        host, bracket, rest = text[1:].partition("]")
        if not bracket or (rest and not rest.startswith(":")):
            raise ValueError(f"entry {entry!r}: write an IPv6 entry as [address]:port")
        port = rest[1:] if rest else None
    elif text.count(":") == 1:
        host, _, port = text.partition(":")
    else:  # a name, an IPv4 entry, or an IPv6 one without a port
        host, port = text, None
    if port is None:
        return host, DEFAULT_PORTS
    if not port.isdecimal() or not 1 <= int(port) <= 65535:
        raise ValueError(f"entry {entry!r}: the port must be a number from 1 to 65535")
    return host, frozenset({int(port)})


def network_of(host: str) -> Network | None:
    """Return the address or network an entry's host names, or None for a host name."""
    try:
        return ipaddress.ip_network(host, strict=False)
    except ValueError:
        return None


def normal_name(host: str) -> str:
    """Return a host name lower-cased, without the trailing dot of a fully qualified name."""
    return host.lower().rstrip(".")


def address_of(text: str) -> Address | None:
    """Return the address a host literal names in standard form, IPv4-mapped ones as IPv4."""
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def is_public(address: Address) -> bool:
    """Return whether an address is public, judging an embedded IPv4 address by itself."""
    if isinstance(address, ipaddress.IPv4Address):
        return address.is_global
    if address in LOCAL_NAT64:
        return False
    embedded = None
    if address in NAT64 or address in IPV4_COMPATIBLE:
        embedded = ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    elif address.sixtofour is not None:
        embedded = address.sixtofour
    return address.is_global and (embedded is None or embedded.is_global)


def looks_numeric(host: str) -> bool:
    """Return whether a host is made of numbers and dots only (`2130706433`, `0x7f.1`)."""
    return all(part.isdigit() or part.lower().startswith("0x") for part in host.split(".") if part)


def shown(address: Address | str, port: int) -> str:
    """Return `address:port` as an entry would write it (`[::1]:8080` for IPv6)."""
    text = str(address)
    return f"[{text}]:{port}" if ":" in text else f"{text}:{port}"


def resolve(host: str, port: int) -> list[str]:
    """Return the addresses DNS gives for a host, in the resolver's order."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError as error:
        raise ActionError(f"{host}: cannot resolve: {error}") from error
    return [str(info[4][0]) for info in infos]


def check(url: str, allowlist: Allowlist, resolver: Resolver = resolve) -> Destination:
    """Return where to connect for a URL, or raise ActionError saying why it is refused."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https"):
        raise ActionError(f"{url!r}: only http and https URLs may be requested")
    if FORBIDDEN_IN_NETLOC & set(parts.netloc) or any(ord(c) < 32 for c in url):
        raise ActionError(f"{url!r}: a user part, backslash or space in the host is refused")
    host = parts.hostname or ""
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError as error:
        raise ActionError(f"{url!r}: {error}") from error
    if not host:
        raise ActionError(f"{url!r} names no host")
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return Destination(parts.scheme, host, port, checked_address(host, port, allowlist, resolver),
                       target)  # fmt: skip


def checked_address(host: str, port: int, allowlist: Allowlist, resolver: Resolver) -> str:
    """Return the address to connect to for a host and port the list allows."""
    address = address_of(host)
    if address is None and looks_numeric(host):
        raise ActionError(
            f"{host!r} is an address in a non-standard form; write it in standard form "
            "(such as 127.0.0.1)"
        )
    if address is not None:
        if not allowlist.lists(address, port):
            raise ActionError(f"{shown(address, port)} is not on {SETTING}")
        return str(address)
    name = normal_name(host)
    if not allowlist.lists_name(name, port):
        raise ActionError(f"{name}:{port} is not on {SETTING}")
    return choose_address(name, port, resolver(name, port), allowlist)


def choose_address(name: str, port: int, addresses: list[str], allowlist: Allowlist) -> str:
    """Return the first address of a listed name that is public or listed itself."""
    refused: list[Address] = []
    for text in addresses:
        address = address_of(text.split("%", 1)[0])
        if address is None:
            continue
        if is_public(address) or allowlist.lists(address, port):
            return str(address)
        if address not in refused:  # `::ffff:10.0.0.5` and `10.0.0.5` are one address
            refused.append(address)
    if not refused:
        raise ActionError(f"{name} resolves to no address")
    raise ActionError(
        f"{name}:{port} resolves to {', '.join(map(str, refused))}, which is not on {SETTING}: "
        f"an internal address must be listed itself (such as {shown(refused[0], port)})"
    )


@dataclass(frozen=True, slots=True)
class Limits:
    """What one request may cost: its body, the reply, and the total time (redirects in)."""

    max_request_bytes: int
    max_response_bytes: int
    timeout_s: float
    timeout_source: str = "BRAID_HTTP_TIMEOUT_S"  # what to name when the time runs out


@dataclass(frozen=True, slots=True)
class Deadline:
    """The moment the whole request must be over by, on the monotonic clock."""

    ends: float
    limits: Limits

    @classmethod
    def starting_now(cls, limits: Limits) -> Deadline:
        return cls(time.monotonic() + limits.timeout_s, limits)

    def remaining(self) -> float:
        """Return the seconds left; raise the time-out error when none are."""
        left = self.ends - time.monotonic()
        if left <= 0:
            raise self.error()
        return left

    def passed(self) -> bool:
        """Return whether the time is up."""
        return time.monotonic() >= self.ends

    def error(self) -> ActionError:
        """Return the error of a request that ran out of time."""
        return ActionError(
            f"no complete reply within {self.limits.timeout_source} "
            f"({self.limits.timeout_s:g} s for the request, its redirects and its body)"
        )


def connect_pinned(connection: PinnedHTTPConnection | PinnedHTTPSConnection) -> socket.socket:
    """Connect to the checked address; give up when the watchdog has cut the request.

    `cutter` is the same socket under a second descriptor, for the watchdog: http.client
    drops its own reference once a reply will close the connection, and TLS detaches the
    plain socket. It is stored before the cut is read, and the watchdog sets the cut before
    it reads `cutter`: one of the two always sees the other.
    """
    sock = socket.create_connection((connection.address, connection.port), connection.timeout)
    connection.sock = sock
    connection.cutter = sock.dup()
    if connection.cut.is_set():
        raise TimeoutError("cut by the watchdog while connecting")
    return sock


class PinnedHTTPConnection(http.client.HTTPConnection):
    """An HTTP connection to a checked address, sending the URL's host name as Host."""

    def __init__(self, destination: Destination, timeout: float, cut: threading.Event) -> None:
        super().__init__(destination.host, destination.port, timeout=timeout)
        self.address = destination.address
        self.cut = cut
        self.cutter: socket.socket | None = None

    def connect(self) -> None:
        connect_pinned(self)


class PinnedHTTPSConnection(http.client.HTTPSConnection):
    """An HTTPS connection to a checked address, verifying the certificate of the name."""

    def __init__(self, destination: Destination, timeout: float, cut: threading.Event) -> None:
        context = ssl.create_default_context()
        super().__init__(destination.host, destination.port, timeout=timeout, context=context)
        self.address = destination.address
        self.tls = context
        self.cut = cut
        self.cutter: socket.socket | None = None

    def connect(self) -> None:
        self.sock = self.tls.wrap_socket(connect_pinned(self), server_hostname=self.host)


@dataclass(frozen=True, slots=True)
class Reply:
    """What came back: the final URL, the status and the body."""

    url: str
    status: int
    body: bytes


def refuse_unsendable(
    method: str, body: bytes | None, headers: dict[str, Any], limits: Limits
) -> None:
    """Raise ActionError when the method, a header or the body size may not be sent."""
    problems = [p for p in [method_problem(method), *headers_problems(headers)] if p]
    if problems:
        raise ActionError("; ".join(problems))
    if body is not None and len(body) > limits.max_request_bytes:
        raise ActionError(
            f"the request body is {len(body):,} bytes, over BRAID_HTTP_MAX_REQUEST_BYTES "
            f"({limits.max_request_bytes:,} bytes)"
        )


def fetch(
    url: str,
    method: str,
    body: bytes | None,
    headers: dict[str, Any],
    allowlist: Allowlist,
    limits: Limits,
    resolver: Resolver = resolve,
) -> Reply:
    """Send a request, following redirects that are themselves allowed; read a bounded body."""
    refuse_unsendable(method, body, headers, limits)
    deadline = Deadline.starting_now(limits)
    for _ in range(MAX_REDIRECTS + 1):
        destination = check(url, allowlist, resolver)
        status, location, data = exchange(destination, method, body, headers, deadline)
        if status not in REDIRECTS or location is None:
            return Reply(url, status, data)
        url = urljoin(url, location)
        if status == 303 or (status in (301, 302) and method not in ("GET", "HEAD")):
            method, body = "GET", None
    raise ActionError(f"more than {MAX_REDIRECTS} redirects, the last to {url}")


def exchange(
    destination: Destination,
    method: str,
    body: bytes | None,
    headers: dict[str, Any],
    deadline: Deadline,
) -> tuple[int, str | None, bytes]:
    """Send one request to a checked destination; return status, Location and body.

    A socket timeout bounds each read, not their sum: a server sending one byte a second
    never trips it. A watchdog cuts the connection when the deadline passes, whatever the
    request is doing (connecting, sending, waiting, reading headers or the body).
    """
    kind = PinnedHTTPSConnection if destination.scheme == "https" else PinnedHTTPConnection
    cut = threading.Event()
    connection = kind(destination, deadline.remaining(), cut)
    watchdog = threading.Timer(deadline.remaining(), cut_connection, (connection, cut))
    watchdog.daemon = True
    watchdog.start()
    where = shown(destination.host, destination.port)
    limit = deadline.limits.max_response_bytes
    try:
        connection.request(method, destination.target, body, headers)
        reply = connection.getresponse()
        data = reply.read(limit + 1)
    except (OSError, http.client.HTTPException) as error:
        if cut.is_set() or deadline.passed():  # the watchdog, or a socket timeout at the end
            raise deadline.error() from error
        raise ActionError(f"{where}: {error}") from error
    finally:
        watchdog.cancel()
        connection.close()
        if connection.cutter is not None:
            connection.cutter.close()
    if cut.is_set():  # a reply without a length ends at the cut, as if it were complete
        raise deadline.error()
    if len(data) > limit:
        raise ActionError(
            f"{where}: the reply is over BRAID_HTTP_MAX_RESPONSE_BYTES ({limit:,} bytes)"
        )
    return reply.status, reply.getheader("Location"), data


def cut_connection(
    connection: PinnedHTTPConnection | PinnedHTTPSConnection, cut: threading.Event
) -> None:
    """Mark the deadline passed and shut the connection's socket, ending any blocked call."""
    cut.set()
    if connection.cutter is None:
        return  # not connected yet: connect_pinned sees the cut
    with contextlib.suppress(OSError):  # closed already: the request ended meanwhile
        connection.cutter.shutdown(socket.SHUT_RDWR)
