"""Login enforcement and role checks shared by pages and the API."""

from django.contrib.auth.middleware import LoginRequiredMiddleware as DjangoLoginRequired
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db import models


class Role(models.TextChoices):
    """The Django groups that grant Braid's roles."""

    ANALYSTS = "analysts", "Analysts"
    ADMINS = "admins", "Admins"


APPROVAL_GROUPS = ("finance", "legal")


class LoginRequiredMiddleware(DjangoLoginRequired):
    """Django's login-required middleware, leaving /api/ to DRF, which answers 401/403."""

    def process_view(self, request, view_func, view_args, view_kwargs):  # type: ignore[no-untyped-def]
        if request.path_info.startswith("/api/"):
            return None
        return super().process_view(request, view_func, view_args, view_kwargs)


def has_role(user: AbstractBaseUser | AnonymousUser, role: Role) -> bool:
    """Return whether the user is active and in the group of the role (superusers always are)."""
    if not user.is_authenticated or not user.is_active:
        return False
    if getattr(user, "is_superuser", False):
        return True
    return user.groups.filter(name=role.value).exists()  # type: ignore[union-attr]


def group_names(user: AbstractBaseUser | AnonymousUser) -> tuple[str, ...]:
    """Return the names of the user's groups, sorted (none for an anonymous user)."""
    if not user.is_authenticated:
        return ()
    return tuple(sorted(user.groups.values_list("name", flat=True)))  # type: ignore[union-attr]
