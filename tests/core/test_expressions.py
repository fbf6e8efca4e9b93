"""CEL expressions: compile errors carry their place, evaluation returns plain JSON values."""

import datetime as dt

import pytest

from engine.core.cel_results import to_plain
from engine.core.expression_errors import (
    ExpressionEvaluationError,
    ExpressionSyntaxError,
    MissingFieldError,
    Position,
    position_at,
)
from engine.core.expressions import Bindings, NameUse, compile_cel, compile_template
from engine.core.timestamps import format_timestamp
from engine.core.values import JSON

LINE: dict[str, JSON] = {"id": "L2", "amount": 20000}
LINES: list[JSON] = [{"id": "L1", "amount": 50}, LINE]
BINDINGS = Bindings(
    state={"total": 3, "status": "pending", "name": "Ann", "log": ["a"]},
    input={"lines": LINES, "when": "2030-01-02T03:04:05Z"},
    variables={"line": LINE},
)


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("line.amount > 10000", True),
        ("[line.id]", ["L2"]),
        ("state.total + 1", 4),
        ("size(input.lines)", 2),
        ("'Hello, ' + state.name + '!'", "Hello, Ann!"),
        ("state.status != 'ready'", True),
        ("line.id + ': ' + string(line.amount)", "L2: 20000"),
        ("input.lines.map(l, l.amount)", [50, 20000]),
        ("input.lines.filter(l, l.amount > 100).map(l, l.id)", ["L2"]),
        (
            "{'total': state.total, 'ok': true, 'none': null}",
            {"total": 3, "ok": True, "none": None},
        ),
        ("state.log + ['b']", ["a", "b"]),
        ("double(state.total) / 2.0", 1.5),
        ("state.total > 2 ? 'big' : 'small'", "big"),
        ("has(input.missing)", False),
        ("timestamp(input.when)", "2030-01-02T03:04:05Z"),
        ("timestamp('2030-01-01T00:00:00Z') + duration('30s')", "2030-01-01T00:00:30Z"),
        ("duration('1h30m')", "5400s"),
    ],
)
def test_an_expression_evaluates_to_a_plain_json_value(source: str, expected: object) -> None:
    result = compile_cel(source).evaluate(BINDINGS)
    assert (result, type(result)) == (expected, type(expected))


def test_a_compile_error_carries_node_field_and_position() -> None:
    with pytest.raises(ExpressionSyntaxError) as caught:
        compile_cel("line.amount >", node="big", field="condition")
    error = caught.value
    assert (error.node, error.field, error.position, error.message) == (
        "big",
        "condition",
        Position(line=1, column=14, offset=13),
        "unexpected end of expression",
    )
    assert str(error) == "big.condition at 1:14: unexpected end of expression"


def test_a_compile_error_on_a_later_line_has_its_line_and_column() -> None:
    with pytest.raises(ExpressionSyntaxError) as caught:
        compile_cel("state.total\n  + * 2")
    assert (caught.value.position, caught.value.message) == (
        Position(line=2, column=5, offset=16),
        "extraneous input '*'",
    )


def test_columns_count_characters_not_bytes() -> None:
    with pytest.raises(ExpressionSyntaxError) as caught:
        compile_cel("'éé' +* 1")
    assert caught.value.position == Position(line=1, column=7, offset=6)


def test_compiled_expressions_are_cached_by_source() -> None:
    assert compile_cel("state.total * 2") is compile_cel("state.total * 2")


def test_free_variables_exclude_comprehension_and_type_names() -> None:
    compiled = compile_cel("input.lines.all(x, x.amount > state.min) && type(line) == map")
    assert compiled.free_variables == (
        NameUse("input", 0),
        NameUse("line", 49),
        NameUse("state", 30),
    )


def test_state_reads_are_found_by_dot_and_by_index_but_not_inside_strings() -> None:
    compiled = compile_cel("state.a + state['b'] + x.state.c + size('state.d') + state[\"e\"]")
    assert compiled.state_reads == (NameUse("a", 0), NameUse("b", 10), NameUse("e", 53))


def test_evaluation_errors_name_the_source() -> None:
    with pytest.raises(ExpressionEvaluationError) as caught:
        compile_cel("state.missing + 1").evaluate(BINDINGS)
    assert caught.value.source == "state.missing + 1"


def test_mixing_int_and_double_is_an_evaluation_error_as_cel_specifies() -> None:
    with pytest.raises(ExpressionEvaluationError):
        compile_cel("1.5 * state.total").evaluate(BINDINGS)


def test_a_map_with_non_string_keys_is_not_plain_json() -> None:
    with pytest.raises(ExpressionEvaluationError, match="map key 1 is not a string"):
        compile_cel("{1: 'one'}").evaluate(BINDINGS)


def test_an_infinite_double_is_not_plain_json() -> None:
    with pytest.raises(ExpressionEvaluationError, match="inf is not a JSON number"):
        compile_cel("1.0 / 0.0").evaluate(BINDINGS)


def test_evaluate_bool_rejects_a_non_boolean() -> None:
    assert compile_cel("state.total > 1").evaluate_bool(BINDINGS) is True
    with pytest.raises(ExpressionEvaluationError, match="expected a boolean, got int"):
        compile_cel("state.total").evaluate_bool(BINDINGS)


