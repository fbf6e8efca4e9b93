"""Reaching the real servers the suite runs against, and what to do when one is missing."""

import os
import socket
from urllib.parse import urlsplit

import pytest

CHROMIUM = "/usr/bin/chromium"
POSTGRES_URL = os.environ.get("BRAID_TEST_POSTGRES_URL", "postgres://postgres@127.0.0.1:5432/test")
REDIS_URL = os.environ.get("BRAID_TEST_REDIS_URL", "redis://127.0.0.1:6379/15")

# The test Redis databases this session handed out; it empties them at its end (tests/cleanup.py).
used_redis: set[str] = set()


def running_in_ci() -> bool:
    """Return whether CI=true, where a missing server fails the run instead of skipping."""
    return os.environ.get("CI", "").lower() == "true"


def reachable(url: str, timeout: float = 1.0) -> bool:
    """Return whether a TCP connection to the URL's host and port succeeds."""
    parts = urlsplit(url)
    try:
        with socket.create_connection((parts.hostname, parts.port), timeout=timeout):
            return True
    except OSError:
        return False


def missing(what: str, remedy: str = "start it to run this test") -> None:
    """Skip the test with a clear reason, or fail it under CI=true."""
    message = f"{what}; {remedy}"
    if running_in_ci():
        pytest.fail(f"CI=true requires it: {message}", pytrace=False)
    pytest.skip(message)


def require_redis() -> str:
    """Return the test Redis URL, or skip/fail when Redis is unreachable."""
    if not reachable(REDIS_URL):
        missing(f"Redis is unreachable at {REDIS_URL}")
    used_redis.add(REDIS_URL)
    return REDIS_URL


def require_postgres() -> str:
    """Return the test PostgreSQL URL, or skip/fail when it is unreachable."""
    if not reachable(POSTGRES_URL):
        missing(f"PostgreSQL is unreachable at {POSTGRES_URL}")
    return POSTGRES_URL


def require_chromium() -> str:
    """Return the Chromium path, or skip/fail when Debian's chromium is not installed."""
    if not os.access(CHROMIUM, os.X_OK):
        remedy = "install Debian's chromium to run the browser tests: apt-get install chromium"
        missing(f"{CHROMIUM} is not installed", remedy)
    return CHROMIUM
