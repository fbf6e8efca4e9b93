"""The API's error responses, added to every operation of the OpenAPI schema.

Every view answers errors in one shape (braid/api_errors.py), and some errors can come
from any operation: a malformed parameter or body (400), no or bad credentials or a role
that may not (401, 403), an unknown object (404, where the path names one), an oversized
body (413, where there is a body) and an unexpected failure (500). Describing them once
here keeps the schema true without repeating them on every view. Conflicts (409) are
declared by the views that can answer them.
"""

from typing import Any

from rest_framework import serializers


class RefusalSerializer(serializers.Serializer):
    """Why a change was refused: a stable code and a sentence."""

    code = serializers.CharField()
    detail = serializers.CharField()


ERROR = {
    "type": "object",
    "description": "An error: a stable code and a sentence (500s add a request id).",
    "required": ["code", "detail"],
    "properties": {
        "code": {"type": "string", "example": "not_found"},
        "detail": {"type": "string"},
        "request_id": {"type": "string"},
    },
}
INVALID = {
    "description": "Malformed input: the fields at fault with their messages, or an error.",
    "content": {"application/json": {"schema": {"type": "object", "additionalProperties": {}}}},
}


def response(description: str) -> dict[str, Any]:
    """Return an error response object."""
    return {"description": description, "content": {"application/json": {"schema": ERROR}}}


def add_error_responses(result: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
    """drf-spectacular post-processing hook: document the errors every operation can give."""
    for path, methods in result.get("paths", {}).items():
        for method, operation in methods.items():
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
    return result
