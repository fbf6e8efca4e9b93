"""The errors of CEL expressions, and the place in a config string where one is.

Below `engine.core.expressions` and `engine.core.sandbox`, which both raise and catch them.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.core.values import JSON as JsonValue


@dataclass(frozen=True, slots=True)
class Position:
    """A place in a config string: 1-based line and column, 0-based offset (code points)."""

    line: int
    column: int
    offset: int

    def to_json(self) -> dict[str, JsonValue]:
        """Return the position as a JSON object."""
        return {"line": self.line, "column": self.column, "offset": self.offset}


def position_at(text: str, offset: int) -> Position:
    """Return the line/column of an offset in a text."""
    offset = max(0, min(offset, len(text)))
    line_start = text.rfind("\n", 0, offset) + 1
    return Position(
        line=text.count("\n", 0, offset) + 1, column=offset - line_start + 1, offset=offset
    )


class ExpressionError(Exception):
    """An expression that does not compile or evaluate; located by node and field when known."""

    def __init__(
        self,
        message: str,
        *,
        source: str,
        position: Position | None = None,
        node: str | None = None,
        field: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.source = source
        self.position = position
        self.node = node
        self.field = field

    def __str__(self) -> str:
        where = ".".join(part for part in (self.node, self.field) if part)
        at = f" at {self.position.line}:{self.position.column}" if self.position else ""
        return f"{where}{at}: {self.message}" if where or at else self.message


class ExpressionSyntaxError(ExpressionError):
    """A CEL expression or `${...}` part that does not parse."""


class ExpressionLimitError(ExpressionSyntaxError):
    """A CEL text over a limit (length, depth, macro nesting, literal size): never parsed."""


class ExpressionEvaluationError(ExpressionError):
    """A CEL expression that failed at run time, or whose result is not plain JSON."""


class ExpressionBudgetError(ExpressionEvaluationError):
    """An evaluation stopped by its budget: time, memory or result size."""


class MissingFieldError(ExpressionEvaluationError):
    """An expression read a field its object does not have (`input.invoice` of `{}`).

    `path` is what was read (`input.invoice`), `holder` the object it was read from
    (`input`) and `held` that object's field names, so a message can say what was there.
    """

    def __init__(
        self, *, source: str, path: str, holder: str, held: tuple[str, ...] | None
    ) -> None:
        if held is None:  # the holder is null: there is no object to read a field of
            said = f"`{holder}` is null"
        else:
            said = f"`{holder}` held " + (", ".join(f"`{n}`" for n in held) or "no fields")
        super().__init__(f"`{path}` is missing ({said})", source=source)
        self.path = path
        self.holder = holder
        self.held = held
