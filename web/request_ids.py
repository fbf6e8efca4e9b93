"""Every request gets an id: the caller's X-Request-ID when it is a sane one (a proxy's or a
load balancer's, so one id follows a request through every hop), else a new one. The id is
in the log context of everything the request logs (engine.log_context) and goes back in
the response's X-Request-ID; a 500's JSON body names the same id (web.api_errors)."""

import re
import uuid
from collections.abc import Callable

from django.http import HttpRequest, HttpResponseBase

from engine.log_context import REQUEST_ID, REQUEST_ID_ATTRIBUTE

HEADER = "X-Request-ID"
# Letters, digits and . _ : - up to 128: UUIDs, hex ids and the usual proxies' ids fit, and
# nothing that could split a log line, forge a JSON field or fill a disk does.
SANE = re.compile(r"[A-Za-z0-9._:-]{1,128}")


def request_id_of(request: HttpRequest) -> str:
    """Return the caller's request id if it is sane, else a new one."""
    given = request.headers.get(HEADER, "")
    return given if SANE.fullmatch(given) else uuid.uuid4().hex


def current_request_id() -> str:
    """Return the id of the request being served in this context, or "" outside one."""
    return REQUEST_ID.get()


class RequestIdMiddleware:
    """Sets the request's id for its log lines and returns it in X-Request-ID."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        request_id = request_id_of(request)
        setattr(request, REQUEST_ID_ATTRIBUTE, request_id)
        token = REQUEST_ID.set(request_id)
        try:
            response = self.get_response(request)
        finally:
            REQUEST_ID.reset(token)
        response[HEADER] = request_id
        return response
