"""A flow's `input` schema: the validator checks it, runs and subflow calls are held to it."""

import json
from pathlib import Path
from typing import Any

import pytest

from engine.core.graph import Graph
from engine.core.inputs import InputRejected, check_input, schema_problems
from engine.core.validation import validate
from engine.core.values import JSON
from tests.core.harness import Driver, edge, flow

DEMO = Path(__file__).resolve().parents[2] / "designer" / "demo_flows"
START, END = {"id": "start", "type": "start"}, {"id": "done", "type": "end"}
INVOICE_SCHEMA: JSON = {
    "type": "object",
    "properties": {
        "invoice": {
            "type": "object",
            "properties": {"id": {"type": "string"}, "amount": {"type": "number"}},
            "required": ["id", "amount"],
        },
        "kind": {"enum": ["goods", "services"]},
        "tags": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["invoice"],
}


def simple(schema: Any) -> dict[str, Any]:
    """start -> end with an `input` schema."""
    document = flow([START, END], [edge("start", "done")])
    document["input"] = schema
    return document


def test_the_schema_survives_decoding_and_round_trips() -> None:
    graph = Graph.from_json(simple(INVOICE_SCHEMA))
    assert graph.input == INVOICE_SCHEMA
    assert graph.to_json()["input"] == INVOICE_SCHEMA
    assert validate(simple(INVOICE_SCHEMA)).errors == ()


@pytest.mark.parametrize(
    ("schema", "field", "message"),
    [
        (
            {"type": "objekt"},
            "input.type",
            "`input.type`: not a valid JSON Schema: 'objekt' is not valid under any of the "
            "given schemas",
        ),
        (
            {"properties": {"id": {"$ref": "#/defs/id"}}},
            "input.properties.id.$ref",
            "`input.properties.id.$ref`: `$ref` is not supported; use `type`, `properties`, "
            "`required`, `items`, `enum`.",
        ),
        ({"required": "id"}, "input.required", None),
    ],
)
def test_the_validator_refuses_a_schema_that_is_not_a_valid_schema(
    schema: Any, field: str, message: str | None
) -> None:
    report = validate(simple(schema))
    assert [(p.code.value, p.field) for p in report.errors] == [("input.schema_invalid", field)]
    if message is not None:
        assert report.errors[0].message == message


def test_an_input_that_is_not_an_object_is_a_format_error() -> None:
    report = validate(simple(["not", "a", "schema"]))
    assert [(p.code.value, p.field) for p in report.errors] == [("field.type", "input")]


@pytest.mark.parametrize(
    ("value", "fields"),
    [
        ({}, {"invoice": "required, but missing"}),
        ({"invoice": {"id": "I-1"}}, {"invoice.amount": "required, but missing"}),
        (
            {"invoice": {"id": 7, "amount": "ten"}, "kind": "rent"},
            {
                "invoice.amount": 'must be a number, not a string ("ten")',
                "invoice.id": "must be a string, not a number (7)",
                "kind": 'must be one of ["goods", "services"], not "rent"',
            },
        ),
        (
            {"invoice": {"id": "I", "amount": 1}, "tags": ["a", 2]},
            {"tags.1": "must be a string, not a number (2)"},
        ),
        ([], {"(input)": "must be an object, not an array ([])"}),
        (None, {"(input)": "must be an object, not null"}),
    ],
)
def test_a_wrong_input_is_rejected_naming_each_wrong_field(
    value: Any, fields: dict[str, str]
) -> None:
    with pytest.raises(InputRejected) as raised:
        check_input(INVOICE_SCHEMA, value)
    assert raised.value.fields == fields
    listed = "; ".join(f"{path}: {why}" for path, why in fields.items())
    assert str(raised.value) == f"the input does not match the flow's input schema: {listed}"


def test_a_matching_input_and_a_flow_without_schema_pass() -> None:
    check_input(INVOICE_SCHEMA, {"invoice": {"id": "I-1", "amount": 3}, "kind": "goods"})
    check_input(None, ["anything"])


def test_a_field_outside_a_closed_object_is_named() -> None:
    schema: JSON = {"type": "object", "properties": {"a": {}}, "additionalProperties": False}
    with pytest.raises(InputRejected) as raised:
        check_input(schema, {"a": 1, "b": 2, "c": 3})
    assert raised.value.fields == {
        "b": "is not a field of this input",
        "c": "is not a field of this input",
    }


def test_a_subflow_call_whose_input_misses_the_childs_schema_fails_the_call() -> None:
    child = flow([START, END], [edge("start", "done")])
    child["input"] = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    parent = flow(
        [START, {"id": "call", "type": "subflow", "flow": "child",
                 "input": {"n": "'three'"}}, END],
        [edge("start", "call"), edge("call", "done")],
    )  # fmt: skip
    driver = Driver(parent, subflows={"child@latest": child})

    message = (
        "subflow child@latest: the input does not match the flow's input schema: "
        'n: must be an integer, not a string ("three")'
    )
    assert (driver.status, driver.state.error) == ("failed", message)
    assert driver.row_table()["call"] == ("failed", "root:1", message, 1)


@pytest.mark.parametrize("path", sorted(DEMO.glob("*.json")), ids=lambda p: p.stem)
def test_every_demo_flow_declares_a_valid_input_schema(path: Path) -> None:
    document = json.loads(path.read_text())
    assert document["input"]["type"] == "object"
    assert schema_problems(document["input"]) == []