def test_evaluate_list_returns_foreach_items() -> None:
    assert compile_cel("input.lines").evaluate_list(BINDINGS) == LINES
    with pytest.raises(ExpressionEvaluationError, match="expected a list, got str"):
        compile_cel("state.name").evaluate_list(BINDINGS)


@pytest.mark.parametrize(
    "source",
    ["timestamp(input.when)", "input.when", "timestamp('2030-01-02T04:04:05+01:00')"],
)
def test_evaluate_timestamp_returns_an_aware_utc_datetime(source: str) -> None:
    assert compile_cel(source).evaluate_timestamp(BINDINGS) == dt.datetime(
        2030, 1, 2, 3, 4, 5, tzinfo=dt.UTC
    )


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("'2030-01-02T03:04:05'", "has no time zone"),
        ("'soon'", "is not a timestamp"),
        ("1", "got int"),
    ],
)
def test_evaluate_timestamp_rejects_what_is_not_a_zoned_time(source: str, message: str) -> None:
    with pytest.raises(ExpressionEvaluationError, match=message):
        compile_cel(source).evaluate_timestamp(BINDINGS)


def test_loop_variables_cannot_hide_state_or_input() -> None:
    bindings = Bindings(state={"x": 1}, input=2, variables={"state": "shadow", "n": 5})
    assert compile_cel("state.x + input + n").evaluate(bindings) == 8


def test_a_template_renders_each_part() -> None:
    template = compile_template("Line ${line.id}: ${line.amount} (${[line.id, 1]})")
    assert template.render(BINDINGS) == 'Line L2: 20000 (["L2", 1])'


def test_a_template_part_may_contain_braces_and_quotes() -> None:
    template = compile_template("${ {'a': '}'}['a'] } and ${\"${x}\"}!")
    assert template.render(BINDINGS) == "} and ${x}!"


def test_a_template_without_parts_is_its_text() -> None:
    assert (
        compile_template("No parts, just $ and { }.").render(BINDINGS)
        == "No parts, just $ and { }."
    )


def test_a_template_reports_names_at_offsets_in_the_whole_text() -> None:
    template = compile_template("Hi ${state.name}, ${line.id}")
    assert (template.state_reads, template.free_variables) == (
        (NameUse("name", 5),),
        (NameUse("state", 5), NameUse("line", 20)),
    )


@pytest.mark.parametrize(
    ("text", "position", "message"),
    [
        ("Pay ${input.amount +}", Position(1, 21, 20), "unexpected end of expression"),
        ("Line\n${line.id", Position(2, 1, 5), "`${` is never closed: end the expression with `}`"),
        ("${ }", Position(1, 1, 0), "empty `${}`: put a CEL expression inside"),
    ],
)
def test_a_template_error_is_placed_in_the_whole_text(
    text: str, position: Position, message: str
) -> None:
    with pytest.raises(ExpressionSyntaxError) as caught:
        compile_template(text, node="review", field="title")
    assert (caught.value.node, caught.value.field, caught.value.position, caught.value.message) == (
        "review",
        "title",
        position,
        message,
    )


def test_plain_conversion_keeps_json_and_formats_time() -> None:
    moment = dt.datetime(2030, 1, 1, 1, 2, 3, 500000, tzinfo=dt.timezone(dt.timedelta(hours=1)))
    assert to_plain({"t": moment, "d": dt.timedelta(seconds=1.5), "l": (1, "a")}) == {
        "t": "2030-01-01T00:02:03.5Z",
        "d": "1.5s",
        "l": [1, "a"],
    }


def test_a_naive_timestamp_is_formatted_as_utc() -> None:
    assert format_timestamp(dt.datetime(2030, 1, 1)) == "2030-01-01T00:00:00Z"


def test_positions_are_clamped_to_the_text() -> None:
    assert (position_at("ab\ncd", 4), position_at("ab", 9)) == (
        Position(2, 2, 4),
        Position(1, 3, 2),
    )


def test_the_activation_holds_only_what_the_expression_reads() -> None:
    bindings = Bindings(
        state={"log": ["a"] * 3, "total": 4},
        input={"items": list(range(5)), "customer": "acme"},
        variables={"item": 7, "other": 8},
    )
    reads = compile_cel("item + state.total + size(input.customer)").reads
    assert reads is not None
    assert bindings.activation(reads) == {
        "item": 7,
        "state": {"total": 4},
        "input": {"customer": "acme"},
    }
    assert compile_cel("['x']").evaluate(bindings) == ["x"]
    whole = compile_cel("size(input) + item").reads
    assert whole is not None
    assert bindings.activation(whole) == {"item": 7, "input": bindings.input}
    bound = compile_cel("item + [1].map(item, item * 2)[0]").reads
    assert bound is not None
    assert bindings.activation(bound) == {"item": 7}
    assert compile_cel("item + [1].map(item, item * 2)[0]").evaluate(bindings) == 9


def test_a_missing_input_field_names_every_field_the_input_held() -> None:
    bindings = Bindings(state={}, input={"items": [1], "customer": "acme"})
    with pytest.raises(MissingFieldError) as caught:
        compile_cel("input.invoice.amount").evaluate(bindings)
    assert (caught.value.path, caught.value.holder) == ("input.invoice", "input")
    assert caught.value.held == ("customer", "items")
