"""The JSON values that flow through state, inputs and action outputs."""

import json
import math
from typing import Any

import orjson

type JSON = bool | int | float | str | list[JSON] | dict[str, JSON] | None


# orjson writes dates and dataclasses itself; passed through, they reach json.dumps, which
# refuses them as it always did.
ORJSON_OPTIONS = orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_DATACLASS


def dumps(value: Any) -> str:
    """Return a stored value's JSON text: orjson's (about 8x json.dumps, a third of a
    step's snapshot work in-process), or json.dumps's where orjson refuses the value (an
    integer past 64 bits, a key not a string), so what is stored is what json would store.

    Both texts decode to the same value; orjson writes no spaces and non-ASCII as UTF-8.
    State never holds NaN or infinity (CEL results and action outputs refuse them), which
    orjson would write as null.
    """
    try:
        return orjson.dumps(value, option=ORJSON_OPTIONS).decode()
    except TypeError:  # orjson.JSONEncodeError is a TypeError
        return json.dumps(value)


def dumps_utf8(value: Any) -> bytes:
    """Return a response's JSON as compact UTF-8 bytes: orjson's (a tree of 10,000 rows, 1.5
    MB, in 2 ms against json.dumps's 14), or json's where orjson refuses the value."""
    try:
        return orjson.dumps(value, option=ORJSON_OPTIONS)
    except TypeError:  # as in dumps
        return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()


def json_size(value: Any) -> int:
    """Return the bytes of a value's compact JSON text (UTF-8): what the size limits
    measure (engine.core.expression_limits.Limits, BRAID_VALUE_MAX_BYTES and its peers)."""
    try:
        return len(orjson.dumps(value, option=ORJSON_OPTIONS))
    except TypeError:  # as in dumps: a value orjson refuses, json measures
        return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode())


def nests_deeper_than(value: object, limit: int) -> bool:
    """Return whether arrays and objects nest more than `limit` levels (scalars are free)."""
    stack: list[tuple[object, int]] = [(value, 1)] if isinstance(value, (dict, list)) else []
    while stack:
        item, depth = stack.pop()
        children = item.values() if isinstance(item, dict) else item
        for child in children:  # type: ignore[attr-defined]
            if isinstance(child, (dict, list)):
                if depth >= limit:
                    return True
                stack.append((child, depth + 1))
    return False


def not_json(value: object, where: str = "the value") -> str | None:
    """Return what keeps a Python value from being stored as JSON, and where; None if
    nothing does. JSON has no NaN or infinity (PostgreSQL's jsonb refuses them), and only
    strings as object keys; tuples, sets, dates and other objects must be converted first.

    Iterative, for values of any depth.
    """
    stack: list[tuple[object, str]] = [(value, where)]
    while stack:
        item, path = stack.pop()
        if item is None or isinstance(item, (bool, int, str)):
            continue
        if isinstance(item, float):
            if not math.isfinite(item):
                return f"{path} is {item!r}, which JSON cannot hold"
            continue
        if isinstance(item, list):
            stack.extend((child, f"{path}[{i}]") for i, child in enumerate(item))
            continue
        if isinstance(item, dict):
            for key, child in item.items():
                if not isinstance(key, str):
                    return f"{path} has the key {key!r}; JSON object keys are strings"
                stack.append((child, f"{path}.{key}"))
            continue
        kind = type(item).__name__
        return f"{path} is a {kind}; JSON holds lists, objects, strings, numbers, booleans, null"
    return None


def loads_strict(text: str) -> Any:
    """Parse JSON text without Python's extensions NaN, Infinity and -Infinity, which JSON
    does not have and PostgreSQL's jsonb refuses, nor a number past a float's range (1e999
    parses as infinity); raise ValueError on them."""
    return json.loads(text, parse_constant=refuse_constant, parse_float=finite_float)


def finite_float(text: str) -> float:
    """Parse a JSON number with a fraction or exponent; refuse one past a float's range."""
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"the number {text[:40]} is out of range")
    return value


def refuse_constant(name: str) -> Any:
    """Refuse NaN, Infinity and -Infinity in a JSON text."""
    raise ValueError(f"{name} is not a JSON number")


def summary(value: JSON, limit: int = 200) -> JSON:
    """Return a value short enough for a node row's result."""
    if value is None or isinstance(value, bool | int | float):
        return value
    text = (
        value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)
    )
    return text if len(text) <= limit else text[: limit - 1] + "…"
