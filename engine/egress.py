"""Where the `http.request` action may connect: BRAID_HTTP_ALLOWLIST, checked at every hop.

An entry is a host name (`api.example.com`), an IP address (`127.0.0.1`, `::1`) or a
network (`10.0.0.0/8`). A URL is allowed when:

- it is http or https, names a host, and has no user part, backslash, space or control
  character (parsers disagree on those, and an attacker exploits the disagreement);
- its host is on the list: a name exactly (case and a trailing dot aside), an address
  literal when it is written in standard form and lies in a listed address or network.
  `2130706433`, `0x7f.1`, `0177.0.0.1` and `127.1` are not standard forms: the C resolver
  would read each as 127.0.0.1, so they are refused outright;
- every address the host resolves to that is not public (loopback, private, link-local
  such as 169.254.169.254, unspecified, reserved, multicast) is itself listed: a listed
  name whose DNS answers with an internal address is refused, unless that address or its
  network is listed too (the default list names `127.0.0.1`, so `localhost` works).

The connection then goes to the address that was checked, never to a second DNS answer
(no rebinding between check and connect), and each redirect is checked the same way
before it is followed (at most MAX_REDIRECTS). Proxies from the environment are not used.
"""

from __future__ import annotations

import http.client
import ipaddress
import socket
import ssl
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from urllib.parse import urljoin, urlsplit

from engine.core.actions import ActionError

MAX_REDIRECTS = 5
REDIRECTS = frozenset({301, 302, 303, 307, 308})
Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network
Resolver = Callable[[str, int], list[str]]
FORBIDDEN_IN_NETLOC = frozenset("@\\ \t\r\n")


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
    """BRAID_HTTP_ALLOWLIST read once: names, and the addresses and networks listed."""

    names: frozenset[str]
    networks: tuple[Network, ...]

    @classmethod
    def parse(cls, entries: Sequence[str]) -> Allowlist:
        names: set[str] = set()
        networks: list[Network] = []
        for entry in entries:
            try:
                networks.append(ipaddress.ip_network(entry.strip("[]"), strict=False))
            except ValueError:
                names.add(normal_name(entry))
        return cls(frozenset(names), tuple(networks))

    def lists(self, address: Address) -> bool:
        """Return whether the address is listed itself or lies in a listed network."""
        return any(address in network for network in self.networks)


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


def looks_numeric(host: str) -> bool:
    """Return whether a host is made of numbers and dots only (`2130706433`, `0x7f.1`)."""
    return all(part.isdigit() or part.lower().startswith("0x") for part in host.split(".") if part)


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
    address = address_of(host)
    if not host:
        raise ActionError(f"{url!r} names no host")
    if address is None and looks_numeric(host):
        raise ActionError(f"{host!r} is not on BRAID_HTTP_ALLOWLIST")
    if address is not None:
        if not allowlist.lists(address):
            raise ActionError(f"{host!r} is not on BRAID_HTTP_ALLOWLIST")
        chosen = str(address)
    else:
        if normal_name(host) not in allowlist.names:
            raise ActionError(f"{host!r} is not on BRAID_HTTP_ALLOWLIST")
        chosen = choose_address(host, resolver(normal_name(host), port), allowlist)
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return Destination(parts.scheme, host, port, chosen, target)


def choose_address(host: str, addresses: list[str], allowlist: Allowlist) -> str:
    """Return the first address of a listed name that is public or listed itself."""
    refused = []
    for text in addresses:
        address = address_of(text.split("%", 1)[0])
        if address is None:
            continue
        if address.is_global or allowlist.lists(address):
            return str(address)
        refused.append(str(address))
    raise ActionError(
        f"{host} resolves to {', '.join(refused) or 'no address'}, which BRAID_HTTP_ALLOWLIST "
        "does not list (an internal address must be listed itself, e.g. 10.0.0.5 or 10.0.0.0/8)"
    )


class PinnedHTTPConnection(http.client.HTTPConnection):
    """An HTTP connection to a checked address, sending the URL's host name as Host."""

    def __init__(self, destination: Destination, timeout: float) -> None:
        super().__init__(destination.host, destination.port, timeout=timeout)
        self.address = destination.address

    def connect(self) -> None:
        self.sock = socket.create_connection((self.address, self.port), self.timeout)


class PinnedHTTPSConnection(http.client.HTTPSConnection):
    """An HTTPS connection to a checked address, verifying the certificate of the name."""

    def __init__(self, destination: Destination, timeout: float) -> None:
        context = ssl.create_default_context()
        super().__init__(destination.host, destination.port, timeout=timeout, context=context)
        self.address = destination.address
        self.tls = context

    def connect(self) -> None:
        raw = socket.create_connection((self.address, self.port), self.timeout)
        self.sock = self.tls.wrap_socket(raw, server_hostname=self.host)


@dataclass(frozen=True, slots=True)
class Reply:
    """What came back: the final URL, the status and the body."""

    url: str
    status: int
    body: bytes


def fetch(
    url: str,
    method: str,
    body: bytes | None,
    headers: dict[str, str],
    timeout: float,
    allowlist: Allowlist,
    max_bytes: int,
    resolver: Resolver = resolve,
) -> Reply:
    """Send a request, following redirects that are themselves allowed; read a bounded body."""
    for _ in range(MAX_REDIRECTS + 1):
        destination = check(url, allowlist, resolver)
        status, location, data = exchange(destination, method, body, headers, timeout, max_bytes)
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
    headers: dict[str, str],
    timeout: float,
    max_bytes: int,
) -> tuple[int, str | None, bytes]:
    """Send one request to a checked destination; return status, Location and body."""
    kind = PinnedHTTPSConnection if destination.scheme == "https" else PinnedHTTPConnection
    connection = kind(destination, timeout)
    try:
        connection.request(method, destination.target, body, headers)
        reply = connection.getresponse()
        data = reply.read(max_bytes + 1)
        if len(data) > max_bytes:
            raise ActionError(f"{destination.host}: the response is over {max_bytes:,} bytes")
        return reply.status, reply.getheader("Location"), data
    except (OSError, http.client.HTTPException) as error:
        raise ActionError(f"{destination.host}:{destination.port}: {error}") from error
    finally:
        connection.close()
