"""Basic auth hashes a client's password once, and stops trusting that check when it should."""

from collections.abc import Iterator

import pytest
from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.models import User
from django.test import Client

from braid import lockout
from tests.django.fixture_types import DemoUsers
from tests.django.test_security__defaults import basic

pytestmark = pytest.mark.django_db


@pytest.fixture
def hashed(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Count the password checks (each a PBKDF2 in production) by user name."""
    lockout.VERIFIED.entries.clear()
    checks: list[str] = []
    original = AbstractBaseUser.check_password

    def check_password(self: AbstractBaseUser, raw_password: str | None) -> bool:
        checks.append(self.get_username())
        return original(self, raw_password)

    monkeypatch.setattr(AbstractBaseUser, "check_password", check_password)
    yield checks
    lockout.VERIFIED.entries.clear()


def status(username: str, password: str, client: Client | None = None) -> int:
    """Return the status of a Basic-auth call listing the flows."""
    return (client or Client()).get("/api/flows/", **basic(username, password)).status_code


def test_a_client_calling_again_is_not_hashed_again(demo: DemoUsers, hashed: list[str]) -> None:
    assert [status("analyst", "braid-analyst") for _ in range(3)] == [200, 200, 200]
    assert status("legal", "braid-legal") == 200
    assert hashed == ["analyst", "legal"]


def test_a_wrong_password_is_hashed_and_refused_every_time(
    demo: DemoUsers, hashed: list[str]
) -> None:
    assert status("analyst", "braid-analyst") == 200
    assert [status("analyst", "braid-analyst ") for _ in range(2)] == [403, 403]
    assert hashed == ["analyst", "analyst", "analyst"]


def test_a_new_password_ends_the_remembered_check(demo: DemoUsers, hashed: list[str]) -> None:
    assert status("analyst", "braid-analyst") == 200
    user = User.objects.get(username="analyst")
    user.set_password("a-new-one")
    user.save()
    assert status("analyst", "braid-analyst") == 403
    assert status("analyst", "a-new-one") == 200


def test_a_deactivated_user_is_refused_though_remembered(
    demo: DemoUsers, hashed: list[str]
) -> None:
    assert status("analyst", "braid-analyst") == 200
    User.objects.filter(username="analyst").update(is_active=False)
    assert status("analyst", "braid-analyst") == 403
    assert lockout.VERIFIED.entries == {}


def test_a_locked_out_address_is_refused_though_remembered(
    demo: DemoUsers, hashed: list[str]
) -> None:
    client = Client()
    assert status("analyst", "braid-analyst", client) == 200
    for _ in range(5):
        status("analyst", "wrong", client)
    locked = client.get("/api/flows/", **basic("analyst", "braid-analyst"))
    assert (locked.status_code, locked.json()["code"]) == (403, "auth.locked_out")


def test_the_check_is_trusted_for_five_minutes(
    demo: DemoUsers, hashed: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    now = [1000.0]
    monkeypatch.setattr("time.monotonic", lambda: now[0])
    assert status("analyst", "braid-analyst") == 200
    now[0] += lockout.VERIFIED_TTL_S - 1
    assert status("analyst", "braid-analyst") == 200
    now[0] += 1
    assert status("analyst", "braid-analyst") == 200
    assert hashed == ["analyst", "analyst"]


def test_the_key_is_an_hmac_that_keeps_name_and_password_apart() -> None:
    key = lockout.VerifiedCredentials.key
    assert key("a", "b:c") != key("a:b", "c")
    assert key("a\x00b", "c") != key("a", "b\x00c")
    assert len(key("analyst", "braid-analyst")) == 32
    assert b"braid-analyst" not in key("analyst", "braid-analyst")
