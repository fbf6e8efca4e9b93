"""Types the Django tests share: of the fixtures in tests/django/conftest.py and of what the
test client answers."""

from collections.abc import Callable
from typing import TYPE_CHECKING

from django.contrib.auth.models import User
from django.test import Client

if TYPE_CHECKING:  # django-stubs' name for the test client's response; no class at run time
    from django.test.client import _MonkeyPatchedWSGIResponse

type DemoUsers = dict[str, User]
"""The demo users by user name (`demo_users`, `demo`)."""

type ClientFor = Callable[[str], Client]
"""A function giving a client logged in as one demo user (`client_for`)."""

type TestResponse = _MonkeyPatchedWSGIResponse
"""What the test client answers: a response with `.json()` and the request it served."""
