from django.http import HttpRequest, HttpResponse
from django.middleware.csrf import get_token
from django.shortcuts import render

from braid.auth import Role, group_names, has_role


def index(request: HttpRequest) -> HttpResponse:
    """Render the inbox page; the React entry (frontend/src/inbox.tsx) fills it in."""
    config = {
        "user": request.user.get_username(),
        "groups": list(group_names(request.user)),
        "admin": has_role(request.user, Role.ADMINS),
        "csrfToken": get_token(request),
        "api": "/api/approvals/",
        "runUrl": "/runs/{id}/",
    }
    return render(request, "approvals/index.html", {"inbox_config": config})
