"""What a test session leaves behind: the PostgreSQL pass's test database, the test Redis.

PostgreSQL refuses to drop a database while anyone is connected to it, and a thread that a
test started (a live server, a socket consumer's sync_to_async worker, the embedded worker)
may still hold a connection when the session ends. pytest-django then only warns
("database ... is being accessed by other users") and leaves test_<name> behind. So before
the drop the session ends every other connection to each test database it created, and
after the drop it checks that they are gone, failing the session when one is not.

The test Redis (`BRAID_TEST_REDIS_URL`, database 15 unless set) belongs to the suite: the
Celery workers' tests fill it with queues and bindings, so a session that used it empties
it at the end.
"""

from dataclasses import dataclass, field
from typing import Any

import psycopg
import redis
from django.conf import settings
from django.db import connections

from tests.servers import used_redis

# The databases' own names, read before pytest-django renames them to their test databases:
# a connection whose name differs at the end is on a test database this session created.
ORIGINAL_NAMES = {alias: str(db["NAME"]) for alias, db in settings.DATABASES.items()}


@dataclass
class Cleanup:
    """What this session cleaned up, for the summary, and what it could not."""

    test_databases: dict[str, dict[str, Any]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


session = Cleanup()


def end_other_connections() -> None:
    """End every other client's connection to each PostgreSQL test database of the session,
    so that the drop that follows cannot be refused."""
    for connection in connections.all():
        name = str(connection.settings_dict["NAME"])
        if connection.vendor != "postgresql" or name == ORIGINAL_NAMES.get(connection.alias):
            continue
        session.test_databases[name] = dict(connection.settings_dict)
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT count(*) FILTER (WHERE pg_terminate_backend(pid)) FROM pg_stat_activity"
                " WHERE datname = current_database() AND pid <> pg_backend_pid()"
                " AND backend_type = 'client backend'"
            )
            row = cursor.fetchone()
        ended = int(row[0]) if row else 0
        if ended:
            session.notes.append(f"ended {ended} connection(s) left open to {name}")


def check_dropped() -> None:
    """Record a problem for each test database that still exists after the drop."""
    for name, db in session.test_databases.items():
        with psycopg.connect(
            host=db["HOST"] or None, port=db["PORT"] or None, user=db["USER"] or None,
            password=db["PASSWORD"] or None, dbname="postgres", autocommit=True,
        ) as conn:  # fmt: skip
            row = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone()
        if row:
            session.problems.append(f"the test database {name} was not dropped; drop it by hand")
        else:
            session.notes.append(f"dropped {name}")


def empty_redis() -> None:
    """Delete every key in each test Redis database the session used."""
    for url in sorted(used_redis):
        try:
            redis.Redis.from_url(url).flushdb()
        except redis.RedisError as error:
            session.problems.append(f"could not empty the test Redis at {url}: {error}")
        else:
            session.notes.append(f"emptied the test Redis at {url}")
