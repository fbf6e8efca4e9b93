"""Login throttling with django-axes: what a locked-out caller is told, page or API."""

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from drf_spectacular.authentication import BasicScheme
from rest_framework.authentication import BasicAuthentication
from rest_framework.exceptions import APIException, AuthenticationFailed


class LockedOut(APIException):
    """A Basic-auth caller that django-axes has locked out.

    403, not 429: API clients and OpenAPI checkers read bad credentials as 401 or 403.
    """

    status_code = 403
    default_code = "auth.locked_out"


class ThrottledBasicAuthentication(BasicAuthentication):
    """DRF's Basic auth, telling a locked-out caller so (429) instead of "invalid password".

    django-axes marks the Django request it was given; DRF hands `authenticate` its own
    request wrapper, so the mark is read back here.
    """

    def authenticate_credentials(self, userid, password, request=None):  # type: ignore[no-untyped-def]
        django_request = getattr(request, "_request", request)
        try:
            return super().authenticate_credentials(userid, password, django_request)
        except AuthenticationFailed:
            if getattr(django_request, "axes_locked_out", False):
                raise LockedOut(lockout_detail()) from None
            raise


def lockout_detail() -> str:
    """Say why a login is refused and for how long."""
    minutes = int(settings.AXES_COOLOFF_TIME.total_seconds() // 60)
    return (
        f"too many failed logins for this user from this address; try again in {minutes} "
        "minutes, or ask an admin to unlock it"
    )


def locked_out(
    request: HttpRequest, original_response: HttpResponse | None = None, credentials: object = None
) -> HttpResponse:
    """Answer a login locked out by django-axes: JSON 403 for the API, a 429 page otherwise."""
    detail = lockout_detail()
    if request.path_info.startswith("/api/"):
        return JsonResponse({"code": "auth.locked_out", "detail": detail}, status=403)
    return render(request, "registration/locked_out.html", {"detail": detail}, status=429)


class ThrottledBasicScheme(BasicScheme):
    """Describe ThrottledBasicAuthentication in the OpenAPI schema as plain Basic auth."""

    target_class = "braid.lockout.ThrottledBasicAuthentication"
