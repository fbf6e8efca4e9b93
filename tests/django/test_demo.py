"""`braid demo` creates the demo groups and users, and running it twice changes nothing."""

import pytest
from django.contrib.auth.models import Group, User
from django.core.management import call_command


def memberships() -> dict[str, list[str]]:
    """Return each user's groups, sorted."""
    return {
        user.username: sorted(user.groups.values_list("name", flat=True))
        for user in User.objects.order_by("username")
    }


@pytest.mark.django_db
def test_demo_creates_an_analyst_two_approvers_and_an_admin(
    capsys: pytest.CaptureFixture[str],
) -> None:
    call_command("braid", "demo")
    assert memberships() == {
        "admin": ["admins"],
        "analyst": ["analysts"],
        "finance": ["finance"],
        "legal": ["legal"],
    }
    assert sorted(Group.objects.values_list("name", flat=True)) == [
        "admins",
        "analysts",
        "finance",
        "legal",
    ]
    assert "analyst   braid-analyst" in capsys.readouterr().out
    assert User.objects.get(username="admin").is_staff


@pytest.mark.django_db
def test_running_demo_twice_changes_nothing_and_restores_a_changed_password() -> None:
    call_command("braid", "demo")
    user = User.objects.get(username="legal")
    user.set_password("changed")
    user.save()
    call_command("braid", "demo")
    assert User.objects.count() == 4
    assert Group.objects.count() == 4
    assert User.objects.get(username="legal").check_password("braid-legal")
