"""Reading typed fields from a document's JSON objects, recording every format issue."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Final

from engine.core.graph.vocabulary import (
    IDENTIFIER,
    RESERVED_VARIABLES,
    FormatCode,
    JsonObject,
    Number,
    copy_object,
    is_json,
)

# ---------------------------------------------------------------------------------------------
# Decoding


@dataclass(frozen=True, kw_only=True)
class FormatIssue:
    """A local format issue found while decoding: where it is and how to fix it."""

    code: FormatCode
    message: str
    node: str | None = None
    edge: str | None = None
    edge_index: int | None = None
    field: str | None = None


class GraphFormatError(ValueError):
    """A document that does not decode into a Graph; `issues` lists every reason."""

    def __init__(self, issues: tuple[FormatIssue, ...]) -> None:
        super().__init__("; ".join(issue.message for issue in issues))
        self.issues = issues


@dataclass(frozen=True, kw_only=True)
class DamagedEdge:
    """An edge with format issues; kept only so reachability does not cascade."""

    index: int
    source: str
    target: str


@dataclass(frozen=True, slots=True)
class Where:
    """Where a reader's fields live, for issue locations."""

    node: str | None = None
    edge: str | None = None
    edge_index: int | None = None
    prefix: str = ""


ABSENT: Final = object()


