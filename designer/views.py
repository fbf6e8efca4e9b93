"""Pages of the designer: the flow list and the editor of one flow."""

from django.contrib.auth.models import Group
from django.db.models import Prefetch
from django.http import HttpRequest, HttpResponse
from django.middleware.csrf import get_token
from django.shortcuts import get_object_or_404, render

from designer.models import Flow, FlowVersion
from web.auth import Role
from web.permissions import Act, allows


def index(request: HttpRequest) -> HttpResponse:
    """List every flow with its latest published version and who published it."""
    # Neither a draft nor a version's graph is shown: both grow with the flow, and loading
    # them read every graph ever published to list the names.
    versions = FlowVersion.objects.select_related("published_by").defer("graph")
    flows = (Flow.objects.select_related("owner").defer("draft")
             .prefetch_related(Prefetch("versions", queryset=versions)))  # fmt: skip
    rows = []
    for flow in flows:
        latest = max(flow.versions.all(), key=lambda v: v.number, default=None)
        rows.append(
            {
                "slug": flow.slug,
                "name": flow.name,
                "owner": flow.owner.get_username(),
                "updated_at": flow.updated_at.isoformat(),
                "latest_version": None if latest is None else latest.number,
                "published_by": None if latest is None else latest.published_by.get_username(),
                "published_at": None if latest is None else latest.published_at.isoformat(),
            }
        )
    page = {
        "flows": rows,
        "can_edit": allows(request.user, Act.EDIT_FLOWS),
        "csrf_token": get_token(request),
    }
    return render(request, "designer/index.html", {"rows": rows, "page": page})


def detail(request: HttpRequest, slug: str) -> HttpResponse:
    """The editor of one flow's draft; read-only for callers who may not edit flows."""
    flow = get_object_or_404(Flow.objects.select_related("owner"), slug=slug)
    latest = flow.latest_version()
    page = {
        "slug": flow.slug,
        "name": flow.name,
        "can_edit": allows(request.user, Act.EDIT_FLOWS),
        "csrf_token": get_token(request),
        "draft": flow.draft,
        "revision": flow.revision,
        "latest_version": None if latest is None else latest.number,
        # The approval groups an approval node can name: every group but the role groups.
        "approval_groups": list(
            Group.objects.exclude(name__in=Role.values)
            .order_by("name")
            .values_list("name", flat=True)
        ),
    }
    return render(request, "designer/detail.html", {"flow": flow, "page": page})
