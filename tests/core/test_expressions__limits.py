"""CEL text is measured before the native library sees it; risky evaluations have a budget."""

from collections.abc import Iterator

import pytest

from engine.core.expression_errors import (
    ExpressionBudgetError,
    ExpressionLimitError,
    ExpressionSyntaxError,
)
from engine.core.expression_limits import Limits, measure
from engine.core.expressions import (
    Bindings,
    _tokens,
    compile_cel,
    compile_template,
    configure_limits,
)
from engine.core.validation import validate
from tests.core.harness import Driver, edge, flow


@pytest.fixture(autouse=True)
def default_limits() -> Iterator[None]:
    """Every test starts and ends with the default limits."""
    defaults = Limits()
    configure_limits(**{name: getattr(defaults, name) for name in Limits.__slots__})
    yield
    configure_limits(**{name: getattr(defaults, name) for name in Limits.__slots__})


def refusal(source: str) -> str:
    """Return the limit error's message for a source."""
    with pytest.raises(ExpressionLimitError) as caught:
        compile_cel(source)
    return caught.value.message


def test_a_thirty_thousand_term_sum_is_refused_by_length_before_parsing() -> None:
    assert refusal("+".join(["1"] * 30_000)) == (
        "the expression is 59,999 characters long; the limit is 10,000 (BRAID_CEL_MAX_LENGTH)"
    )


def test_a_long_operator_chain_is_refused_by_depth() -> None:
    assert refusal("-".join(["1"] * 300)) == (
        "the expression nests about 299 levels deep; the limit is 250 (BRAID_CEL_MAX_DEPTH): "
        "split it over several nodes"
    )


def test_seven_nested_maps_are_refused_by_comprehension_depth() -> None:
    source = "input.l" + ".map(a, input.l" * 7 + ")" * 7
    assert refusal(source) == (
        "comprehensions are nested 7 deep; the limit is 3 (BRAID_CEL_MAX_COMPREHENSION_DEPTH)"
    )


def test_a_literal_list_over_the_items_limit_is_refused() -> None:
    assert refusal("[" + ", ".join(["1"] * 1_001) + "]") == (
        "a literal holds 1,001 items; the limit is 1,000 (BRAID_CEL_MAX_LITERAL_ITEMS): "
        "pass large data as input or state"
    )


def test_a_template_part_over_a_limit_is_refused_at_its_place() -> None:
    text = "Total: ${" + "-".join(["1"] * 300) + "}"
    with pytest.raises(ExpressionLimitError) as caught:
        compile_template(text, node="sign", field="title")
    assert caught.value.position is not None
    assert (caught.value.node, caught.value.field, caught.value.position.offset) == (
        "sign",
        "title",
        9,
    )


def test_the_parsers_own_nesting_limit_reads_as_a_sentence() -> None:
    with pytest.raises(ExpressionSyntaxError) as caught:
        compile_cel("[" * 100 + "1" + "]" * 100)
    assert caught.value.message == "Recursion limit of 96 exceeded"


def test_the_measure_counts_depth_macro_nesting_items_and_concatenations() -> None:
    expression = compile_cel("state.l.map(x, [x, x + 1, x * 2]).filter(y, size(y) > 0)")
    assert expression.risky is True
    # An estimate that errs high: a call's argument counts the operators before the call.
    shape = measure(_tokens("a + b + c + f(d, e.g.h)"))
    assert (shape.depth, shape.comprehension_depth, shape.literal_items) == (6, 0, 2)
    assert shape.concatenations == 3


def test_short_macro_free_expressions_stay_in_process() -> None:
    assert [compile_cel(s).risky for s in ("state.total + 1", "line.amount > 10000")] == [
        False,
        False,
    ]


def test_validation_reports_an_expression_over_a_limit_with_its_own_code() -> None:
    document = flow(
        [
            {"id": "start", "type": "start"},
            {"id": "calc", "type": "set", "values": {"n": "+".join(["1"] * 30_000)}},
            {"id": "done", "type": "end"},
        ],
        [edge("start", "calc"), edge("calc", "done")],
        {"n": "overwrite"},
    )
    report = validate(document, {})
    assert [(p.code, p.node, p.field, p.message) for p in report.errors] == [
        (
            "expression.limit",
            "calc",
            "values.n",
            "`calc` (set) `values.n`: the expression is 59,999 characters long; the limit "
            "is 10,000 (BRAID_CEL_MAX_LENGTH).",
        )
    ]


def test_a_nested_comprehension_over_a_large_list_is_stopped_by_the_time_limit() -> None:
    configure_limits(timeout_s=0.3)
    expression = compile_cel("state.l.map(a, state.l.map(b, a * b)).size()")
    bindings = Bindings(state={"l": list(range(3_000))}, input=None)
    with pytest.raises(ExpressionBudgetError) as caught:
        expression.evaluate(bindings)
    assert caught.value.message == "evaluation took longer than 0.3 s (BRAID_CEL_TIMEOUT_S)"
    # The sandbox was replaced: the next evaluation works.
    small = Bindings(state={"l": [1, 2]}, input=None)
    assert expression.evaluate(small) == 2


def test_a_result_over_the_size_limit_is_refused() -> None:
    configure_limits(max_result_bytes=1_000)
    expression = compile_cel("state.l.map(a, state.l)")
    with pytest.raises(ExpressionBudgetError) as caught:
        expression.evaluate(Bindings(state={"l": list(range(100))}, input=None))
    assert caught.value.message.startswith("the result is ")
    assert caught.value.message.endswith(
        " bytes of JSON; the limit is 1,000 (BRAID_CEL_MAX_RESULT_BYTES)"
    )


def test_a_value_too_large_for_the_sandboxs_memory_is_refused() -> None:
    configure_limits(memory_mb=200, timeout_s=20)
    expression = compile_cel("state.l.map(a, state.l.map(b, state.s + state.s))")
    bindings = Bindings(state={"l": list(range(200)), "s": "x" * 100_000}, input=None)
    with pytest.raises(ExpressionBudgetError) as caught:
        expression.evaluate(bindings)
    assert caught.value.message == (
        "evaluation exceeded the sandbox's limits (exit -6; memory 200 MB, BRAID_CEL_MEMORY_MB)"
    )


def test_a_sandboxed_evaluation_returns_the_same_value_as_in_process() -> None:
    source = (
        "state.l.filter(x, x % 2 == 0).map(x, {'n': x, 'at': timestamp('2030-01-01T00:00:00Z')})"
    )
    bindings = Bindings(state={"l": [1, 2, 3, 4]}, input=None)
    assert compile_cel(source).evaluate(bindings) == [
        {"n": 2, "at": "2030-01-01T00:00:00Z"},
        {"n": 4, "at": "2030-01-01T00:00:00Z"},
    ]


def test_a_node_over_the_budget_fails_naming_its_field_and_the_limit() -> None:
    configure_limits(timeout_s=0.3)
    document = flow(
        [
            {"id": "start", "type": "start"},
            {"id": "calc", "type": "set", "values": {"n": "state.l.map(a, state.l.map(b, a * b))"}},
            {"id": "done", "type": "end"},
        ],
        [edge("start", "calc"), edge("calc", "done")],
        {"n": "overwrite", "l": "overwrite"},
    )
    document["state"]["l"]["default"] = list(range(3_000))
    driver = Driver(document)
    assert driver.status == "failed"
    assert driver.row_table()["calc"][0] == "failed"
    assert driver.state.error == (
        "node `calc` values.n: `state.l.map(a, state.l.map(b, a * b))` failed: evaluation "
        "took longer than 0.3 s (BRAID_CEL_TIMEOUT_S)"
    )
