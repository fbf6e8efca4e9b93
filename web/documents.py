"""Reading graph documents strictly: JSON with no duplicate keys, within a size limit.

Strict also means text and numbers every store and every renderer can take: a lone
surrogate (`"\\ud800"`) cannot be encoded as UTF-8 (it made the answer a 500), and
NaN, Infinity and numbers past a float's range are not JSON (PostgreSQL's jsonb refuses
them); both are refused while parsing, like an integer of more than 4,300 digits.
"""

import json
import math
import re
import sys
from collections.abc import Iterator, Mapping
from typing import IO, Any

from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser

from engine.core.values import nests_deeper_than

MAX_DOCUMENT_BYTES = 8 * 1024 * 1024
# Arrays and objects nested deeper than this are refused: Python code that walks a value
# recurses once or twice a level (dataclasses.asdict, copies, merges) and hit the
# interpreter's limit of 1,000 frames from about 450 levels (a run input of 500 nested
# lists was a 500). No flow needs a tenth of it.
MAX_DEPTH = 100


class DocumentError(ValueError):
    """A document that is not acceptable JSON, with a stable code and a position."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message

    def to_json(self) -> dict[str, object]:
        """Return the error in the shape of a validation problem."""
        return {"code": self.code, "message": self.message, "node": None, "edge": None,
                "severity": "error"}  # fmt: skip


def refuse_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """Build an object, refusing a key given twice (JSON would silently keep the last)."""
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise DocumentError("json.duplicate_key", f"the key {key!r} appears twice in an object")
        result[key] = value
    return result


def refuse_constant(name: str) -> float:
    """Refuse NaN, Infinity and -Infinity, which Python's parser accepts and JSON does not."""
    raise DocumentError("json.invalid", f"{name} is not a JSON number")


def finite_float(text: str) -> float:
    """Parse a JSON number with a fraction or exponent; refuse one past a float's range."""
    value = float(text)
    if not math.isfinite(value):
        raise DocumentError("json.invalid", f"the number {text[:40]} is out of range")
    return value


def load_document(text: str | bytes) -> object:
    """Parse a graph document; raise DocumentError for anything that is not clean JSON."""
    if len(text) > MAX_DOCUMENT_BYTES:
        limit = MAX_DOCUMENT_BYTES // (1024 * 1024)
        raise DocumentError("json.too_large", f"the document is over {limit} MiB")
    try:
        document = json.loads(
            text,
            object_pairs_hook=refuse_duplicate_keys,
            parse_constant=refuse_constant,
            parse_float=finite_float,
        )
    except json.JSONDecodeError as error:
        where = f"line {error.lineno}, column {error.colno}"
        raise DocumentError("json.invalid", f"not valid JSON at {where}: {error.msg}") from error
    except UnicodeDecodeError as error:
        raise DocumentError("json.invalid", f"not UTF-8 text: {error.reason}") from error
    except RecursionError as error:
        raise DocumentError("json.invalid", "the JSON nests too deeply") from error
    except DocumentError:
        raise
    except ValueError as error:  # an integer past Python's 4,300-digit conversion limit
        message = f"a number has more than {sys.get_int_max_str_digits():,} digits"
        raise DocumentError("json.invalid", message) from error
    refuse_lone_surrogates(text, document)
    if opening_brackets(text) > MAX_DEPTH and nests_deeper_than(document, MAX_DEPTH):
        raise DocumentError("json.invalid", f"the JSON nests deeper than {MAX_DEPTH} levels")
    return document


def opening_brackets(text: str | bytes) -> int:
    """Return how many `[` and `{` a text holds: a bound on its depth, counted at C speed."""
    if isinstance(text, bytes):
        return text.count(b"[") + text.count(b"{")
    return text.count("[") + text.count("{")


def refuse_lone_surrogates(text: str | bytes, document: object) -> None:
    """Raise DocumentError when a string or key of the document holds an unpaired surrogate."""
    if isinstance(text, bytes):
        escaped = ESCAPED_SURROGATE_BYTES.search(text) is not None
    else:
        escaped = ESCAPED_SURROGATE.search(text) is not None
    surrogate = lone_surrogate(document) if escaped else None
    if surrogate is not None:
        message = f"a lone surrogate (\\u{ord(surrogate):04x}) is not Unicode text"
        raise DocumentError("json.invalid", message)


# Only an escape can put a surrogate into parsed JSON (raw surrogate bytes are not UTF-8).
ESCAPED_SURROGATE = re.compile(r"\\u[dD][89a-fA-F]")
ESCAPED_SURROGATE_BYTES = re.compile(rb"\\u[dD][89a-fA-F]")


def strings_in(value: object) -> Iterator[str]:
    """Yield every string and key of a parsed JSON value, without recursion."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            yield item
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


def lone_surrogate(value: object) -> str | None:
    """Return the first unpaired surrogate in any string or key of a parsed JSON value."""
    return next((found.group() for text in strings_in(value)
                 if (found := SURROGATE.search(text))), None)  # fmt: skip


SURROGATE = re.compile("[\ud800-\udfff]")


def holds_nul(value: object) -> bool:
    """Return whether any string or key in a parsed JSON value holds U+0000.

    PostgreSQL's jsonb cannot store it, so what is stored refuses it on every database
    alike (the parser does not: a field that is ignored may hold one).
    """
    return any("\x00" in text for text in strings_in(value))


class StrictJSONParser(JSONParser):
    """DRF's JSON parser with the same strictness as `braid validate`."""

    def parse(
        self,
        stream: IO[Any] | None,
        media_type: str | None = None,
        parser_context: Mapping[str, Any] | None = None,
    ) -> Any:  # any JSON value, as load_document gives it (DRF types it as a dict)
        try:
            return load_document(stream.read() if stream is not None else b"")
        except DocumentError as error:
            raise ParseError({"code": error.code, "detail": error.message}) from error


NUL_REFUSED = "a NUL character (\\u0000) cannot be stored"
