"""Single sign-on in Chromium, against the real provider (tests/oidc/provider.js) and
Braid as `make run` serves it: log in at the provider, then log out of both.

The log-out button is a form, and its answer redirects to the provider: Chromium applies
the page's CSP `form-action` to that redirect, so only a real browser shows that the
provider's origin is allowed there (docs/sso.md, "Logging out").
"""

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import ConsoleMessage, Page, expect

from tests.django.sso_provider import OpenIdProvider, provider_running
from tests.processes import braid_serving, free_port

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def sso_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, OpenIdProvider]]:
    """Braid served with single sign-on on, and its provider; yield Braid's URL and it."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    with provider_running(tmp_path_factory.mktemp("oidc"), braid=base) as provider:
        provider.set_accounts({"max": {"preferred_username": "max", "email": "max@idp.example",
                                       "groups": ["idp-finance"]}})  # fmt: skip
        served: Path = tmp_path_factory.mktemp("braid-sso")
        with braid_serving(served, port, **provider.environment()) as url:
            yield url, provider


def through_the_provider(page: Page, login: str) -> None:
    """Fill the provider's login form (any password) and allow its consent."""
    page.locator("input[name=login]").fill(login)
    page.locator("input[name=password]").fill("any")
    page.locator("button[type=submit]").first.click()
    page.locator("button[type=submit]").first.click()  # the consent: "Continue"


def test_a_person_logs_in_with_the_provider_and_logging_out_ends_both_sessions(
    page: Page, sso_site: tuple[str, OpenIdProvider]
) -> None:
    base, provider = sso_site
    blocked: list[str] = []

    def refused(message: ConsoleMessage) -> None:
        if "Content Security Policy" in message.text:
            blocked.append(message.text)

    page.on("console", refused)
    page.goto(f"{base}/login/")
    page.get_by_role("link", name="Log in with Test IdP").click()
    through_the_provider(page, "max")
    expect(page.locator("form.account")).to_contain_text("max", timeout=10_000)
    assert page.url.startswith(base)

    # Log out: Braid's session ends, and the browser goes on to the provider, which asks.
    page.get_by_role("button", name="Log out").click()
    sign_out = page.get_by_role("button", name="Yes, sign me out")
    expect(sign_out).to_be_visible(timeout=10_000)
    assert page.url.startswith(f"{provider.issuer}/")
    sign_out.click()
    expect(page).to_have_url(f"{base}/login/", timeout=10_000)

    # Logged out of both: Braid asks for a login, and so does the provider.
    page.goto(f"{base}/runs/")
    expect(page).to_have_url(f"{base}/login/?next=/runs/")
    page.get_by_role("link", name="Log in with Test IdP").click()
    expect(page.locator("input[name=login]")).to_be_visible(timeout=10_000)
    assert blocked == []
