"""CEL results as plain JSON values: what an evaluation returns, in and out of the sandbox.

Timestamps become RFC 3339 text and durations `<n>s`; anything JSON cannot hold is an
`ExpressionEvaluationError`.
"""

from __future__ import annotations

import datetime as dt
import math

import cel

from engine.core.expression_errors import ExpressionEvaluationError
from engine.core.timestamps import format_timestamp
from engine.core.values import JSON as JsonValue


def to_plain(value: object, source: str = "") -> JsonValue:
    """Return a CEL result as plain JSON; timestamps become RFC 3339, durations `<n>s`."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ExpressionEvaluationError(f"{value} is not a JSON number", source=source)
        return value
    if isinstance(value, (list, tuple)):
        return [to_plain(item, source) for item in value]
    if isinstance(value, dict):
        return _plain_mapping(value, source)
    return _plain_special(value, source)


def _plain_mapping(value: dict[object, object], source: str) -> JsonValue:
    """Return a CEL map as a JSON object; only string keys are allowed."""
    plain: dict[str, JsonValue] = {}
    for key, item in value.items():
        if not isinstance(key, str):
            raise ExpressionEvaluationError(
                f"map key {key!r} is not a string; JSON objects need string keys", source=source
            )
        plain[key] = to_plain(item, source)
    return plain


def _plain_special(value: object, source: str) -> JsonValue:
    """Return timestamps, durations and optionals as JSON; reject everything else."""
    if isinstance(value, dt.datetime):
        return format_timestamp(value)
    if isinstance(value, dt.timedelta):
        return f"{value.total_seconds():g}s"
    if isinstance(value, cel.OptionalValue):
        return to_plain(value.value(), source) if value.has_value() else None
    raise ExpressionEvaluationError(f"{describe_type(value)} is not a JSON value", source=source)


def describe_type(value: object) -> str:
    """Return a short description of a value's type for messages."""
    if value is None:
        return "null"
    return type(value).__name__
