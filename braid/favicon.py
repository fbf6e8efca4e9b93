"""/favicon.ico: the Braid icon, for browsers that ask for it whatever a page links."""

from functools import cache

from django.conf import settings
from django.contrib.auth.decorators import login_not_required
from django.http import HttpRequest, HttpResponse
from django.views.decorators.http import require_safe

ICON = settings.BASE_DIR / "static" / "braid" / "favicon.svg"


@cache
def icon_bytes() -> bytes:
    """Return the SVG icon's bytes (read once a process)."""
    return ICON.read_bytes()


@login_not_required
@require_safe
def favicon(request: HttpRequest) -> HttpResponse:
    """Answer the icon as SVG, cacheable for a day; it needs no login."""
    response = HttpResponse(icon_bytes(), content_type="image/svg+xml")
    response["Cache-Control"] = "public, max-age=86400"
    return response
