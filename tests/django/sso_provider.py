"""A real OpenID Connect provider for the single sign-on tests, and a person's browser on it.

The provider is panva's oidc-provider (tests/oidc/provider.js, installed by `make test` from
tests/oidc/package-lock.json) in a node process on a free port of 127.0.0.1. Braid itself is
Django's test client on `testserver`: the provider only redirects the browser there, and
Braid's back-channel calls (discovery, token, JWKS, userinfo) reach the provider for real.
"""

import importlib
import json
import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import requests
from django.conf import settings
from django.test import Client, override_settings
from django.urls import clear_url_caches

from braid.sso import discovery
from braid.sso.config import SsoConfig, django_settings, read_sso_config
from tests.django.fixture_types import TestResponse
from tests.processes import ROOT, free_port, running, wait_for_port
from tests.servers import missing

PROVIDER_DIR = ROOT / "tests" / "oidc"
BRAID = "http://testserver"
AFTER_LOGOUT = f"{BRAID}/login/"  # the post-logout redirect URI registered for Braid
CLIENT_ID = "braid-test"
CLIENT_SECRET = "a-secret-only-these-tests-know"
TIMEOUT_S = 10


@dataclass(frozen=True)
class OpenIdProvider:
    """The running provider: its issuer URL and the file its accounts are read from."""

    issuer: str
    accounts_file: Path

    def set_accounts(self, accounts: dict[str, dict[str, object]]) -> None:
        """Replace the provider's accounts (login -> claims); read again at every login."""
        self.accounts_file.write_text(json.dumps(accounts))

    def environment(self, **overrides: str) -> dict[str, str]:
        """Return BRAID_OIDC_* for Braid to use this provider, with the test's group map."""
        return {
            "BRAID_OIDC_ISSUER": self.issuer,
            "BRAID_OIDC_CLIENT_ID": CLIENT_ID,
            "BRAID_OIDC_CLIENT_SECRET": CLIENT_SECRET,
            "BRAID_OIDC_NAME": "Test IdP",
            "BRAID_OIDC_SCOPES": "openid email profile groups",
            "BRAID_OIDC_GROUP_MAP": "idp-finance=finance,idp-legal=legal,idp-admins=admins,"
            "idp-analysts=analysts,idp-approvers=finance,idp-approvers=legal",
            "BRAID_OIDC_TIMEOUT_S": "5",
            **overrides,
        }


@contextmanager
def sso_configured(environ: dict[str, str]) -> Iterator[SsoConfig]:
    """Run the block as if Braid had started with these BRAID_OIDC_* variables: the same
    settings braid/settings.py adds, and the URLs read again (their routes depend on it)."""
    config = read_sso_config(environ)
    assert config is not None
    added = django_settings(config, list(settings.AUTHENTICATION_BACKENDS), settings.SECURE_CSP)
    try:
        with override_settings(**added):
            reload_urls()
            yield config
    finally:
        reload_urls()


def reload_urls() -> None:
    """Build the URL patterns again from the settings in force, forgetting discovery."""
    importlib.reload(importlib.import_module(settings.ROOT_URLCONF))
    clear_url_caches()
    discovery.forget()


def require_node_provider() -> str:
    """Return the node executable, or skip/fail when node or the provider's package is missing."""
    node = shutil.which("node")
    if node is None:
        missing("node is not installed", "install it to run this test: apt-get install nodejs")
    if not (PROVIDER_DIR / "node_modules" / "oidc-provider").is_dir():
        missing("the test OpenID provider is not installed (cd tests/oidc && npm ci)")
    assert node is not None
    return node


@contextmanager
def provider_running(workdir: Path, braid: str = BRAID) -> Iterator[OpenIdProvider]:
    """Run the provider on a free port until the block ends, for a Braid at `braid`
    (its callback and its login page are the client's registered redirect URIs)."""
    node = require_node_provider()
    port = free_port()
    provider = OpenIdProvider(f"http://127.0.0.1:{port}", workdir / "accounts.json")
    provider.set_accounts({})
    env = {
        "PATH": os.environ.get("PATH", ""),
        "OIDC_PORT": str(port),
        "OIDC_CLIENT_ID": CLIENT_ID,
        "OIDC_CLIENT_SECRET": CLIENT_SECRET,
        "OIDC_REDIRECT_URI": f"{braid}/oidc/callback/",
        "OIDC_POST_LOGOUT_REDIRECT_URI": f"{braid}/login/",
        "OIDC_ACCOUNTS": str(provider.accounts_file),
    }
    log = workdir / "provider.log"
    command = [node, str(PROVIDER_DIR / "provider.js")]
    with running(command, env, log) as process:
        wait_for_port(port, process, log, seconds=15)
        yield provider