class Reader:
    """Reads typed fields from one JSON object, recording issues and which keys it read."""

    def __init__(self, raw: Mapping[str, object], where: Where, issues: list[FormatIssue]):
        self.raw = raw
        self.where = where
        self.issues = issues
        self.read: set[str] = set()
        self.first_issue = len(issues)

    def child(self, raw: Mapping[str, object], key: str) -> Reader:
        """Return a reader for a nested object whose issues count as this reader's."""
        where = Where(self.where.node, self.where.edge, self.where.edge_index, self.path(key))
        child = Reader(raw, where, self.issues)
        child.first_issue = self.first_issue
        return child

    def path(self, key: str) -> str:
        """Return the field path of a key."""
        return f"{self.where.prefix}{key}"

    def report(self, code: FormatCode, key: str | None, message: str) -> None:
        """Record an issue at one of this reader's fields."""
        where = self.where
        path = None if key is None else self.path(key)
        self.issues.append(
            FormatIssue(
                code=code,
                message=message,
                node=where.node,
                edge=where.edge,
                edge_index=where.edge_index,
                field=path,
            )
        )

    def value(self, key: str, required: bool) -> object:
        """Return the raw value of a key, or ABSENT (reporting it when required)."""
        self.read.add(key)
        if key in self.raw:
            return self.raw[key]
        if required:
            self.report(FormatCode.FIELD_MISSING, key, f"`{self.path(key)}` is required.")
        return ABSENT

    def wrong_type(self, key: str, expected: str) -> None:
        """Record that a field has the wrong JSON type."""
        got = json_type_name(self.raw[key])
        self.report(
            FormatCode.FIELD_TYPE, key, f"`{self.path(key)}` must be {expected}, not {got}."
        )

    def string(self, key: str, *, required: bool = False, non_empty: bool = True) -> str | None:
        """Return a string field (non-empty unless told otherwise)."""
        value = self.value(key, required)
        if value is ABSENT:
            return None
        if not isinstance(value, str) or (non_empty and not value):
            self.wrong_type(key, "a non-empty string" if non_empty else "a string")
            return None
        return value

    def boolean(self, key: str) -> bool | None:
        """Return an optional boolean field."""
        value = self.value(key, required=False)
        if value is ABSENT:
            return None
        if not isinstance(value, bool):
            self.wrong_type(key, "true or false")
            return None
        return value

    def integer(self, key: str, *, required: bool = False) -> int | None:
        """Return an integer field (booleans are not integers)."""
        value = self.value(key, required)
        if value is ABSENT:
            return None
        if not isinstance(value, int) or isinstance(value, bool):
            self.wrong_type(key, "an integer")
            return None
        return value

    def number(self, key: str, *, required: bool = False, minimum: float = 0.0) -> Number | None:
        """Return a finite number field that is at least `minimum`."""
        value = self.value(key, required)
        if value is ABSENT:
            return None
        if (
            isinstance(value, bool)
            or not isinstance(value, (int, float))
            or not math.isfinite(value)
        ):
            self.wrong_type(key, "a number")
            return None
        if value < minimum:
            self.report(FormatCode.FIELD_VALUE, key, f"`{self.path(key)}` must be ≥ {minimum:g}.")
            return None
        return value

    def mapping(self, key: str, *, required: bool = False) -> Mapping[str, object] | None:
        """Return an object field."""
        value = self.value(key, required)
        if value is ABSENT:
            return None
        if not isinstance(value, dict):
            self.wrong_type(key, "an object")
            return None
        return value

    def json_object(self, key: str) -> JsonObject | None:
        """Return a copy of an optional object field holding any JSON."""
        value = self.mapping(key)
        if value is None:
            return None
        candidate: object = dict(value)
        if not is_json(candidate) or not isinstance(candidate, dict):
            self.report(FormatCode.FIELD_TYPE, key, f"`{self.path(key)}` must hold only JSON.")
            return None
        return copy_object(candidate)

    def names(self, key: str, *, required: bool = False) -> tuple[str, ...] | None:
        """Return a non-empty list of distinct non-empty strings."""
        value = self.value(key, required)
        if value is ABSENT:
            return None
        if not isinstance(value, list) or not all(isinstance(n, str) and n for n in value):
            self.wrong_type(key, "a list of non-empty strings")
            return None
        return self._distinct(key, tuple(value))

    def _distinct(self, key: str, names: tuple[str, ...]) -> tuple[str, ...] | None:
        """Return the names if non-empty and distinct, else report why."""
        if not names:
            self.report(FormatCode.FIELD_VALUE, key, f"`{self.path(key)}` must not be empty.")
            return None
        repeated = sorted(n for n, seen in Counter(names).items() if seen > 1)
        if repeated:
            listed = ", ".join(f"`{n}`" for n in repeated)
            self.report(FormatCode.FIELD_VALUE, key, f"`{self.path(key)}` repeats {listed}.")
            return None
        return names

    def string_pairs(
        self, key: str, *, required: bool = False
    ) -> tuple[tuple[str, str], ...] | None:
        """Return an object whose values are non-empty strings, as ordered pairs."""
        value = self.mapping(key, required=required)
        if value is None:
            return None
        bad = [k for k, v in value.items() if not isinstance(v, str) or not v]
        if bad:
            self.report(
                FormatCode.FIELD_TYPE,
                f"{key}.{bad[0]}",
                f"`{self.path(key)}.{bad[0]}` must be a non-empty string.",
            )
            return None
        return tuple((k, v) for k, v in value.items() if isinstance(v, str))

    def choice[E: StrEnum](
        self, key: str, enum: type[E], code: FormatCode, *, required: bool = False
    ) -> E | None:
        """Return an enum-valued string field, reporting other strings with `code`."""
        text = self.string(key, required=required)
        if text is None:
            return None
        if text not in enum._value2member_map_:
            allowed = ", ".join(f"`{member.value}`" for member in enum)
            self.report(code, key, f"`{self.path(key)}` is `{text}`; use one of {allowed}.")
            return None
        return enum(text)

    def variable(self, key: str, *, required: bool = False) -> str | None:
        """Return a CEL variable name that does not shadow `state`, `input` or a keyword."""
        name = self.string(key, required=required)
        if name is not None and (not IDENTIFIER.match(name) or name in RESERVED_VARIABLES):
            self.report(
                FormatCode.FIELD_VALUE,
                key,
                f"`{self.path(key)}` must be a CEL identifier other than `state`, `input` or a "
                f"CEL keyword, not `{name}`.",
            )
            return None
        return name

    def finish(self) -> bool:
        """Report keys nobody read; return whether this reader recorded no issue."""
        for key in self.raw:
            if key not in self.read:
                self.report(
                    FormatCode.FIELD_UNKNOWN, key, f"`{self.path(key)}` is not a field here."
                )
        return len(self.issues) == self.first_issue


def json_type_name(value: object) -> str:
    """Return the JSON name of a value's type, for messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "an empty string" if not value else "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__
