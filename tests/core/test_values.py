"""Stored JSON text: `dumps` stores what `json.dumps` stored, faster, and refuses the same."""

import datetime as dt
import json

import pytest

from engine.core.values import dumps, loads_strict, not_json


@pytest.mark.parametrize(
    "value",
    [
        {"frame:1": {"id": 1, "state": "blocked", "barrier": {"kind": "foreach", "items": None}}},
        [1, -2, 2.5, 1e16, 1e-7, 0.1 + 0.2, True, False, None, "", "é 漢 🙂", '\u0000\n\t"\\'],
        {"nested": [[[{"a": [1, {"b": None}]}]]]},
        9_223_372_036_854_775_807,
    ],
)
def test_dumps_reads_back_as_what_json_dumps_reads_back(value: object) -> None:
    assert json.loads(dumps(value)) == json.loads(json.dumps(value))


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (10**30, "1000000000000000000000000000000"),  # past 64 bits: orjson refuses it
        ({"a": "\ud800"}, '{"a": "\\ud800"}'),  # a lone surrogate is not UTF-8
        ({1: "one"}, '{"1": "one"}'),  # a key not a string: json writes it as one
    ],
)
def test_dumps_falls_back_to_json_dumps_where_orjson_refuses(value: object, text: str) -> None:
    assert dumps(value) == text


def test_dumps_refuses_a_date_as_json_dumps_does() -> None:
    with pytest.raises(TypeError, match="not JSON serializable"):
        dumps({"at": dt.datetime(2026, 12, 4, tzinfo=dt.UTC)})


def test_not_json_names_the_path_of_what_json_cannot_hold() -> None:
    assert not_json({"a": [1, float("nan")]}, "the output") == (
        "the output.a[1] is nan, which JSON cannot hold"
    )
    assert not_json({"a": (1, 2)}) == (
        "the value.a is a tuple; JSON holds lists, objects, strings, numbers, booleans, null"
    )
    assert not_json({"a": {"b": [1, "x", None]}}) is None


@pytest.mark.parametrize(
    ("text", "message"),
    [("NaN", "NaN is not a JSON number"), ('{"a": 1e999}', "the number 1e999 is out of range")],
)
def test_loads_strict_refuses_what_json_has_not(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        loads_strict(text)
