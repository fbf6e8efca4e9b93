"""One error shape for the whole API: `{"code", "detail"}`, JSON at every status.

DRF answers its own exceptions; everything else an API view raises becomes a JSON 500 with
a request id that the log repeats beside the traceback (the request's own, as its
X-Request-ID header says: web.request_ids), except the database's own failures: it
refused the connection, ended it, or gave the transaction up (a deadlock, a serialization
failure). Those are a 503 `server.unavailable` with Retry-After: the transaction that
failed rolled back, and the writes a client may repeat are safe to send again (a start
with its Idempotency-Key starts one run; a second decision by one person is refused).

Bodies over the upload limit get 413 before they are read, and unknown URLs under /api/
get a JSON 404 instead of a page. A NUL character in the URL or a query parameter is
refused before any view reads it (404 in the path, 400 `query.nul` in the query, naming
the parameters in `fields`): PostgreSQL can compare no text holding one, and nothing the
API stores holds one.
"""

import logging
import sys
import uuid
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.db import InterfaceError, OperationalError
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.template import loader
from rest_framework.exceptions import APIException, ValidationError
from rest_framework.pagination import LimitOffsetPagination
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView, exception_handler

from web.request_ids import current_request_id

logger = logging.getLogger("braid.api")

# The largest values the database's integer columns hold: an id (BigAutoField) and a
# number such as a version or a revision (PositiveIntegerField). Input past them is a 400
# (or a 404 in a path), never a query: SQLite raises OverflowError on such a parameter.
ID_MAX = 2**63 - 1
NUMBER_MAX = 2**31 - 1
NUL = "\x00"
NUL_IN_QUERY = "a NUL character (\\u0000) cannot be searched for"
# The database's failures that say "not now" rather than "this request is wrong".
UNAVAILABLE = (OperationalError, InterfaceError)
RETRY_AFTER_S = 2


def error(code: str, detail: str, status: int, **extra: object) -> JsonResponse:
    """Return the API's error body as a plain Django response."""
    return JsonResponse({"code": code, "detail": detail, **extra}, status=status)


def too_large() -> JsonResponse:
    """Return the 413 for a body over DATA_UPLOAD_MAX_MEMORY_SIZE."""
    return JsonResponse(too_large_body(), status=413)


def handle_exception(exc: Exception, context: dict[str, Any]) -> Response:
    """DRF's EXCEPTION_HANDLER: DRF's answers with a `code`, and a JSON 500 for the rest."""
    if isinstance(exc, RequestDataTooBig):
        return Response(too_large_body(), status=413)
    response = exception_handler(exc, context)
    if response is not None:
        if isinstance(response.data, dict) and set(response.data) == {"detail"}:
            response.data = {"code": error_code(exc), "detail": response.data["detail"]}
        return response
    request_id = current_request_id() or uuid.uuid4().hex
    path = getattr(context.get("request"), "path", "?")
    body, status = failed(request_id, path, exc)
    return Response(body, status=status, headers=retry_header(status))


def error_code(exc: Exception) -> str:
    """Return the stable code of an exception DRF answered."""
    if isinstance(exc, APIException):
        codes = exc.get_codes()
        return codes if isinstance(codes, str) else exc.default_code
    if isinstance(exc, Http404):
        return "not_found"
    return "permission_denied"  # the only other one DRF answers: Django's PermissionDenied


def too_large_body() -> dict[str, object]:
    """Return the 413 body for a body over DATA_UPLOAD_MAX_MEMORY_SIZE."""
    limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    return {
        "code": "request.too_large",
        "detail": f"the request body is over the limit of {limit:,} bytes",
    }


def failed(request_id: str, path: str, exc: BaseException) -> tuple[dict[str, object], int]:
    """Log an exception no view answered; return the body and status to answer it with."""
    if isinstance(exc, UNAVAILABLE):
        logger.warning("request %s to %s: the database is unavailable: %s", request_id, path,
                       exc)  # fmt: skip
        return unavailable_body(request_id), 503
    logger.error("request %s to %s failed", request_id, path, exc_info=exc)
    return server_error_body(request_id), 500


def retry_header(status: int) -> dict[str, str]:
    """Retry-After for a 503; nothing for a 500, which a retry would not mend."""
    return {"Retry-After": str(RETRY_AFTER_S)} if status == 503 else {}


def unavailable_body(request_id: str) -> dict[str, object]:
    """Return the 503 body: the database cannot take the request now; send it again."""
    return {
        "code": "server.unavailable",
        "detail": "the database cannot be reached or gave the transaction up; try again in "
        f"{RETRY_AFTER_S} s (the log has it as request {request_id})",
        "request_id": request_id,
    }


