"""Login enforcement and role checks shared by pages and the API."""

from collections.abc import Callable, Sequence
from typing import Any

from django.contrib.auth.middleware import LoginRequiredMiddleware as DjangoLoginRequired
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser, PermissionsMixin, User
from django.db import models
from django.http import HttpRequest, HttpResponseBase
from rest_framework.exceptions import NotAuthenticated
from rest_framework.request import Request


class Role(models.TextChoices):
    """The Django groups that grant Braid's roles."""

    ANALYSTS = "analysts", "Analysts"
    ADMINS = "admins", "Admins"


APPROVAL_GROUPS = ("finance", "legal")


class LoginRequiredMiddleware(DjangoLoginRequired):
    """Django's login-required middleware, leaving /api/ to DRF, which answers 401/403."""

    def process_view(
        self,
        request: HttpRequest,
        view_func: Callable[..., HttpResponseBase],
        view_args: tuple[Any, ...],
        view_kwargs: dict[Any, Any],
    ) -> HttpResponseBase | None:
        if request.path_info.startswith("/api/"):
            return None
        return super().process_view(request, view_func, view_args, view_kwargs)


def has_role(
    user: AbstractBaseUser | AnonymousUser, role: Role, groups: Sequence[str] | None = None
) -> bool:
    """Return whether the user is active and in the group of the role (superusers always are).

    `groups`: the user's group names when the caller has read them (saves a query).
    """
    if not user.is_authenticated or not user.is_active:
        return False
    if getattr(user, "is_superuser", False):
        return True
    if groups is not None:
        return role.value in groups
    assert isinstance(user, PermissionsMixin)  # AUTH_USER_MODEL is auth.User, which has groups
    return user.groups.filter(name=role.value).exists()


def group_names(user: AbstractBaseUser | AnonymousUser) -> tuple[str, ...]:
    """Return the names of the user's groups, sorted (none for an anonymous user)."""
    if not user.is_authenticated:
        return ()
    assert isinstance(user, PermissionsMixin)  # AUTH_USER_MODEL is auth.User, which has groups
    return tuple(sorted(user.groups.values_list("name", flat=True)))


def caller(request: Request) -> User:
    """Return the signed-in user making an API request; the views that ask let no one else in."""
    if not isinstance(request.user, User):
        raise NotAuthenticated()
    return request.user
