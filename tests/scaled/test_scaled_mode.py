"""Scaled mode: Daphne and two `celery worker` processes over PostgreSQL and Redis."""

import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from tests.processes import Browserless, scaled_serving
from tests.servers import require_postgres, require_redis

pytestmark = [pytest.mark.redis, pytest.mark.postgres]


@pytest.fixture
def scaled_database() -> Iterator[str]:
    """Create a fresh PostgreSQL database for the processes; drop it afterwards."""
    url = require_postgres()
    name = f"braid_scaled_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    yield url.rsplit("/", 1)[0] + "/" + name
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def test_healthz_sees_postgresql_redis_and_both_worker_processes(
    scaled_database: str, tmp_path: Path
) -> None:
    with scaled_serving(scaled_database, require_redis(), tmp_path, workers=2) as base_url:
        client = Browserless(base_url)
        client.login("admin", "braid-admin")
        status, report = wait_for_workers(client, expected=2)
    assert status == 200, report
    assert report["mode"] == "scaled"
    assert report["checks"]["database"] == {"ok": True, "detail": "postgresql"}
    assert report["checks"]["broker"] == {"ok": True, "detail": "redis"}
    assert report["checks"]["channel_layer"] == {"ok": True, "detail": "RedisChannelLayer"}
    assert report["checks"]["workers"] == {"ok": True, "detail": "2 worker(s)"}


def wait_for_workers(client: Browserless, expected: int) -> tuple[int, dict[str, Any]]:
    """Poll /healthz until the expected number of workers answer, for up to 60 s."""
    deadline = time.monotonic() + 60
    while True:
        status, report = client.get_json("/healthz")
        assert isinstance(report, dict)
        workers = report["checks"]["workers"]
        if workers.get("detail") == f"{expected} worker(s)" or time.monotonic() > deadline:
            return status, report
        time.sleep(1)
