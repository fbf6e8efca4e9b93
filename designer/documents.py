"""Reading graph documents strictly: JSON with no duplicate keys, within a size limit."""

import json
from typing import Any

from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser

MAX_DOCUMENT_BYTES = 8 * 1024 * 1024


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


def load_document(text: str | bytes) -> object:
    """Parse a graph document; raise DocumentError for anything that is not clean JSON."""
    if len(text) > MAX_DOCUMENT_BYTES:
        limit = MAX_DOCUMENT_BYTES // (1024 * 1024)
        raise DocumentError("json.too_large", f"the document is over {limit} MiB")
    try:
        document = json.loads(text, object_pairs_hook=refuse_duplicate_keys)
    except json.JSONDecodeError as error:
        where = f"line {error.lineno}, column {error.colno}"
        raise DocumentError("json.invalid", f"not valid JSON at {where}: {error.msg}") from error
    except UnicodeDecodeError as error:
        raise DocumentError("json.invalid", f"not UTF-8 text: {error.reason}") from error
    except RecursionError as error:
        raise DocumentError("json.invalid", "the JSON nests too deeply") from error
    return document


def holds_nul(value: object) -> bool:
    """Return whether any string or key in a parsed JSON value holds U+0000.

    PostgreSQL's jsonb cannot store it, so what is stored refuses it on every database
    alike (the parser does not: a field that is ignored may hold one).
    """
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if "\x00" in item:
                return True
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


class StrictJSONParser(JSONParser):
    """DRF's JSON parser with the same strictness as `braid validate`."""

    def parse(self, stream, media_type=None, parser_context=None):  # type: ignore[no-untyped-def]
        try:
            return load_document(stream.read() if stream is not None else b"")
        except DocumentError as error:
            raise ParseError({"code": error.code, "detail": error.message}) from error


NUL_REFUSED = "a NUL character (\\u0000) cannot be stored"
