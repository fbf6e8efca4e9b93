"""A session that leaves a database connection and a Redis key behind, as the workers' and
live-server tests can; test_cleanup.py runs it as its own pytest session on PostgreSQL.

Its name lacks the test_ prefix so that the suite itself never collects it.
"""

import threading

import pytest
import redis
from django.db import connection

from tests.servers import require_redis

PROBE_KEY = "braid-cleanup-probe"


@pytest.mark.django_db
def test_a_thread_keeps_a_connection_to_the_test_database_open() -> None:
    opened = threading.Event()

    def hold() -> None:
        """Connect, then block for the rest of the process, like a stuck server thread."""
        connection.ensure_connection()
        opened.set()
        threading.Event().wait()

    threading.Thread(target=hold, daemon=True).start()
    assert opened.wait(10)


def test_a_key_is_left_in_the_test_redis() -> None:
    client = redis.Redis.from_url(require_redis())
    client.set(PROBE_KEY, "left")
    assert client.get(PROBE_KEY) == b"left"
