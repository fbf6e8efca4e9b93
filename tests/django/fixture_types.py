"""Types of the shared fixtures in tests/django/conftest.py, for test signatures."""

from collections.abc import Callable

from django.contrib.auth.models import User
from django.test import Client

type DemoUsers = dict[str, User]
"""The demo users by user name (`demo_users`, `demo`)."""

type ClientFor = Callable[[str], Client]
"""A function giving a client logged in as one demo user (`client_for`)."""
