"""Adversarial CEL through validation and evaluation: a result or a clear error, in time.

Each expression runs in a child process, so that a crash of the native library fails this
test with the expression that caused it instead of killing pytest.
"""

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[2]
SECONDS = 5.0  # per expression: compile, validate and evaluate, with a 0.5 s budget inside
CHILD = """
import json, sys
from engine.core.expression_errors import ExpressionError
from engine.core.expressions import Bindings, compile_cel, compile_template
from engine.core.expressions import configure_limits
from engine.core.validation import validate

configure_limits(timeout_s=0.5)
BINDINGS = Bindings(
    state={"l": list(range(40)), "s": "h\\u00e9llo \\u2603", "m": {"k": [1, 2]}, "n": 3},
    input={"items": [{"amount": 5}, {"amount": 50}]},
    variables={"item": {"amount": 7}},
)


def check(source, template):
    compiled = (compile_template if template else compile_cel)(source)
    if template:
        return "rendered", compiled.render(BINDINGS)[:40]
    return "value", json.dumps(compiled.evaluate(BINDINGS))[:40]


def document(source):
    return {"format": "braid.graph/1", "state": {"n": {"reducer": "overwrite"}},
            "nodes": [{"id": "start", "type": "start"},
                      {"id": "calc", "type": "set", "values": {"n": source}},
                      {"id": "done", "type": "end"}],
            "edges": [{"source": "start", "target": "calc"},
                      {"source": "calc", "target": "done"}]}


print("ready", flush=True)
for line in sys.stdin:
    request = json.loads(line)
    codes = [p.code for p in validate(document(request["source"]), {}).errors]
    try:
        kind, detail = check(request["source"], request["template"])
    except ExpressionError as error:
        kind, detail = type(error).__name__, error.message
    print(json.dumps({"kind": kind, "detail": detail, "codes": codes}), flush=True)
"""


class Child:
    """The child process that checks one expression per line."""

    def __init__(self) -> None:
        self.process = self._start()

    def _start(self) -> subprocess.Popen[str]:
        process = subprocess.Popen(
            [sys.executable, "-c", CHILD], cwd=ROOT, text=True,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        assert process.stdout is not None and process.stdout.readline() == "ready\n"
        return process

    def check(self, source: str, template: bool) -> dict[str, object]:
        """Return the child's verdict; fail the test on a crash or a stall."""
        assert self.process.stdin is not None and self.process.stdout is not None
        began = time.monotonic()
        self.process.stdin.write(json.dumps({"source": source, "template": template}) + "\n")
        self.process.stdin.flush()
        line = self.process.stdout.readline()
        took = time.monotonic() - began
        if not line:
            code = self.process.wait()
            self.process = self._start()
            pytest.fail(f"the checker died (exit {code}) on {source[:200]!r}")
        assert took < SECONDS, f"{took:.1f} s for {source[:200]!r}"
        verdict: dict[str, object] = json.loads(line)
        return verdict

    def close(self) -> None:
        self.process.kill()
        self.process.wait()


@pytest.fixture(scope="module")
def child() -> Iterator[Child]:
    checker = Child()
    yield checker
    checker.close()


ATOMS = st.sampled_from(
    ["1", "state.n", "state.l", "state.s", "input.items", "item.amount", "'\u00e9\u2603'",
     "9" * 40, "1.5e308", "null", "true", "[]", "{}", "b'\\xff'", "state.m.k", "size(state.l)"]
)  # fmt: skip
OPERATORS = st.sampled_from([" + ", " - ", " * ", " / ", " % ", " && ", " || ", " == ", " < "])
WRAPPERS = st.sampled_from(
    ["({})", "[{}]", "{{'k': {}}}", "!{}", "-{}", "size({})", "{}.map(x, x)",
     "state.l.map(x, {})", "state.l.filter(y, {})", "state.l.exists(z, {})", "[{}][0]",
     "true ? {} : 0", "string({})", "{}.all(w, true)"]
)  # fmt: skip


@st.composite
def nested(draw: st.DrawFn) -> str:
    """An atom wrapped in up to 300 brackets, calls, unary operators and macros."""
    source = draw(ATOMS)
    for _ in range(draw(st.integers(1, 300))):
        source = draw(WRAPPERS).format(source)
    return source


@st.composite
def chains(draw: st.DrawFn) -> str:
    """A long chain of one binary operator, up to 20,000 terms."""
    terms = draw(st.sampled_from([2, 40, 249, 251, 500, 4_000, 15_000, 20_000]))
    return draw(OPERATORS).join([draw(ATOMS)] * terms)


@st.composite
def macros(draw: st.DrawFn) -> str:
    """Comprehensions inside comprehensions, 1 to 8 deep."""
    depth = draw(st.integers(1, 8))
    source = "v0"
    for level in range(depth, 0, -1):
        source = f"state.l.{draw(st.sampled_from(['map', 'filter', 'exists']))}(v{level - 1}, "
        source += f"{source if level < depth else 'true'})"
    return source


LITERALS = st.one_of(
    st.integers(1, 3_000).map(lambda n: "[" + ",".join(["1"] * n) + "]"),
    st.integers(1, 50_000).map(lambda n: "'" + "x" * n + "'"),
    st.integers(1, 400).map(lambda n: "9" * n),
)
NOISE = st.text(alphabet=st.sampled_from(list("()[]{}.,?:!-+*/%<>=&|'\"\\ab1 \u00e9\u2603$")),
                max_size=300)  # fmt: skip
EXPRESSIONS = st.one_of(nested(), chains(), macros(), LITERALS, NOISE, st.text(max_size=200))


@settings(
    max_examples=150,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(source=EXPRESSIONS, template=st.booleans())
def test_any_expression_gets_a_result_or_a_clear_error_in_bounded_time(
    child: Child, source: str, template: bool
) -> None:
    text = f"Total ${{{source}}} due" if template else source
    verdict = child.check(text, template)
    assert verdict["kind"] in {
        "value", "rendered", "ExpressionSyntaxError", "ExpressionLimitError",
        "ExpressionEvaluationError", "ExpressionBudgetError",
    }, verdict  # fmt: skip
    assert isinstance(verdict["detail"], str)
    if verdict["kind"] == "ExpressionLimitError" and not template:
        assert verdict["codes"] == ["expression.limit"]
