"""Suite-wide set-up: the database this pass runs on, a summary of what really ran, and
nothing left behind (tests/cleanup.py)."""

import os
from collections import Counter
from collections.abc import Iterator

import pytest
from django.conf import settings
from pytest_django import DjangoDbBlocker

from tests import cleanup
from tests.servers import reachable, running_in_ci

DB_FIXTURES = {"db", "transactional_db", "live_server", "django_db_setup"}

# Playwright's sync API runs an event loop in the test thread; Django would then refuse
# ORM calls from that thread, although they are ordinary synchronous test set-up.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")


def database_vendor() -> str:
    """Return 'postgresql' or 'sqlite' for the default database of this pass, or 'none'."""
    if not settings.configured:
        return "none"
    return "postgresql" if "postgresql" in settings.DATABASES["default"]["ENGINE"] else "sqlite"


def backings(item: pytest.Item) -> list[str]:
    """Return the real parts a test runs against: its database, Redis, Chromium."""
    names = [name for name in ("postgres", "redis", "browser") if item.get_closest_marker(name)]
    fixtures = item.fixturenames if isinstance(item, pytest.Function) else []
    uses_db = item.get_closest_marker("django_db") or DB_FIXTURES & set(fixtures)
    if uses_db:
        names.append(f"database:{database_vendor()}")
    return names


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Record each test's backing parts; on the PostgreSQL pass, require the server.

    Browser tests run last: Playwright's sync API keeps an event loop running in the main
    thread from its first use, and the socket tests after it could not start their own.
    """
    items.sort(key=lambda item: item.get_closest_marker("browser") is not None)
    for item in items:
        item.user_properties.extend(("backing", name) for name in backings(item))
    if database_vendor() != "postgresql":
        return
    db = settings.DATABASES["default"]
    url = f"postgres://{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}"
    if reachable(url):
        return
    if running_in_ci():
        raise pytest.UsageError(f"CI=true requires PostgreSQL, which is unreachable at {url}")
    marker = pytest.mark.skip(reason=f"PostgreSQL is unreachable at {url}; start it to run these")
    for item in items:
        item.add_marker(marker)


_passed: Counter[str] = Counter()
_browser_skips: Counter[str] = Counter()  # why, how many


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Count passed tests by the real part that backed them, and skipped browser tests by
    the reason they were skipped."""
    backing = {str(value) for key, value in report.user_properties if key == "backing"}
    if report.when == "call" and report.passed:
        _passed.update(backing)
    if report.skipped and "browser" in backing:
        longrepr = report.longrepr
        reason = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
        _browser_skips[reason.removeprefix("Skipped: ")] += 1


@pytest.fixture(scope="session")
def django_db_setup(
    django_db_setup: None, django_db_blocker: DjangoDbBlocker, django_db_keepdb: bool
) -> Iterator[None]:
    """pytest-django's test databases; before it drops them, the connections that other
    threads left open to them are ended, since PostgreSQL refuses to drop a database in use."""
    yield
    if not django_db_keepdb:
        with django_db_blocker.unblock():
            cleanup.end_other_connections()


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session) -> None:
    """After the session's fixtures are gone: check the test databases were dropped, empty
    the test Redis, and fail the session when either could not be done."""
    cleanup.check_dropped()
    cleanup.empty_redis()
    if cleanup.session.problems:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Print how many passed tests ran on each real part, so CI logs show they ran, how many
    browser tests were skipped, and what the session could not clean up; `make test` repeats
    the last two as its last lines (scripts/run-phases reads them from $BRAID_TEST_NOTES)."""
    parts = ", ".join(f"{name}={count}" for name, count in sorted(_passed.items()))
    terminalreporter.write_line(f"braid: passed tests by backing part: {parts or 'none'}")
    for note in cleanup.session.notes:
        terminalreporter.write_line(f"braid: {note}")
    failures = [f"FAILED to clean up: {problem}" for problem in cleanup.session.problems]
    for failure in failures:
        terminalreporter.write_line(f"braid: {failure}", red=True, bold=True)
    notes = [f"{count} browser tests skipped: {why}" for why, count in _browser_skips.items()]
    for note in notes:
        terminalreporter.write_line(f"braid: {note}")
    path = os.environ.get("BRAID_TEST_NOTES")
    if path and (notes or failures):
        with open(path, "a", encoding="utf-8") as out:
            out.writelines(f"{note}\n" for note in [*failures, *notes])
