"""URL routes: pages per app, the REST API under /api/, health at /healthz."""

from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path
from django.views.generic import RedirectView
from drf_spectacular.views import SpectacularAPIView

from braid import health

urlpatterns = [
    path("", RedirectView.as_view(pattern_name="designer:index"), name="home"),
    path("login/", auth_views.LoginView.as_view(redirect_authenticated_user=True), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("healthz", health.healthz, name="healthz"),
    path("flows/", include("designer.urls")),
    path("runs/", include("monitor.urls")),
    path("inbox/", include("approvals.urls")),
    path("api/", include("braid.api_urls")),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    path("admin/", admin.site.urls),
]
