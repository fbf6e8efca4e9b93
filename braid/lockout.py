"""Login throttling with django-axes: what a locked-out caller is told, page or API; and
Basic-auth credentials verified lately, which an API client's next calls need not hash again."""

import collections
import hashlib
import hmac
import threading
import time
from typing import Any

from axes.conf import settings as axes_settings
from axes.handlers.proxy import AxesProxyHandler
from django.conf import settings
from django.contrib.auth import get_user_model
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from drf_spectacular.authentication import BasicScheme
from rest_framework.authentication import BasicAuthentication
from rest_framework.exceptions import APIException, AuthenticationFailed
from rest_framework.request import Request


class LockedOut(APIException):
    """A Basic-auth caller that django-axes has locked out.

    403, not 429: API clients and OpenAPI checkers read bad credentials as 401 or 403.
    """

    status_code = 403
    default_code = "auth.locked_out"


class VerifiedCredentials:
    """Basic-auth credentials this process verified lately, so that an API client's every
    call does not pay a password hash: PBKDF2 at Django's 1,500,000 iterations costs 0.34 s
    of CPU here, which held Basic-auth callers to a few calls a second.

    An entry is keyed by an HMAC of the user name and password under SECRET_KEY (never the
    password itself) and holds the user's id and stored password hash. It counts for
    VERIFIED_TTL_S after the check, and only while the user is active, has the same stored
    hash (a new password ends it, in every process) and is not locked out by django-axes.
    """

    def __init__(self, ttl_s: float, size: int) -> None:
        self.ttl_s = ttl_s
        self.size = size
        self.lock = threading.Lock()
        self.entries: collections.OrderedDict[bytes, tuple[int, str, float]] = (
            collections.OrderedDict()
        )

    @staticmethod
    def key(userid: str, password: str) -> bytes:
        """Return the entry key of a user name and password."""
        name = userid.encode("utf-8", "surrogatepass")
        secret = password.encode("utf-8", "surrogatepass")
        message = b"%d:%s%s" % (len(name), name, secret)  # the length keeps the pair apart
        return hmac.new(settings.SECRET_KEY.encode(), message, hashlib.sha256).digest()

    def user(self, userid: str, password: str, request: HttpRequest) -> Any | None:
        """Return the user these credentials were verified for, if that still holds."""
        key = self.key(userid, password)
        with self.lock:
            entry = self.entries.get(key)
        if entry is None:
            return None
        user_id, stored_hash, until = entry
        user = None
        if time.monotonic() < until:
            user = get_user_model()._default_manager.filter(pk=user_id).first()
        if (
            user is None
            or not user.is_active
            or not hmac.compare_digest(user.password, stored_hash)
            or AxesProxyHandler.is_locked(request, {"username": userid})
        ):
            with self.lock:
                self.entries.pop(key, None)
            return None
        return user

    def remember(self, userid: str, password: str, user: Any) -> None:
        """Record that the credentials verified as the user, now."""
        key = self.key(userid, password)
        with self.lock:
            self.entries[key] = (user.pk, user.password, time.monotonic() + self.ttl_s)
            self.entries.move_to_end(key)
            while len(self.entries) > self.size:
                self.entries.popitem(last=False)


VERIFIED_TTL_S = 300.0
VERIFIED = VerifiedCredentials(VERIFIED_TTL_S, size=1024)


class ThrottledBasicAuthentication(BasicAuthentication):
    """DRF's Basic auth, telling a locked-out caller so (403 `auth.locked_out`) instead of
    "invalid password", and hashing a password once per VERIFIED_TTL_S per process
    (VerifiedCredentials).

    django-axes marks the Django request it was given; DRF hands `authenticate` its own
    request wrapper, so the mark is read back here.
    """

    def authenticate_credentials(
        self, userid: str, password: str, request: Request | None = None
    ) -> tuple[Any, None]:
        if "\x00" in userid:  # no user has one, and PostgreSQL would refuse the lookup (500)
            raise AuthenticationFailed("Invalid username/password.")
        django_request = getattr(request, "_request", request)
        user = VERIFIED.user(userid, password, django_request) if django_request else None
        if user is not None:
            return (user, None)
        try:
            user, auth = super().authenticate_credentials(userid, password, django_request)
        except AuthenticationFailed:
            if getattr(django_request, "axes_locked_out", False):
                raise LockedOut(lockout_detail()) from None
            raise
        VERIFIED.remember(userid, password, user)
        return (user, auth)


# AccessAttempt.username is a varchar(255): PostgreSQL refused a longer name (a 500 from the
# login form and Basic auth alike, where SQLite stored it), and a NUL.
ATTEMPT_USERNAME_MAX = 255


def attempted_username(request: HttpRequest, credentials: dict[str, Any] | None = None) -> Any:
    """AXES_USERNAME_CALLABLE: the user name an attempt gave (as django-axes reads it), with
    any NUL replaced and cut to what its table stores. No user's name is that long or holds
    a NUL, so no two real names are counted as one."""
    field: str = axes_settings.AXES_USERNAME_FORM_FIELD  # django-axes gives it its default
    if credentials:
        name = credentials.get(field)
    else:
        name = getattr(request, "data", request.POST).get(field)
    if not isinstance(name, str):
        return name
    return name.replace("\x00", "\ufffd")[:ATTEMPT_USERNAME_MAX]


def single_sign_on(request: HttpRequest, credentials: dict[str, Any] | None = None) -> bool:
    """AXES_WHITELIST_CALLABLE: whether an attempt is single sign-on's callback, which
    django-axes neither counts nor locks out (braid/settings.py says why). Only that view
    passes a nonce to authenticate; the login form and Basic auth pass a user name and
    password, which no caller can add to."""
    return credentials is not None and "nonce" in credentials and "password" not in credentials


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
