"""The Runs page: runs the user may see, newest first."""

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from braid.auth import Role, has_role
from engine.models import Run

PAGE = 100


def index(request: HttpRequest) -> HttpResponse:
    """List runs: admins see every run, everyone else the runs they started."""
    runs = Run.objects.select_related("flow_version__flow", "started_by").order_by("-created_at")
    if not has_role(request.user, Role.ADMINS):
        runs = runs.filter(started_by=request.user)  # type: ignore[misc]
    return render(request, "monitor/index.html", {"runs": runs[:PAGE]})