def server_error_body(request_id: str) -> dict[str, object]:
    """Return the 500 body: no internals, only an id to find the traceback in the log."""
    return {
        "code": "server.error",
        "detail": f"an unexpected error occurred; the log has it as request {request_id}",
        "request_id": request_id,
    }


def server_error(request: HttpRequest) -> HttpResponse:
    """Django's handler500: what escaped a middleware, or a view nothing else answered (a
    session read while the database restarts fails in the middleware, before any view).

    Django calls it while handling the exception, which `sys.exc_info` still holds: the
    database's failures are a 503 with Retry-After, the rest a 500; JSON under /api/, the
    page elsewhere. Django's own handler has already logged the traceback.
    """
    unavailable = isinstance(sys.exc_info()[1], UNAVAILABLE)
    status = 503 if unavailable else 500
    if request.path_info.startswith("/api/"):
        request_id = current_request_id() or uuid.uuid4().hex
        body = unavailable_body(request_id) if unavailable else server_error_body(request_id)
        return JsonResponse(body, status=status, headers=retry_header(status))
    page = loader.get_template(f"{status}.html").render()
    return HttpResponse(page, status=status, headers=retry_header(status))


class ApiErrorsMiddleware:
    """413 before an oversized API body is read; JSON 404 and 500 for the rest of /api/."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if not request.path_info.startswith("/api/"):
            return self.get_response(request)
        if declared_length(request) > settings.DATA_UPLOAD_MAX_MEMORY_SIZE:
            return too_large()
        if NUL in request.path_info:
            return error("not_found", "no API resource has a NUL character in its URL", 404)
        if nul := holding_nul(request):
            detail = f"{NUL_IN_QUERY}: {', '.join(nul)}"
            return error("query.nul", detail, 400, fields=dict.fromkeys(nul, NUL_IN_QUERY))
        response = self.get_response(request)
        if response.status_code == 404 and not is_json(response):
            return error("not_found", f"no API resource at {request.path}", 404)
        return response

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        """Answer what escaped a non-DRF API view (DRF views answer their own)."""
        if not request.path_info.startswith("/api/"):
            return None
        if isinstance(exception, RequestDataTooBig):
            return too_large()
        request_id = current_request_id() or uuid.uuid4().hex
        body, status = failed(request_id, request.path, exception)
        return JsonResponse(body, status=status, headers=retry_header(status))


def declared_length(request: HttpRequest) -> int:
    """Return the Content-Length the client declared (0 when absent or unreadable)."""
    try:
        return int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        return 0


def holding_nul(request: HttpRequest) -> list[str]:
    """Return the query parameters whose name or any value holds a NUL, sorted."""
    return sorted({name for name, values in request.GET.lists() if NUL in name + "".join(values)})


def is_json(response: HttpResponse) -> bool:
    """Return whether a response already carries JSON."""
    return response.get("Content-Type", "").startswith("application/json")


class StrictLimitOffsetPagination(LimitOffsetPagination):
    """`limit` and `offset` as DRF takes them, but a malformed or huge one is a 400."""

    max_limit = 500
    max_offset = 1_000_000

    def get_limit(self, request: Request) -> int | None:
        raw = request.query_params.get(self.limit_query_param)
        if raw is None:
            return self.default_limit
        return bounded(self.limit_query_param, raw, 1, self.max_limit)

    def get_offset(self, request: Request) -> int:
        raw = request.query_params.get(self.offset_query_param)
        if raw is None:
            return 0
        return bounded(self.offset_query_param, raw, 0, self.max_offset)

    def get_schema_operation_parameters(self, view: APIView) -> list[dict[str, Any]]:
        parameters = super().get_schema_operation_parameters(view)
        bounds = {
            self.limit_query_param: (1, self.max_limit),
            self.offset_query_param: (0, self.max_offset),
        }
        for parameter in parameters:
            low, high = bounds[parameter["name"]]
            parameter["schema"] |= {"minimum": low, "maximum": high}
        return parameters


def bounded(name: str, raw: str, low: int, high: int) -> int:
    """Return a query parameter as an integer in [low, high], or raise a 400 naming it."""
    if not raw.isascii() or not raw.isdigit() or len(raw) > 12 or not low <= int(raw) <= high:
        raise ValidationError({name: f"must be a whole number from {low:,} to {high:,}"})
    return int(raw)
