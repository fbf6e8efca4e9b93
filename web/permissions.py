"""Who may do what, written once: the table every view and permission class reads.

docs/permissions.md is this table in prose, with the reasons. Roles come from Django
groups (web/auth.py): `analysts`, `admins`, and the approval groups (any other group,
such as `finance` and `legal`). A superuser has every role.
"""

from enum import StrEnum

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from rest_framework.permissions import BasePermission
from rest_framework.request import Request

from web.auth import Role, group_names

User = AbstractBaseUser | AnonymousUser


class Who(StrEnum):
    """The kinds of caller the table distinguishes."""

    ANONYMOUS = "anonymous"
    NO_GROUP = "no group"
    APPROVER = "approver"
    ANALYST = "analyst"
    ADMIN = "admin"


class Act(StrEnum):
    """What a caller may ask for."""

    READ_FLOWS = "read flows and versions"
    EDIT_FLOWS = "create, edit, import, publish and delete flows"
    START_RUNS = "start runs"
    READ_RUNS = "read runs"
    ADMINISTER_RUNS = "cancel and retry runs"
    READ_APPROVALS = "read approval requests"
    DECIDE = "decide approval requests"
    REASSIGN_APPROVALS = "reassign approval requests to anyone"
    USE_PAGES = "use the pages and the API docs"
    USE_TOKENS = "create, list and revoke their own API tokens"
    ADMINISTER_TOKENS = "list and revoke anyone's API tokens"


# How far each kind of caller may read runs: none, their own (started by them or waiting
# on their decision), or all. Deciding is further limited by each request's groups and
# segregation of duties (approvals/services.py).
OWN, ALL = "own", "all"

TABLE: dict[Act, dict[Who, bool | str]] = {
    Act.READ_FLOWS: {Who.NO_GROUP: True, Who.APPROVER: True, Who.ANALYST: True, Who.ADMIN: True},
    Act.EDIT_FLOWS: {Who.ANALYST: True, Who.ADMIN: True},
    Act.START_RUNS: {Who.APPROVER: True, Who.ANALYST: True, Who.ADMIN: True},
    Act.READ_RUNS: {Who.NO_GROUP: OWN, Who.APPROVER: OWN, Who.ANALYST: OWN, Who.ADMIN: ALL},
    Act.ADMINISTER_RUNS: {Who.ADMIN: True},
    Act.READ_APPROVALS: {Who.APPROVER: OWN, Who.ADMIN: ALL},
    Act.DECIDE: {Who.APPROVER: OWN, Who.ANALYST: OWN, Who.ADMIN: OWN},
    Act.REASSIGN_APPROVALS: {Who.ADMIN: True},
    Act.USE_PAGES: {Who.NO_GROUP: True, Who.APPROVER: True, Who.ANALYST: True, Who.ADMIN: True},
    Act.USE_TOKENS: {Who.NO_GROUP: True, Who.APPROVER: True, Who.ANALYST: True, Who.ADMIN: True},
    Act.ADMINISTER_TOKENS: {Who.ADMIN: True},
}


def who(user: User) -> Who:
    """Return the strongest kind of caller a user is, from one read of their groups (it was
    a query per role asked: three for an approver, on every permission check)."""
    if not user.is_authenticated or not user.is_active:
        return Who.ANONYMOUS
    if getattr(user, "is_superuser", False):
        return Who.ADMIN
    names = group_names(user)
    if Role.ADMINS.value in names:
        return Who.ADMIN
    if Role.ANALYSTS.value in names:
        return Who.ANALYST
    return Who.APPROVER if names else Who.NO_GROUP


def scope(user: User, act: Act) -> bool | str:
    """Return what the table grants the user for an act: False, True, OWN or ALL."""
    return TABLE[act].get(who(user), False)


def allows(user: User, act: Act) -> bool:
    """Return whether the table grants the act to the user at all."""
    return bool(scope(user, act))


class Allowed(BasePermission):
    """A DRF permission reading the table: `Allowed.to(Act.X)` (reads may use another act)."""

    act: Act = Act.READ_FLOWS
    read_act: Act | None = None

    @classmethod
    def to(cls, act: Act, read: Act | None = None) -> type["Allowed"]:
        """Return a permission class for an act (and another for safe methods)."""
        return type(f"Allowed_{act.name}", (cls,), {"act": act, "read_act": read})

    def has_permission(self, request: Request, view: object) -> bool:
        act = self.read_act if self.read_act and request.method in SAFE else self.act
        self.message = f"Your role ({who(request.user).value}) may not {act.value}."
        return allows(request.user, act)


SAFE = frozenset({"GET", "HEAD", "OPTIONS"})
