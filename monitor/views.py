"""The Runs page and the run view: server-rendered shells whose data the React entries read.

Each page hands its data to the browser through `json_script` (the CSP forbids inline
script); the lists, counts and colors come from the REST API and the run sockets.
"""

from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render

from designer.models import FlowVersion
from engine.models import Run
from runs.api import visible_runs
from web.auth import group_names
from web.permissions import Act, allows

MAIN_GRAPH = "main"


def viewer(request: HttpRequest) -> dict[str, Any]:
    """Return who is looking and what they may do, for the page's script."""
    user = request.user
    return {
        "username": user.get_username(),
        "groups": list(group_names(user)),
        "can_start": allows(user, Act.START_RUNS),
        "can_administer": allows(user, Act.ADMINISTER_RUNS),
    }


def published_flows() -> list[dict[str, Any]]:
    """Return every flow's latest published version: slug, name, number and input schema."""
    latest: dict[str, FlowVersion] = {}
    versions = FlowVersion.objects.select_related("flow").defer("graph", "flow__draft")
    for version in versions.order_by("flow__slug", "number"):
        latest[version.flow.slug] = version
    # Only the latest versions' graphs are read: every graph ever published, and every
    # draft, were read to show one schema per flow.
    graphs = dict(FlowVersion.objects.filter(pk__in=[v.pk for v in latest.values()])
                  .values_list("pk", "graph"))  # fmt: skip
    return [
        {
            "slug": slug,
            "name": version.flow.name,
            "version": version.number,
            "input": graph.get("input") if isinstance(graph := graphs[version.pk], dict) else None,
        }
        for slug, version in latest.items()
    ]


def index(request: HttpRequest) -> HttpResponse:
    """The Runs page: live counts, filters and the list (admins see every run)."""
    page = {
        "viewer": viewer(request),
        "flows": published_flows(),
        "start": request.GET.get("start", ""),
    }
    return render(request, "monitor/index.html", {"page": page})


def detail(request: HttpRequest, run_id: str) -> HttpResponse:
    """One run's view: its graph colored live, the execution tree, the trace and actions."""
    runs = visible_runs(
        Run.objects.select_related("flow_version__flow", "started_by"), request.user
    )
    run = get_object_or_404(runs, pk=run_id)
    version = run.flow_version
    page = {
        "viewer": viewer(request),
        "run": {
            "id": str(run.pk),
            "label": run.label,
            "status": run.status,
            "flow": version.flow.slug if version else None,
            "version": version.number if version else None,
            "started_by": run.started_by.get_username() if run.started_by else None,
            "created_at": run.created_at.isoformat(),
            "error": run.error,
        },
        "graph": run.graphs.get(MAIN_GRAPH),
        # Every graph the run executes (main and each subflow's `slug@version`), so that
        # the view draws a subflow's child nodes inside it.
        "graphs": run.graphs,
    }
    return render(request, "monitor/detail.html", {"run": run, "page": page})
