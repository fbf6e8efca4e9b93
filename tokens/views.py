from django.http import HttpRequest, HttpResponse
from django.middleware.csrf import get_token
from django.shortcuts import render

from web.auth import Role, has_role


def index(request: HttpRequest) -> HttpResponse:
    """Render the API tokens page; the React entry (frontend/src/tokens.tsx) fills it in."""
    config = {
        "user": request.user.get_username(),
        "admin": has_role(request.user, Role.ADMINS),
        "csrfToken": get_token(request),
        "api": "/api/tokens/",
    }
    return render(request, "tokens/index.html", {"tokens_config": config})
