"""Playwright on Debian's Chromium; never a downloaded browser."""

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, sync_playwright
from pytest_django import Settings

from tests.processes import braid_serving
from tests.servers import require_chromium

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    """Launch headless /usr/bin/chromium once for the session."""
    path = require_chromium()
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=path, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    """Return a fresh page in a new context (no cookies shared between tests)."""
    context = browser.new_context(viewport={"width": 1280, "height": 860})
    page = context.new_page()
    yield page
    context.close()


@pytest.fixture(autouse=True)
def fast_password_hashing(settings: Settings) -> None:
    """Hash passwords with MD5 in tests: PBKDF2's deliberate cost is ~1 s a user here."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture(scope="session")
def braid_server_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The var directory of the session's server: its database and its log, serve.log."""
    return tmp_path_factory.mktemp("braid-server")


@pytest.fixture(scope="session")
def braid_server(braid_server_dir: Path) -> Iterator[str]:
    """Braid as `make run` serves it (Daphne, the embedded worker, websockets) on a fresh
    SQLite database with the demo loaded; yield its base URL. Shared by the session's
    browser tests: each one starts its own runs."""
    with braid_serving(braid_server_dir) as base_url:
        yield base_url
