"""CEL for Braid: compile at validation time, evaluate at run time, render `${CEL}` templates.

Backed by `common-expression-language` (the Rust `cel` crate); see docs/expressions.md for the
measurements behind that choice. Expressions see `state`, `input` and the variables of the
enclosing foreach/loop bodies. Results are converted to plain JSON values.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Final

import cel

from engine.core import expression_limits, sandbox
from engine.core.cel_results import describe_type, to_plain
from engine.core.expression_errors import (
    ExpressionBudgetError,
    ExpressionEvaluationError,
    ExpressionLimitError,
    ExpressionSyntaxError,
    MissingFieldError,
    position_at,
)
from engine.core.expression_limits import MACROS as _MACROS
from engine.core.expression_limits import limits, measure, violation
from engine.core.values import JSON as JsonValue

# Type names parse as identifiers (`type(x) == int`) but are not variables of the flow.
_BUILTIN_NAMES: Final = frozenset(
    {"int", "uint", "double", "bool", "string", "bytes", "list", "map", "null_type", "type"}
    | {"dyn", "optional"}
)
_ERROR_LOCATION: Final = re.compile(r"ERROR: <input>:(\d+):(\d+): (.*)")
_INNER_MESSAGE: Final = re.compile(r'msg: "([^"]*)"')
_TOKEN: Final = re.compile(
    r"""
    (?P<space>\s+|//[^\n]*)
  | (?P<string>(?:[rR][bB]?|[bB][rR])
      (?:'''[\s\S]*?'''|\"\"\"[\s\S]*?\"\"\"|'[^'\n]*'|"[^"\n]*")
    | [bB]?(?:'''(?:[^\\]|\\.)*?'''|\"\"\"(?:[^\\]|\\.)*?\"\"\"
      |'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*"))
  | (?P<number>(?:0[xX][0-9a-fA-F]+|\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?)[uU]?)
  | (?P<name>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<punct>.)
    """,
    re.VERBOSE | re.DOTALL,
)


@dataclass(frozen=True, slots=True)
class NameUse:
    """A name the expression uses and the offset of its first use in the config string."""

    name: str
    offset: int


@dataclass(frozen=True, kw_only=True)
class Bindings:
    """What an expression sees: `state`, `input`, and foreach/loop variables such as `line`."""

    state: Mapping[str, JsonValue]
    input: JsonValue
    variables: Mapping[str, JsonValue] = field(default_factory=dict)

    def activation(self, reads: Reads | None = None) -> dict[str, object]:
        """Return the CEL activation; loop variables cannot hide `state` or `input`.

        With `reads`, only what the expression can read is handed over: converting a value
        into the CEL library costs time in its size, so a foreach's `input.items` or a
        `state.log` that an expression never reads must not be converted on every
        evaluation (a body evaluated once per item would cost O(items) each time).
        """
        if reads is None:
            return {**self.variables, "state": dict(self.state), "input": self.input}
        found: dict[str, object] = {
            name: self.variables[name] for name in reads.variables if name in self.variables
        }
        if "state" in reads.names:
            found["state"] = _select(self.state, reads.state)
        if "input" in reads.names:
            found["input"] = _select(self.input, reads.input)
        return found


def _select(value: object, fields: frozenset[str] | None) -> object:
    """Return an object with only the named fields (all of it for None; non-objects whole)."""
    if fields is None or not isinstance(value, Mapping):
        return dict(value) if isinstance(value, Mapping) else value
    return {name: value[name] for name in fields if name in value}


@dataclass(frozen=True, slots=True)
class Reads:
    """What an expression can read: its free names, and the fields of `state` and `input`.

    `state`/`input` are None when the expression uses that object other than as `x.field`
    or `x['field']` (passes it whole, iterates it), so all of it is handed over.
    """

    names: frozenset[str]
    state: frozenset[str] | None
    input: frozenset[str] | None

    @property
    def variables(self) -> frozenset[str]:
        """Return the names that may be loop variables (everything but state and input)."""
        return self.names - {"state", "input"}


@dataclass(frozen=True, kw_only=True)
class CelExpression:
    """A compiled CEL expression and the names it uses."""

    source: str
    program: cel.Program = field(compare=False, repr=False)
    free_variables: tuple[NameUse, ...]
    state_reads: tuple[NameUse, ...]
    state_fields: frozenset[str] | None = None  # every field read, or None for `state` whole
    reads: Reads | None = None  # what the activation must hold; None: everything
    risky: bool = False  # may cost more than linear in its data: evaluated in the sandbox

    def evaluate(self, bindings: Bindings) -> JsonValue:
        """Return the result as a plain JSON value; raise ExpressionEvaluationError."""
        return to_plain(self._run(bindings), self.source)

    def evaluate_bool(self, bindings: Bindings) -> bool:
        """Return a boolean result; anything else is an evaluation error."""
        result = self._run(bindings)
        if not isinstance(result, bool):
            raise ExpressionEvaluationError(
                f"expected a boolean, got {describe_type(result)}", source=self.source
            )
        return result

    def evaluate_list(self, bindings: Bindings) -> list[JsonValue]:
        """Return a list result (e.g. foreach items); anything else is an evaluation error."""
        result = self.evaluate(bindings)
        if not isinstance(result, list):
            raise ExpressionEvaluationError(
                f"expected a list, got {describe_type(result)}", source=self.source
            )
        return result

    def evaluate_timestamp(self, bindings: Bindings) -> dt.datetime:
        """Return an aware UTC datetime from a CEL timestamp or an RFC 3339 string."""
        result = self._run(bindings)
        if isinstance(result, str):
            result = _parse_rfc3339(result, self.source)
        if not isinstance(result, dt.datetime):
            raise ExpressionEvaluationError(
                f"expected a timestamp, got {describe_type(result)}", source=self.source
            )
        return result.astimezone(dt.UTC) if result.tzinfo else result.replace(tzinfo=dt.UTC)

    def _run(self, bindings: Bindings) -> object:
        """Run the program, turning the library's exceptions into ExpressionEvaluationError.

        A risky program runs in the sandbox process under the evaluation budget and comes
        back as plain JSON (timestamps as RFC 3339 text, which every caller accepts).
        """
        activation = bindings.activation(self.reads)
        if self.risky:
            return self._run_sandboxed(activation, bindings)
        try:
            return self.program.execute(activation)
        except KeyError as error:  # a missing map key or field: say which, and what was there
            key = error.args[0] if error.args else None
            raise self._missing(key, bindings.activation(), str(error)) from error
        # The native library raises ValueError, TypeError, KeyError, RuntimeError, ...
        except Exception as error:
            raise self._missing(None, bindings.activation(), str(error)) from error

    def _run_sandboxed(self, activation: dict[str, object], bindings: Bindings) -> JsonValue:
        """Run the program in this thread's sandbox."""
        try:
            return sandbox.evaluate(self.source, activation)
        except sandbox.SandboxError as error:
            raise ExpressionBudgetError(str(error), source=self.source) from error
        except sandbox.EvaluationFailed as error:
            quoted = _QUOTED_KEY.fullmatch(str(error))
            key = quoted.group(1) if quoted else None
            raise self._missing(key, bindings.activation(), str(error)) from error

    def _missing(
        self, key: object, activation: Mapping[str, object], text: str
    ) -> ExpressionEvaluationError:
        """Return a MissingFieldError naming the path read, else a plain evaluation error."""
        for chain in _select_chains(self.source):
            found = _missing_along(chain, key, activation)
            if found is not None:
                path, holder, held = found
                return MissingFieldError(source=self.source, path=path, holder=holder, held=held)
        if isinstance(key, str):  # a field of a comprehension's variable, say: name the key
            return ExpressionEvaluationError(f"no such field: `{key}`", source=self.source)
        if text.startswith(_NO_OVERLOAD):
            text = _overload_message(self.source, activation)
        return ExpressionEvaluationError(text, source=self.source)


_QUOTED_KEY: Final = re.compile(r"'([^']*)'")
_CHAIN: Final = re.compile(
    r"""(?<![\w.])([A-Za-z_]\w*)((?:\s*\.\s*[A-Za-z_]\w*|\s*\[\s*(?:"[^"]*"|'[^']*')\s*\])+)"""
)
_SEGMENT: Final = re.compile(r"""\.\s*([A-Za-z_]\w*)|\[\s*(?:"([^"]*)"|'([^']*)')\s*\]""")


def _select_chains(source: str) -> list[list[str]]:
    """Return the field-select chains of a CEL text (`input.invoice.amount` → 3 names).

    Text inside a string literal may look like a chain; it is harmless, because a chain only
    counts where walking it meets the very key the library reported missing.
    """
    chains = []
    for match in _CHAIN.finditer(source):
        segments = [a or b or c for a, b, c in _SEGMENT.findall(match.group(2))]
        chains.append([match.group(1), *segments])
    return chains


def _missing_along(
    chain: list[str], key: object, activation: Mapping[str, object]
) -> tuple[str, str, tuple[str, ...] | None] | None:
    """Walk a chain through the activation; return (path, holder, held) where `key` is
    absent (held None: the holder is null, for any key, as selecting on null always fails)."""
    if chain[0] not in activation:
        return None
    value: object = activation[chain[0]]
    for depth, name in enumerate(chain[1:], start=1):
        if value is None:
            return _path(chain[: depth + 1]), _path(chain[:depth]), None
        if not isinstance(value, Mapping):
            return None
        if name not in value:
            if name != key:
                return None
            holder = _path(chain[:depth])
            return _path(chain[: depth + 1]), holder, tuple(sorted(str(k) for k in value))
        value = value[name]
    return None


_NO_OVERLOAD: Final = "No such overload"
_CEL_TYPES: Final = {bool: "bool", int: "int", float: "double", str: "string", list: "list",
                     dict: "map", type(None): "null"}  # fmt: skip


def _chain_value(chain: list[str], activation: Mapping[str, object]) -> tuple[int, object]:
    """Walk a chain through the activation: how many names resolved, and the value there.

    `input.amount.map` of `{"amount": 3}` resolves 2 names (`input.amount`, 3).
    """
    if chain[0] not in activation:
        return 0, None
    value: object = activation[chain[0]]
    for depth, name in enumerate(chain[1:], start=1):
        if not isinstance(value, Mapping) or name not in value:
            return depth, value
        value = value[name]
    return len(chain), value


def _overload_message(source: str, activation: Mapping[str, object]) -> str:
    """Say that the operand types do not go together, and what the fields read hold.

    The library names neither the operator nor the types; the fields the text reads are
    what the analyst can look at (`input.amount` is int (3)).
    """
    held: list[str] = []
    for chain in _select_chains(source):
        depth, value = _chain_value(chain, activation)
        shown = f"`{_path(chain[:depth])}` is {_CEL_TYPES.get(type(value), type(value).__name__)}"
        if isinstance(value, bool | int | float | str | type(None)):
            shown += f" ({json.dumps(value, ensure_ascii=False)[:40]})"
        if depth >= 2 and shown not in held:
            held.append(shown)
    reads = f" ({', '.join(held)})" if held else ""
    return (
        f"no such overload: the operation does not take these types{reads}; CEL does not "
        "convert between types, so convert with int(x), double(x) or string(x)"
    )


def _path(names: list[str]) -> str:
    """Return a dotted path, quoting names that are not identifiers."""
    return names[0] + "".join(f".{n}" if n.isidentifier() else f"[{n!r}]" for n in names[1:])


@dataclass(frozen=True, slots=True)
class _ParseFailure:
    """Why a source does not compile; cached like a success."""

    message: str
    offset: int | None
    over_limit: bool = False


def clear_caches() -> None:
    """Forget every compiled expression and template (for benchmarks and tests)."""
    _compile_cached.cache_clear()
    _template_cached.cache_clear()


def configure_limits(**changes: float) -> None:
    """Replace some limits (expression_limits.Limits) and forget what was compiled under
    the old ones."""
    expression_limits.configure(**changes)
    clear_caches()


def compile_cel(source: str, *, node: str | None = None, field: str | None = None) -> CelExpression:
    """Return the compiled expression (cached by source); raise ExpressionSyntaxError."""
    compiled = _compile_cached(source)
    if isinstance(compiled, _ParseFailure):
        position = None if compiled.offset is None else position_at(source, compiled.offset)
        kind = ExpressionLimitError if compiled.over_limit else ExpressionSyntaxError
        raise kind(compiled.message, source=source, position=position, node=node, field=field)
    return compiled


@lru_cache(maxsize=16384)
def _compile_cached(source: str) -> CelExpression | _ParseFailure:
    """Compile one source, or describe why it does not parse or is over a limit.

    The limits are checked on the text before the native parser sees it: past them, the
    parser or evaluator would overflow the native stack (expression_limits.py).
    """
    if len(source) > limits().max_length:
        return _ParseFailure(violation(source, measure(())) or "too long", None, True)
    tokens = _tokens(source)
    shape = measure(tokens)
    broken = violation(source, shape)
    if broken is not None:
        return _ParseFailure(broken, None, over_limit=True)
    try:
        program = cel.compile(source)
    except ValueError as error:
        return _parse_failure(source, str(error))
    free_variables = _free_variables(program, tokens)
    state_fields = _object_fields(tokens, "state")
    return CelExpression(
        source=source,
        program=program,
        free_variables=free_variables,
        state_reads=_state_reads(tokens),
        state_fields=state_fields,
        reads=Reads(
            # Every name the program mentions, comprehension variables included: a loop
            # variable a macro also binds (`item + xs.map(item, item)`) is still handed over.
            names=frozenset(program.variables()) - _BUILTIN_NAMES,
            state=state_fields,
            input=_object_fields(tokens, "input"),
        ),
        risky=shape.risky,
    )


def _parse_failure(source: str, text: str) -> _ParseFailure:
    """Return the first error the library reports, with its offset."""
    match = _ERROR_LOCATION.search(text)
    if match is None:
        return _ParseFailure(_tidy_message(text), None)
    line, column = int(match.group(1)), int(match.group(2))
    lines = source.split("\n")
    offset = sum(len(part) + 1 for part in lines[: line - 1]) + column - 1
    return _ParseFailure(_tidy_message(match.group(3)), offset)


def _tidy_message(message: str) -> str:
    """Return the parser's message without its list of expected tokens."""
    message = message.removeprefix("Syntax error: ")
    inner = _INNER_MESSAGE.search(message)  # OtherError(ParseError { ..., msg: "..." })
    if inner is not None:
        message = inner.group(1)
    message = re.sub(r" expecting (\{.*\}|\S+)$", "", message)
    return message.replace("mismatched input '<EOF>'", "unexpected end of expression")


@dataclass(frozen=True, slots=True)
class _Token:
    """A lexical token of CEL source: its kind (regex group), text and offset."""

    kind: str
    text: str
    offset: int


def _tokens(source: str) -> tuple[_Token, ...]:
    """Return the non-space tokens of a source that the library already parsed."""
    found = []
    for match in _TOKEN.finditer(source):
        kind = match.lastgroup or "punct"
        if kind != "space":
            found.append(_Token(kind, match.group(), match.start()))
    return tuple(found)


def _is_member(tokens: tuple[_Token, ...], index: int) -> bool:
    """Return whether the name at index follows a `.` (a field or method, not a variable)."""
    return index > 0 and tokens[index - 1].text == "."


def _bound_names(tokens: tuple[_Token, ...]) -> frozenset[str]:
    """Return names bound by comprehension macros: `.map(x, ...)` binds `x`."""
    bound = set()
    for i in range(len(tokens) - 4):
        name, paren, var, comma = tokens[i + 1], tokens[i + 2], tokens[i + 3], tokens[i + 4]
        opens_macro = tokens[i].text == "." and name.text in _MACROS and paren.text == "("
        if opens_macro and var.kind == "name" and comma.text == ",":
            bound.add(var.text)
    return frozenset(bound)


def _free_variables(program: cel.Program, tokens: tuple[_Token, ...]) -> tuple[NameUse, ...]:
    """Return the variables the expression reads, each with its first offset."""
    names = set(program.variables()) - _bound_names(tokens) - _BUILTIN_NAMES
    first: dict[str, int] = {}
    for i, token in enumerate(tokens):
        if token.text in names and token.kind == "name" and not _is_member(tokens, i):
            first.setdefault(token.text, token.offset)
    return tuple(NameUse(name, first.get(name, 0)) for name in sorted(names))


def _state_reads(tokens: tuple[_Token, ...]) -> tuple[NameUse, ...]:
    """Return the fields read as `state.x` or `state['x']`, each at its offset."""
    reads = []
    for i, token in enumerate(tokens[:-2]):
        if token.text != "state" or token.kind != "name" or _is_member(tokens, i):
            continue
        key = _state_key(tokens, i + 1)
        if key is not None:
            reads.append(NameUse(key, token.offset))
    return tuple(reads)


def _object_fields(tokens: tuple[_Token, ...], name: str) -> frozenset[str] | None:
    """Return the fields of every use of `state` (or `input`), or None if one use is not
    `state.x` or `state['x']`."""
    fields = set()
    for i, token in enumerate(tokens):
        if token.text != name or token.kind != "name" or _is_member(tokens, i):
            continue
        key = _state_key(tokens, i + 1) if i + 2 < len(tokens) else None
        if key is None:
            return None
        fields.add(key)
    return frozenset(fields)


def _state_key(tokens: tuple[_Token, ...], index: int) -> str | None:
    """Return the field selected right after `state`, if it is spelled out."""
    opener, key = tokens[index], tokens[index + 1]
    if opener.text == "." and key.kind == "name":
        return key.text
    closer = tokens[index + 2] if index + 2 < len(tokens) else None
    plain = key.kind == "string" and key.text[0] in "'\"" and "\\" not in key.text
    if opener.text == "[" and plain and closer is not None and closer.text == "]":
        return key.text[1:-1]
    return None


# ---------------------------------------------------------------------------------------------
# Templates


@dataclass(frozen=True, kw_only=True)
class TemplatePart:
    """One `${...}` part: its compiled expression and where its source starts in the text."""

    expression: CelExpression
    offset: int


@dataclass(frozen=True, kw_only=True)
class Template:
    """Text with `${CEL}` parts, parsed once; `render` evaluates the parts."""

    text: str
    pieces: tuple[str | TemplatePart, ...]

    @property
    def parts(self) -> tuple[TemplatePart, ...]:
        """Return the expression parts."""
        return tuple(piece for piece in self.pieces if isinstance(piece, TemplatePart))

    @property
    def free_variables(self) -> tuple[NameUse, ...]:
        """Return the variables the parts read, at offsets in the whole text."""
        return tuple(
            NameUse(use.name, part.offset + use.offset)
            for part in self.parts
            for use in part.expression.free_variables
        )

    @property
    def state_reads(self) -> tuple[NameUse, ...]:
        """Return the state fields the parts read, at offsets in the whole text."""
        return tuple(
            NameUse(use.name, part.offset + use.offset)
            for part in self.parts
            for use in part.expression.state_reads
        )

    def render(self, bindings: Bindings) -> str:
        """Return the text with each part replaced by its value."""
        rendered = []
        for piece in self.pieces:
            if isinstance(piece, str):
                rendered.append(piece)
            else:
                rendered.append(render_value(piece.expression.evaluate(bindings)))
        return "".join(rendered)


def render_value(value: JsonValue) -> str:
    """Return how a value reads inside text: strings as-is, everything else as JSON."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))


def compile_template(text: str, *, node: str | None = None, field: str | None = None) -> Template:
    """Return the parsed template; raise ExpressionSyntaxError located in the whole text."""
    try:
        return _template_cached(text)
    except ExpressionSyntaxError as error:
        raise type(error)(
            error.message, source=text, position=error.position, node=node, field=field
        ) from None


@lru_cache(maxsize=4096)
def _template_cached(text: str) -> Template:
    """Split a text into literal pieces and compiled parts."""
    pieces: list[str | TemplatePart] = []
    cursor = 0
    while (opening := text.find("${", cursor)) != -1:
        if opening > cursor:
            pieces.append(text[cursor:opening])
        closing = _part_end(text, opening + 2)
        pieces.append(_template_part(text, opening, closing))
        cursor = closing + 1
    if cursor < len(text):
        pieces.append(text[cursor:])
    return Template(text=text, pieces=tuple(pieces))


def _template_part(text: str, opening: int, closing: int) -> TemplatePart:
    """Compile the source between `${` and `}`, reporting errors at their place in the text."""
    start = opening + 2
    source = text[start:closing]
    if not source.strip():
        raise ExpressionSyntaxError(
            "empty `${}`: put a CEL expression inside",
            source=text,
            position=position_at(text, opening),
        )
    compiled = _compile_cached(source)
    if isinstance(compiled, _ParseFailure):
        inner = 0 if compiled.offset is None else compiled.offset
        kind = ExpressionLimitError if compiled.over_limit else ExpressionSyntaxError
        raise kind(compiled.message, source=text, position=position_at(text, start + inner))
    return TemplatePart(expression=compiled, offset=start)


def _part_end(text: str, start: int) -> int:
    """Return the index of the `}` closing a part, skipping braces inside strings and maps."""
    depth, index = 0, start
    while index < len(text):
        char = text[index]
        if char in "'\"":
            index = _string_end(text, index)
        elif char == "{":
            depth += 1
        elif char == "}":
            if depth == 0:
                return index
            depth -= 1
        index += 1
    raise ExpressionSyntaxError(
        "`${` is never closed: end the expression with `}`",
        source=text,
        position=position_at(text, start - 2),
    )


def _string_end(text: str, start: int) -> int:
    """Return the index of the quote closing the string literal opened at start."""
    quote = text[start] * 3 if text.startswith(text[start] * 3, start) else text[start]
    index = start + len(quote)
    while index < len(text):
        if text[index] == "\\":
            index += 2
        elif text.startswith(quote, index):
            return index + len(quote) - 1
        else:
            index += 1
    return len(text)


def _parse_rfc3339(text: str, source: str) -> dt.datetime:
    """Return the datetime an RFC 3339 string names; it must carry a zone."""
    try:
        moment = dt.datetime.fromisoformat(text)
    except ValueError as error:
        raise ExpressionEvaluationError(f"{text!r} is not a timestamp", source=source) from error
    if moment.tzinfo is None:
        raise ExpressionEvaluationError(f"{text!r} has no time zone", source=source)
    return moment
