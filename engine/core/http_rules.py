"""What an `http.request` may put on the wire: its method and its header fields.

Checked twice with the same rules: by the validator when a param is written literally, and
by the action just before it connects (a param may be computed by CEL). The method is sent
on the request line as written, so anything but a standard method is refused: `MSET key
value` would be a command to a Redis on the other end. Header names are RFC 9110 tokens and
values hold no CR, LF or NUL (RFC 9110 §5.5): a line break would start a header, or a
second request, of the flow's choosing. Host and the framing headers are Braid's to write.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from enum import StrEnum
from typing import Final


class HttpMethod(StrEnum):
    """The methods `http.request` sends."""

    GET = "GET"
    HEAD = "HEAD"
    POST = "POST"
    PUT = "PUT"
    PATCH = "PATCH"
    DELETE = "DELETE"
    OPTIONS = "OPTIONS"


METHODS: Final = tuple(method.value for method in HttpMethod)
TOKEN: Final = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
FORBIDDEN_IN_VALUE: Final = frozenset("\r\n\x00")
# Written by Braid from the checked URL and the body; a flow's own would contradict them.
RESERVED_HEADERS: Final = frozenset({"host", "content-length", "transfer-encoding", "connection"})


def method_problem(method: object) -> str | None:
    """Return why a method may not be sent, or None when it is one of METHODS."""
    if isinstance(method, str) and method in METHODS:
        return None
    return f"method {method!r} is not one of {', '.join(METHODS)}"


def header_problem(name: str, value: object, *, check_value: bool = True) -> str | None:
    """Return why one header field may not be sent, or None when it may."""
    if not TOKEN.fullmatch(name):
        return f"header name {name!r} is not an RFC 9110 token"
    if name.lower() in RESERVED_HEADERS:
        return f"header {name!r} is set by Braid and may not be given"
    if not check_value:
        return None
    if not isinstance(value, str):
        return f"header {name!r} has a value that is not a string"
    if FORBIDDEN_IN_VALUE & set(value):
        return f"header {name!r} has a value with CR, LF or NUL"
    return None


def headers_problems(headers: object) -> list[str]:
    """Return why each header of a headers param may not be sent (empty when all may)."""
    if not isinstance(headers, Mapping):
        return [f"headers must be an object of names to strings, not {type(headers).__name__}"]
    found = (header_problem(str(name), value) for name, value in headers.items())
    return [problem for problem in found if problem is not None]
