"""Fixtures for Django tests: demo users, demo flows and logged-in clients."""

import io
from collections.abc import Iterator

import pytest
from asgiref.sync import async_to_sync
from channels.layers import InMemoryChannelLayer, get_channel_layer
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import Client
from pytest_django import Settings

from braid.demo import create_demo_users
from engine.live import PUBLISHER
from tests.django.fixture_types import ClientFor, DemoUsers


@pytest.fixture
def demo_users(db: None) -> DemoUsers:
    """Create the demo groups and users; return them by user name."""
    create_demo_users()
    return {user.username: user for user in User.objects.all()}


@pytest.fixture
def demo(demo_users: DemoUsers) -> DemoUsers:
    """Demo users and published demo flows."""
    call_command("braid", "demo", stdout=io.StringIO())
    return demo_users


@pytest.fixture
def client_for(demo_users: DemoUsers) -> ClientFor:
    """Return a function giving a client logged in as one demo user."""

    def login(username: str) -> Client:
        client = Client()
        client.force_login(demo_users[username])
        return client

    return login


@pytest.fixture(autouse=True)
def fast_password_hashing(settings: Settings) -> None:
    """Hash passwords with MD5 in tests: PBKDF2's deliberate cost is ~1 s a user here."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture(autouse=True)
def live_notices_stay_in_their_test() -> Iterator[None]:
    """Forget the live publisher's pending notices and the in-memory layer's groups after
    each test: ids are reused from test to test, so a notice one test left (a deleted
    user's `session.ended`) would close the next test's socket of the same user id."""
    yield
    with PUBLISHER.lock:
        PUBLISHER.dirty.clear()
        PUBLISHER.listed.clear()
        PUBLISHER.notices.clear()
    PUBLISHER.serving_loop = None
    layer = get_channel_layer()
    if isinstance(layer, InMemoryChannelLayer):
        async_to_sync(layer.flush)()
