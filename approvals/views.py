from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.middleware.csrf import get_token
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from approvals import notify
from web.auth import Role, group_names, has_role


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


@require_http_methods(["GET", "POST"])
def notifications(request: HttpRequest) -> HttpResponse:
    """Show and change the person's approval email setting (a form, no script)."""
    if request.method == "POST":
        on = request.POST.get("email_requests") == "on"
        notify.set_emails(request.user, on)
        messages.success(request, f"Approval emails are {'on' if on else 'off'}.")
        return redirect("approvals:notifications")
    context = {
        "email_requests": notify.emails_on(request.user),
        "email": getattr(request.user, "email", ""),
    }
    return render(request, "approvals/notifications.html", context)
