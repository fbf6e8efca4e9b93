"""The API's error responses, added to every operation of the OpenAPI schema.

Every view answers errors in one shape (web/api_errors.py), and some errors can come
from any operation: a malformed parameter or body (400), no or bad credentials or a role
that may not (401, 403), an unknown object (404, where the path names one), an oversized
body (413, where there is a body), an unexpected failure (500) and a database that cannot
take the request now (503, with Retry-After). Describing them once
here keeps the schema true without repeating them on every view. Conflicts (409) are
declared by the views that can answer them.

Neither a query parameter nor a text field of a body holds a NUL character: PostgreSQL
stores and compares no text holding one, so web/api_errors.py refuses it in the query
(400 `query.nul`) and DRF's text fields in a body ("Null characters are not allowed.").
Each such parameter's and field's schema says so, so that the 400 answers a request the
schema calls invalid. (A JSON value of any shape, such as a run's input, cannot say it; the
operations taking one answer 400 `NUL_REFUSED` for it.)
"""

from typing import Any

from rest_framework import serializers


class RefusalSerializer(serializers.Serializer[Any]):
    """Why a change was refused: a stable code and a sentence."""

    code = serializers.CharField()
    detail = serializers.CharField()


ERROR: dict[str, Any] = {
    "type": "object",
    "description": "An error: a stable code and a sentence (500s add a request id).",
    "required": ["code", "detail"],
    "properties": {
        "code": {"type": "string", "example": "not_found"},
        "detail": {"type": "string"},
        "request_id": {"type": "string"},
    },
}
INVALID: dict[str, Any] = {
    "description": "Malformed input: the fields at fault with their messages, or an error.",
    "content": {"application/json": {"schema": {"type": "object", "additionalProperties": {}}}},
}


def response(description: str) -> dict[str, Any]:
    """Return an error response object."""
    return {"description": description, "content": {"application/json": {"schema": ERROR}}}


NO_NUL = r"^[^\u0000]*$"


def free_text(schema: dict[str, Any]) -> bool:
    """Return whether a schema is a string that no enum, format or pattern constrains."""
    return schema.get("type") == "string" and not {"enum", "format", "pattern"} & set(schema)


def refuse_nul_in_query(parameter: dict[str, Any]) -> None:
    """Say in a free-text query parameter's schema that it holds no NUL character."""
    schema = parameter.get("schema", {})
    if parameter.get("in") == "query" and free_text(schema):
        schema["pattern"] = NO_NUL


def refuse_nul_in_body(schema: Any, components: dict[str, Any], seen: set[str]) -> None:
    """Say in every writable free-text field a request body's schema reaches (through its
    components, properties, items and map values) that it holds no NUL character."""
    if not isinstance(schema, dict):
        return
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        if name not in seen:
            seen.add(name)
            refuse_nul_in_body(components.get(name), components, seen)
        return
    if free_text(schema) and not schema.get("readOnly"):
        schema["pattern"] = NO_NUL
    inner = [*schema.get("properties", {}).values(), schema.get("items"),
             schema.get("additionalProperties")]  # fmt: skip
    for part in ("allOf", "oneOf", "anyOf"):
        inner += schema.get(part, [])
    for child in inner:
        refuse_nul_in_body(child, components, seen)


def add_error_responses(result: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
    """drf-spectacular post-processing hook: document the errors every operation can give,
    and that no text it takes holds a NUL character."""
    components, seen = result.get("components", {}).get("schemas", {}), set[str]()
    for path, methods in result.get("paths", {}).items():
        for method, operation in methods.items():
            for parameter in operation.get("parameters", []):
                refuse_nul_in_query(parameter)
            for body in operation.get("requestBody", {}).get("content", {}).values():
                refuse_nul_in_body(body.get("schema"), components, seen)
            responses = operation.setdefault("responses", {})
            responses.setdefault("400", INVALID)
            responses.setdefault("401", response("No credentials, or wrong ones."))
            responses.setdefault("403", response("Your role may not do this, or locked out."))
            if "{" in path:
                responses.setdefault("404", response("No such object, or not yours to see."))
                # A path parameter can spell another route (`flows/import/`), which may not
                # take this method.
                responses.setdefault("405", response("The method is not allowed there."))
            if method in {"post", "put", "patch"}:
                responses.setdefault("413", response("The body is over the size limit."))
            responses.setdefault("500", response("An unexpected error; see request_id."))
            responses.setdefault(
                "503", response("The database cannot take it now; retry after Retry-After.")
            )
    return result
