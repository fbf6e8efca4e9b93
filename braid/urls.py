"""URL routes: pages per app, the REST API under /api/, health at /healthz, Prometheus's
figures at /metrics."""

from django.conf import settings
from django.contrib import admin
from django.urls import include, path
from django.utils.csp import CSP
from django.views.decorators.csp import csp_override
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from braid import favicon, health, landing, metrics
from braid.sso.logout import LogoutView
from braid.sso.urls import sso_urlpatterns

# Swagger UI's page carries one small <style> block: allow exactly that block by its hash.
SWAGGER_STYLE = "'sha256-MMpT0iDxyjALd9PdfepImGX3DBfJPXZ4IlDWdPAgtn0='"
api_docs = csp_override({**settings.SECURE_CSP, "style-src": [CSP.SELF, SWAGGER_STYLE]})(
    SpectacularSwaggerSplitView.as_view(url_name="schema")
)

urlpatterns = [
    path("", landing.home, name="home"),
    path("login/", landing.LandingLoginView.as_view(), name="login"),
    path("logout/", LogoutView.as_view(), name="logout"),
    path("healthz", health.healthz, name="healthz"),
    path("metrics", metrics.metrics, name="metrics"),
    path("favicon.ico", favicon.favicon, name="favicon"),
    path("flows/", include("designer.urls")),
    path("runs/", include("monitor.urls")),
    path("inbox/", include("approvals.urls")),
    path("tokens/", include("tokens.urls")),
    path("api/", include("braid.api_urls")),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    # Swagger UI from drf-spectacular-sidecar's local copy (no CDN), its set-up script served
    # as a file (?script), so the CSP needs no inline script.
    path("api/docs/", api_docs, name="api-docs"),
    path("admin/", admin.site.urls),
    *sso_urlpatterns(),
]

# A failure outside any view (a middleware's database read) answers as the API and the
# pages do: a 503 when the database is away, JSON under /api/ (web/api_errors.py).
handler500 = "web.api_errors.server_error"
