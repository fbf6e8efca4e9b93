"""Pages of the designer: the flow list and a read-only view of one flow."""

from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render

from designer.models import Flow


def index(request: HttpRequest) -> HttpResponse:
    """List every flow with its latest published version number."""
    flows = Flow.objects.select_related("owner").prefetch_related("versions")
    rows = [(flow, max((v.number for v in flow.versions.all()), default=None)) for flow in flows]
    return render(request, "designer/index.html", {"rows": rows})


def detail(request: HttpRequest, slug: str) -> HttpResponse:
    """Show one flow's draft graph, read-only, and its published versions."""
    flow = get_object_or_404(Flow.objects.select_related("owner"), slug=slug)
    versions = flow.versions.select_related("published_by").order_by("-number")
    return render(request, "designer/detail.html", {"flow": flow, "versions": versions})
