"""Single sign-on's routes under /oidc/, only when BRAID_OIDC_* configures it (else none: the
paths answer 404 like any other unknown path). The names are mozilla-django-oidc's own, which
its backend reverses for the redirect URI."""

from django.conf import settings
from django.urls import URLPattern, path

from braid.sso import views


def sso_urlpatterns() -> list[URLPattern]:
    """Return the start and callback routes, or none when single sign-on is off."""
    if getattr(settings, "BRAID_SSO", None) is None:
        return []
    return [
        path("oidc/authenticate/", views.start, name="oidc_authentication_init"),
        path("oidc/callback/", views.callback, name="oidc_authentication_callback"),
    ]
