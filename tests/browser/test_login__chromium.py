"""A person logs in with Chromium, walks the three sections and logs out."""

import pytest
from playwright.sync_api import Page, expect
from pytest_django.live_server_helper import LiveServer

from braid.demo import create_demo_users

pytestmark = pytest.mark.browser


def log_in(page: Page, base_url: str, username: str, password: str) -> None:
    """Fill and submit the login form."""
    page.goto(f"{base_url}/runs/")
    page.get_by_label("User name").fill(username)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Log in").click()


def test_a_demo_approver_logs_in_visits_each_section_and_logs_out(
    page: Page, live_server: LiveServer
) -> None:
    create_demo_users()
    log_in(page, live_server.url, "finance", "braid-finance")
    expect(page).to_have_url(f"{live_server.url}/runs/")
    expect(page.get_by_role("heading", level=1)).to_have_text("Runs")
    page.get_by_role("link", name="Flows").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Flows")
    page.get_by_role("link", name="Inbox").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Inbox")
    expect(page.locator("nav a[aria-current=page]")).to_have_text("Inbox")
    page.get_by_role("button", name="Log out").click()
    expect(page).to_have_url(f"{live_server.url}/login/")
    page.goto(f"{live_server.url}/flows/")
    expect(page).to_have_url(f"{live_server.url}/login/?next=/flows/")


def test_a_wrong_password_keeps_the_person_on_the_login_page_with_an_error(
    page: Page, live_server: LiveServer
) -> None:
    create_demo_users()
    log_in(page, live_server.url, "finance", "wrong")
    expect(page.get_by_role("alert")).to_have_text(
        "That user name and password do not match. Try again."
    )