class FormReader(HTMLParser):
    """The first form of a page: its action and the values of its inputs."""

    def __init__(self) -> None:
        super().__init__()
        self.action: str | None = None
        self.fields: dict[str, str] = {}
        self.done = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {name: value or "" for name, value in attrs}
        if tag == "form" and self.action is None:
            self.action = values.get("action", "")
        elif tag == "input" and self.action is not None and not self.done and "name" in values:
            self.fields[values["name"]] = values.get("value", "")

    def handle_endtag(self, tag: str) -> None:
        self.done = self.done or tag == "form"


class Browser:
    """A person's browser: its cookies at the provider, and Braid's test client."""

    def __init__(self, braid: Client | None = None) -> None:
        self.braid = braid or Client()
        self.idp = requests.Session()

    def start(self, query: str = "") -> str:
        """Start single sign-on at Braid; return where Braid sends the browser."""
        response = self.braid.get("/oidc/authenticate/" + query)
        assert response.status_code == 302, response.content.decode()
        location: str = response["Location"]
        return location

    def through_provider(self, url: str, login: str) -> str:
        """Follow the provider from the authorization URL, posting its login and consent
        forms (any password: the provider's development form checks none); return the
        callback URL it sends the browser back to Braid with."""
        response = self.idp.get(url, allow_redirects=False, timeout=TIMEOUT_S)
        for _ in range(10):
            if response.is_redirect:
                target = urljoin(response.url, response.headers["Location"])
                if target.startswith(BRAID):
                    return target
                response = self.idp.get(target, allow_redirects=False, timeout=TIMEOUT_S)
                continue
            assert response.status_code == 200, f"{response.status_code}: {response.text[:500]}"
            form = FormReader()
            form.feed(response.text)
            assert form.action is not None, f"no form at {response.url}: {response.text[:500]}"
            data = {**form.fields, "login": login, "password": "any"}
            action = urljoin(response.url, form.action)
            response = self.idp.post(action, data=data, allow_redirects=False, timeout=TIMEOUT_S)
        raise AssertionError(f"the provider never sent the browser back: {response.url}")

    def passes_the_provider(self) -> bool:
        """Whether a new single sign-on passes the provider without a form to fill in (its
        session with this browser is alive), or stops at one (a login is asked for)."""
        response = self.idp.get(self.start(), allow_redirects=False, timeout=TIMEOUT_S)
        for _ in range(10):
            if not response.is_redirect:
                return False
            target = urljoin(response.url, response.headers["Location"])
            if target.startswith(BRAID):
                return True
            response = self.idp.get(target, allow_redirects=False, timeout=TIMEOUT_S)
        raise AssertionError(f"the provider kept redirecting: {response.url}")

    def through_logout(self, url: str) -> str:
        """Follow the provider's end-session URL, answering its question with "Yes, sign me
        out"; return the URL it sends the browser back to."""
        response = self.idp.get(url, allow_redirects=False, timeout=TIMEOUT_S)
        assert response.status_code == 200, f"{response.status_code}: {response.text[:500]}"
        form = FormReader()
        form.feed(response.text)
        assert form.action is not None, f"no form at {response.url}: {response.text[:500]}"
        action = urljoin(response.url, form.action)
        data = {**form.fields, "logout": "yes"}
        response = self.idp.post(action, data=data, allow_redirects=False, timeout=TIMEOUT_S)
        assert response.is_redirect, f"{response.status_code}: {response.text[:500]}"
        return urljoin(response.url, response.headers["Location"])

    def callback(self, url: str) -> TestResponse:
        """Bring the provider's answer to Braid's callback."""
        parts = urlsplit(url)
        return self.braid.get(f"{parts.path}?{parts.query}")

    def log_in(self, login: str, query: str = "") -> TestResponse:
        """The whole code flow, from Braid's button to Braid's answer at the callback."""
        return self.callback(self.through_provider(self.start(query), login))
