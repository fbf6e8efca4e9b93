"""A flow's `input` schema: the JSON Schema (draft 2020-12 subset) a run's input must match.

Pure: the validator checks the schema itself (`schema_problems`), and both runtimes check a
run's input (`check_input`) before anything is stored; a subflow call checks its child's.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Final

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError, ValidationError

from engine.core.values import JSON

# The keywords Braid promises (CONTRACT.md: type/properties/required/items/enum), a few
# bounds that read the same way, and annotations. `$ref`, `pattern` and the combinators are
# left out: a schema that needs them is refused with the keyword named.
KEYWORDS: Final = frozenset(
    {
        "type", "properties", "required", "items", "enum", "const", "additionalProperties",
        "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "minLength",
        "maxLength", "minItems", "maxItems", "uniqueItems",
        "title", "description", "default", "examples", "$schema", "$comment",
    }
)  # fmt: skip
SCHEMA_VALUED: Final = ("items", "additionalProperties")


class InputRejected(ValueError):
    """A run's input that does not match its flow's `input` schema.

    `fields` maps each wrong field's path (`invoice.amount`, or `(input)` for the input as
    a whole) to what is wrong with it; the message lists them all.
    """

    def __init__(self, fields: Mapping[str, str]) -> None:
        self.fields = dict(fields)
        listed = "; ".join(f"{path}: {why}" for path, why in self.fields.items())
        super().__init__(f"the input does not match the flow's input schema: {listed}")


def schema_problems(schema: JSON) -> list[tuple[str, str]]:
    """Return (path in the document, message) for each reason the schema is unusable."""
    problems = list(_keyword_problems(schema, "input"))
    if problems:
        return problems
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as error:
        where = "".join(f"[{p!r}]" if isinstance(p, int) else f".{p}" for p in error.path)
        return [(f"input{where}", f"not a valid JSON Schema: {error.message}")]
    return []


def _keyword_problems(schema: JSON, path: str) -> list[tuple[str, str]]:
    """Report keywords outside the supported subset, walking nested schemas."""
    if isinstance(schema, bool):
        return []
    if not isinstance(schema, dict):
        return [(path, f"a schema is an object (or true/false), not {type(schema).__name__}")]
    problems = [
        (f"{path}.{key}", f"`{key}` is not supported; use " + ", ".join(
            f"`{k}`" for k in ("type", "properties", "required", "items", "enum")) + ".")
        for key in schema
        if key not in KEYWORDS
    ]  # fmt: skip
    properties = schema.get("properties")
    if isinstance(properties, dict):
        for name, inner in properties.items():
            problems += _keyword_problems(inner, f"{path}.properties.{name}")
    for key in SCHEMA_VALUED:
        if key in schema:
            problems += _keyword_problems(schema[key], f"{path}.{key}")
    return problems


def check_input(schema: JSON | None, value: JSON) -> None:
    """Raise InputRejected when the value does not match the schema (None: anything goes)."""
    if schema is None:
        return
    found: dict[str, str] = {}
    for error in Draft202012Validator(schema).iter_errors(value):
        for path, why in _explain(error):
            found.setdefault(path, why)
    if found:
        raise InputRejected({path: found[path] for path in sorted(found)})


def _explain(error: ValidationError) -> list[tuple[str, str]]:
    """Return (field path, reason) for one error; a missing required field is its own path."""
    base = [str(part) for part in error.absolute_path]
    if error.validator == "required" and isinstance(error.instance, dict):
        missing = [n for n in error.validator_value if n not in error.instance]
        return [(".".join([*base, name]), "required, but missing") for name in missing]
    if error.validator == "additionalProperties" and isinstance(error.instance, dict):
        known = error.schema.get("properties", {}) if isinstance(error.schema, dict) else {}
        extra = [name for name in error.instance if name not in known]
        return [(".".join([*base, name]), "is not a field of this input") for name in extra]
    return [(".".join(base) or "(input)", _reason(error))]


_ARTICLES: Final = {"array": "an array", "integer": "an integer", "object": "an object"}


def _reason(error: ValidationError) -> str:
    """Say what is wrong in JSON's words (jsonschema's own messages use Python's reprs)."""
    shown = json.dumps(error.instance, ensure_ascii=False)
    shown = shown if len(shown) <= 60 else shown[:57] + "..."
    if error.validator == "type":
        wanted = error.validator_value
        names = wanted if isinstance(wanted, list) else [wanted]
        listed = " or ".join(_ARTICLES.get(n, f"a {n}") for n in names)
        found = json_type(error.instance)
        return f"must be {listed}, not {found}" + ("" if error.instance is None else f" ({shown})")
    if error.validator == "enum":
        return f"must be one of {json.dumps(error.validator_value)}, not {shown}"
    if error.validator == "const":
        return f"must be {json.dumps(error.validator_value)}, not {shown}"
    return str(error.message)


def json_type(value: object) -> str:
    """Return the JSON type of a value with its article."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "an array" if isinstance(value, list) else "an object"
