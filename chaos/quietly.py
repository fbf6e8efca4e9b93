"""Calls the chaos driver makes while faults break its connections: a failure is a default."""

import urllib.error
from collections.abc import Callable

from django.db import DatabaseError, connection


def quietly[T](call: Callable[[], T], default: T) -> T:
    """Run a database or HTTP call; on a broken connection, drop it and return the default."""
    try:
        return call()
    except (DatabaseError, urllib.error.URLError, OSError, ValueError):
        connection.close()
        return default
