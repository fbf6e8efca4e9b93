"""Demo users and groups for `braid demo` (idempotent: running it twice changes nothing)."""

from dataclasses import dataclass

from django.contrib.auth.models import Group, User
from django.db import transaction

from web.auth import APPROVAL_GROUPS, Role


@dataclass(frozen=True)
class DemoUser:
    """One demo login: its name, password, groups and whether it is staff."""

    username: str
    password: str
    groups: tuple[str, ...]
    staff: bool = False


DEMO_USERS = (
    DemoUser("analyst", "braid-analyst", (Role.ANALYSTS.value,)),
    DemoUser("finance", "braid-finance", ("finance",)),
    DemoUser("legal", "braid-legal", ("legal",)),
    DemoUser("admin", "braid-admin", (Role.ADMINS.value,), staff=True),
)


@transaction.atomic
def create_demo_users() -> tuple[DemoUser, ...]:
    """Create the groups and demo users, resetting their passwords; return the users."""
    for name in (Role.ANALYSTS.value, Role.ADMINS.value, *APPROVAL_GROUPS):
        Group.objects.get_or_create(name=name)
    for demo in DEMO_USERS:
        user, _ = User.objects.get_or_create(username=demo.username)
        user.is_staff = user.is_superuser = demo.staff
        user.is_active = True
        user.email = user.email or f"{demo.username}@braid.example"
        if not user.check_password(demo.password):
            user.set_password(demo.password)
        user.save()
        user.groups.set(Group.objects.filter(name__in=demo.groups))
    return DEMO_USERS
