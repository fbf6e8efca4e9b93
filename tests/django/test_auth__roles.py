"""The kind of caller a user is, read from their groups in one query."""

import pytest
from django.contrib.auth.models import Group, User
from pytest_django import DjangoAssertNumQueries

from web.auth import Role, has_role
from web.permissions import Who, who

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("groups", "kind"),
    [
        ((), Who.NO_GROUP),
        (("finance",), Who.APPROVER),
        (("finance", "analysts"), Who.ANALYST),
        (("analysts", "admins"), Who.ADMIN),
        (("admins",), Who.ADMIN),
    ],
)
def test_each_kind_of_caller_takes_one_query(
    groups: tuple[str, ...], kind: Who, django_assert_num_queries: DjangoAssertNumQueries
) -> None:
    user = User.objects.create_user("someone")
    user.groups.set([Group.objects.get_or_create(name=name)[0] for name in groups])
    with django_assert_num_queries(1):
        assert who(user) == kind
    assert has_role(user, Role.ADMINS) == (kind == Who.ADMIN)
    with django_assert_num_queries(0):  # the groups a caller read already
        assert has_role(user, Role.ADMINS, groups) == (kind == Who.ADMIN)


def test_a_superuser_is_an_admin_without_a_query_and_an_inactive_user_is_nobody(
    django_assert_num_queries: DjangoAssertNumQueries,
) -> None:
    root = User.objects.create_superuser("root")
    gone = User.objects.create_user("gone", is_active=False)
    gone.groups.add(Group.objects.create(name="admins"))
    with django_assert_num_queries(0):
        assert (who(root), who(gone)) == (Who.ADMIN, Who.ANONYMOUS)
        assert (has_role(root, Role.ADMINS, ()), has_role(gone, Role.ADMINS, ("admins",))) == (
            True,
            False,
        )
