"""Limits on CEL text, checked before any text reaches the native CEL library.

The Rust parser and evaluator recurse once per level of the syntax tree, on the native
stack: a `1+1+...+1` chain of 13,000 terms overflows an 8 MB main-thread stack and kills
the process (about 600 bytes a level; a 1 MB thread stack dies near 2,000). So the text is
measured here first, from its tokens, and refused with a clear error past the limits.
docs/expressions.md gives the measurements behind the defaults.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Final, Protocol

# Comprehension macros: `.map(x, ...)` and friends run their body once per element.
MACROS: Final = frozenset({"all", "exists", "exists_one", "map", "filter"})
# Tokens that add a level to the syntax tree they are part of.
_OPERATORS: Final = frozenset(
    {"+", "-", "*", "/", "%", "!", "<", ">", "=", "&", "|", "?", ":", "."}
)
_OPENERS: Final = {"(": ")", "[": "]", "{": "}"}


class Token(Protocol):
    """What the measure needs of a lexical token."""

    @property
    def kind(self) -> str: ...

    @property
    def text(self) -> str: ...


@dataclass(frozen=True, slots=True)
class Limits:
    """How large a CEL text may be and what one evaluation may spend."""

    max_length: int = 10_000  # code points, like cel-go's code point limit (100,000 there)
    max_depth: int = 250  # estimated syntax-tree depth, cel-go's default recursion limit
    max_comprehension_depth: int = 3  # macros inside macros: each level multiplies the work
    max_literal_items: int = 1_000  # elements of one list or map literal
    timeout_s: float = 1.0  # wall clock of one sandboxed evaluation
    memory_mb: int = 512  # address space of the sandbox process
    max_result_bytes: int = 1_000_000  # the JSON of one sandboxed result
    # Items of one foreach: its barrier holds them in the run's snapshot, written at every
    # step, so a list of a million (a 7 MB run input) made each step rewrite megabytes.
    max_foreach_items: int = 10_000
    # Arrays and objects nested in one state value or action output: Python code that
    # walks a value recurses a level at a time and died (RecursionError) near 450.
    max_value_depth: int = 100
    # Macro-free expressions with fewer `+` than this are cheap (linear in the data they
    # touch) and run in-process; the rest run in the sandbox under the budget: only
    # comprehensions and long concatenations can build values far larger than their input.
    sandbox_from_concatenations: int = 32
    # Bounded work (docs/security.md): what a run may store and do, whatever its flow says.
    # The JSON of one value a node writes or sends (a state write, a task's params or
    # output, a subflow's input, a foreach's items) and of any one state field after it.
    max_value_bytes: int = 1_000_000
    # The JSON of a lineage's whole state: the sum over its fields.
    max_state_bytes: int = 16_000_000
    # An approval's interpolated title, its instructions, its shown values, and a comment.
    max_approval_text_bytes: int = 10_000
    # Iterations of any loop, whatever its max_iterations says.
    max_loop_iterations: int = 10_000
    # Subflow calls nested inside one another.
    max_subflow_depth: int = 8
    # Node executions in one run, every scope included.
    max_run_steps: int = 250_000


_current = Limits()


def limits() -> Limits:
    """Return the limits in force."""
    return _current


def configure(**changes: float) -> Limits:
    """Replace some limits (the Django app applies its BRAID_CEL_* settings at start)."""
    global _current
    _current = replace(_current, **changes)  # type: ignore[arg-type]
    return _current


@dataclass(frozen=True, slots=True)
class Measure:
    """The shape of a CEL text: what the limits are checked against."""

    depth: int
    comprehension_depth: int
    literal_items: int
    concatenations: int

    @property
    def risky(self) -> bool:
        """Return whether evaluation can cost more than linear in the data it reads."""
        return (
            self.comprehension_depth > 0
            or self.concatenations >= _current.sandbox_from_concatenations
        )


@dataclass
class _Level:
    """One open bracket while measuring: its depth so far and what it holds."""

    closer: str
    base: int  # depth of the tree above this bracket
    run: int = 0  # operators chained at this level since the last comma
    items: int = 0
    macro: bool = False


def measure(tokens: Sequence[Token]) -> Measure:
    """Return the estimated tree depth, macro nesting and largest literal of a token list.

    A chain of binary operators at one bracket level is a left-deep tree, so each operator
    adds a level until a comma starts a sibling; each bracket adds a level, and a closed
    call or index continues the chain it belongs to.
    """
    stack = [_Level(closer="", base=0)]
    deepest = macro_depth = widest = concatenations = 0
    for index, token in enumerate(tokens):
        top = stack[-1]
        if token.kind == "punct" and token.text in _OPERATORS:
            top.run += 1
            concatenations += token.text == "+"
        elif token.text in _OPENERS and token.kind == "punct":
            macro = _opens_macro(tokens, index)
            stack.append(_Level(_OPENERS[token.text], top.base + top.run + 1, macro=macro))
            macro_depth = max(macro_depth, sum(level.macro for level in stack))
        elif token.text == "," and len(stack) > 1:
            top.run = 0
            top.items += 1
        elif token.text == top.closer and len(stack) > 1:
            stack.pop()
            widest = max(widest, top.items + 1)
            stack[-1].run += 1
        deepest = max(deepest, stack[-1].base + stack[-1].run)
    return Measure(deepest, macro_depth, widest, concatenations)


def _opens_macro(tokens: Sequence[Token], index: int) -> bool:
    """Return whether the `(` at index opens a comprehension macro such as `.map(`."""
    return (
        tokens[index].text == "("
        and index >= 2
        and tokens[index - 1].text in MACROS
        and tokens[index - 2].text == "."
    )


def violation(source: str, shape: Measure) -> str | None:
    """Return which limit the text breaks, as a sentence, or None when it is within all."""
    current = _current
    if len(source) > current.max_length:
        return (
            f"the expression is {len(source):,} characters long; the limit is "
            f"{current.max_length:,} (BRAID_CEL_MAX_LENGTH)"
        )
    if shape.depth > current.max_depth:
        return (
            f"the expression nests about {shape.depth:,} levels deep; the limit is "
            f"{current.max_depth:,} (BRAID_CEL_MAX_DEPTH): split it over several nodes"
        )
    if shape.comprehension_depth > current.max_comprehension_depth:
        return (
            f"comprehensions are nested {shape.comprehension_depth} deep; the limit is "
            f"{current.max_comprehension_depth} (BRAID_CEL_MAX_COMPREHENSION_DEPTH)"
        )
    if shape.literal_items > current.max_literal_items:
        return (
            f"a literal holds {shape.literal_items:,} items; the limit is "
            f"{current.max_literal_items:,} (BRAID_CEL_MAX_LITERAL_ITEMS): "
            "pass large data as input or state"
        )
    return None
