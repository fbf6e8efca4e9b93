"""A person opens a demo flow and sees its graph drawn by the React Flow viewer."""

import pytest
from django.core.management import call_command
from playwright.sync_api import Page, expect
from pytest_django.live_server_helper import LiveServer

from tests.browser.test_login__chromium import log_in

pytestmark = pytest.mark.browser


def test_the_invoice_flow_page_draws_every_node(page: Page, live_server: LiveServer) -> None:
    call_command("braid", "demo")
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    log_in(page, live_server.url, "analyst", "braid-analyst")
    page.goto(f"{live_server.url}/flows/")
    page.get_by_role("link", name="Invoice sign-off").click()
    expect(page.get_by_role("heading", level=1)).to_contain_text("Invoice sign-off")
    nodes = page.locator(".react-flow__node")
    expect(nodes).to_have_count(11)
    for node_id in ("start", "split", "fin", "leg", "both", "done"):
        expect(page.locator(f'.react-flow__node[data-id="{node_id}"]')).to_be_visible()
    expect(page.locator(".react-flow__edge")).to_have_count(11)
    assert errors == []
