"""A PostgreSQL test session drops its test database and empties the test Redis, even when a
thread still holds a connection to the database (tests/cleanup.py).

The session under test is a pytest of its own over tests/tools/leaves_a_connection_open.py,
with only pytest-django loaded and no migrations, so that it takes a few seconds.
"""

import subprocess
import sys
import uuid
from pathlib import Path

import psycopg
import pytest
import redis

from tests.processes import ROOT, base_env
from tests.servers import require_postgres, require_redis
from tests.tools.leaves_a_connection_open import PROBE_KEY

pytestmark = [pytest.mark.postgres, pytest.mark.redis]

PROBE = "tests/tools/leaves_a_connection_open.py"


def test_a_postgresql_session_drops_its_database_though_a_thread_holds_a_connection(
    tmp_path: Path,
) -> None:
    server, redis_url = require_postgres(), require_redis()
    name = f"braid_cleanup_{uuid.uuid4().hex[:8]}"
    env = base_env(DATABASE_URL=f"{server.rsplit('/', 1)[0]}/{name}",
                   BRAID_TEST_REDIS_URL=redis_url, BRAID_VAR_DIR=str(tmp_path),
                   PYTEST_DISABLE_PLUGIN_AUTOLOAD="1")  # fmt: skip
    command = [sys.executable, "-m", "pytest", "-p", "pytest_django.plugin",
               "-p", "no:cacheprovider", "--no-migrations", "-q", PROBE]  # fmt: skip
    try:
        result = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True,
                                timeout=120)  # fmt: skip
        summary = [line for line in result.stdout.splitlines() if line.startswith("braid: ")]
        with psycopg.connect(server, autocommit=True) as conn:
            left = conn.execute(
                "SELECT datname FROM pg_database WHERE datname = %s", [f"test_{name}"]
            ).fetchall()
    finally:
        with psycopg.connect(server, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "test_{name}" WITH (FORCE)')
    assert result.returncode == 0, result.stdout + result.stderr
    assert summary == [
        "braid: passed tests by backing part: database:postgresql=1",
        f"braid: ended 1 connection(s) left open to test_{name}",
        f"braid: dropped test_{name}",
        f"braid: emptied the test Redis at {redis_url}",
    ]
    assert "being accessed by other users" not in result.stdout
    assert left == []
    assert redis.Redis.from_url(redis_url).exists(PROBE_KEY) == 0
