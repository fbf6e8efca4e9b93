"""Errors that speak: a missing field names the node, the expression, the path and the input."""

from typing import Any

import pytest

from engine.core.expression_errors import MissingFieldError
from engine.core.expressions import Bindings, compile_cel
from tests.core.harness import Driver, edge, flow

START, END = {"id": "start", "type": "start"}, {"id": "done", "type": "end"}


def one_node(node: dict[str, Any], state: dict[str, str]) -> dict[str, Any]:
    """start -> node -> end."""
    return flow([START, node, END], [edge("start", node["id"]), edge(node["id"], "done")], state)


def test_a_missing_input_field_names_node_expression_field_and_what_the_input_held() -> None:
    document = one_node(
        {"id": "check", "type": "set", "values": {"total": "input.invoice.amount"}},
        {"total": "sum"},
    )
    driver = Driver(document, {"vendor": "acme", "amount": 3})

    message = (
        "node `check` values.total: `input.invoice.amount` reads `input.invoice`, which is "
        "missing; the input held `amount`, `vendor`"
    )
    assert driver.status == "failed"
    assert driver.state.error == message
    assert driver.row_table()["check"] == ("failed", "root:1", message, 1)


def test_a_missing_nested_field_names_the_object_it_was_read_from() -> None:
    document = one_node(
        {"id": "gate", "type": "if", "condition": "input.invoice.amount > 10"},
        {},
    )
    document["edges"] = [
        edge("start", "gate"),
        edge("gate", "done", outcome="true"),
        edge("gate", "done", outcome="false"),
    ]
    document["nodes"].append({"id": "other", "type": "end"})
    document["edges"][2]["target"] = "other"
    driver = Driver(document, {"invoice": {"vendor": "acme"}})

    assert driver.state.error == (
        "node `gate` condition: `input.invoice.amount > 10` reads `input.invoice.amount`, "
        "which is missing; `input.invoice` held `vendor`; the input held `invoice`"
    )


def test_an_empty_input_is_said_to_hold_no_fields() -> None:
    document = one_node(
        {"id": "check", "type": "set", "values": {"who": "input['vendor']"}},
        {"who": "overwrite"},
    )
    driver = Driver(document, {})

    assert driver.state.error == (
        "node `check` values.who: `input['vendor']` reads `input.vendor`, which is missing; "
        "the input held no fields"
    )


def test_a_missing_state_key_names_the_state_object_and_the_input() -> None:
    document = one_node(
        {"id": "pick", "type": "set", "values": {"chosen": "state.prices.gold"}},
        {"chosen": "overwrite", "prices": "merge"},
    )
    driver = Driver(document, {"tier": "gold"})

    assert driver.state.error == (
        "node `pick` values.chosen: `state.prices.gold` reads `state.prices.gold`, which is "
        "missing; `state.prices` held no fields; the input held `tier`"
    )


@pytest.mark.parametrize(
    ("input_value", "message"),
    [
        (None, "node `check` values.total: `input.invoice.amount` reads `input.invoice`, but "
               "`input` is null"),
        ({"invoice": None}, "node `check` values.total: `input.invoice.amount` reads "
                            "`input.invoice.amount`, but `input.invoice` is null; the input "
                            "held `invoice`"),
    ],
)  # fmt: skip
def test_reading_a_field_of_null_says_which_object_is_null(input_value: Any, message: str) -> None:
    document = one_node(
        {"id": "check", "type": "set", "values": {"total": "input.invoice.amount"}},
        {"total": "sum"},
    )
    assert Driver(document, input_value).state.error == message


@pytest.mark.parametrize(
    ("source", "value", "path", "holder", "held"),
    [
        ("input.a.b", {"a": {"c": 1}}, "input.a.b", "input.a", ("c",)),
        ("'input.q' + input.z", {"q": "x"}, "input.z", "input", ("q",)),
        ('input["x-y"]', {"x": 1}, "input['x-y']", "input", ("x",)),
        ("size(state.a.b) > 0", None, "state.a.b", "state.a", None),
    ],
)
def test_the_missing_path_is_found_among_the_expressions_selects(
    source: str, value: Any, path: str, holder: str, held: tuple[str, ...] | None
) -> None:
    with pytest.raises(MissingFieldError) as raised:
        compile_cel(source).evaluate(Bindings(state={"a": None}, input=value))
    assert (raised.value.path, raised.value.holder, raised.value.held) == (path, holder, held)


def test_a_missing_field_of_a_comprehension_variable_names_the_field() -> None:
    document = one_node(
        {"id": "sum", "type": "set", "values": {"total": "input.lines.map(l, l.amount)"}},
        {"total": "overwrite"},
    )
    driver = Driver(document, {"lines": [{"id": "L1"}]})
    assert driver.state.error == (
        "node `sum` values.total: `input.lines.map(l, l.amount)` failed: no such field: `amount`"
    )


def test_other_evaluation_errors_keep_their_message() -> None:
    document = one_node(
        {"id": "calc", "type": "set", "values": {"total": "1 / 0"}}, {"total": "sum"}
    )
    driver = Driver(document)
    assert driver.state.error == (
        "node `calc` values.total: `1 / 0` failed: division by zero in CEL expression"
    )
