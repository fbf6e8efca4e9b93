"""A test run from the designer colors the canvas with the monitor's colors and reasons."""

import re

import pytest
from playwright.sync_api import Page, expect
from pytest_django.live_server_helper import LiveServer

from engine.models import Run
from tests.browser.page_errors import errors_of
from tests.browser.test_designer__chromium import analyst_page, node, shoot  # noqa: F401

pytestmark = pytest.mark.browser


def test_a_test_run_colors_the_canvas_decides_and_stores_nothing(
    analyst_page: Page,  # noqa: F811
    live_server: LiveServer,
) -> None:
    page = analyst_page
    page.goto(f"{live_server.url}/flows/invoice-sign-off/")
    expect(node(page, "fin")).to_be_visible()
    page.get_by_role("button", name="Test run").click()
    page.get_by_role("button", name="Edit as JSON (advanced)").click()
    page.get_by_label("input (JSON)", exact=False).fill(
        '{"invoice": {"id": "I-9", "amount": 120, "vendor": "ACME"}}'
    )
    page.get_by_role("button", name="Run", exact=True).click()
    expect(page.get_by_role("status").filter(has_text="The run is")).to_contain_text(
        "waiting", timeout=20_000
    )
    expect(node(page, "fin").locator(".braid-node")).to_have_class(
        re.compile("braid-color--waiting")
    )
    title = node(page, "fin").locator(".braid-node").get_attribute("title")
    assert title is not None and title.endswith("Waiting for a decision by finance")
    approvals = page.get_by_role("list", name="Approvals waiting")
    approvals.get_by_role("listitem").filter(has_text="fin").get_by_role(
        "button", name="Approve"
    ).click()
    expect(approvals.get_by_role("listitem")).to_have_count(1)
    approvals.get_by_role("listitem").filter(has_text="leg").get_by_role(
        "button", name="Reject"
    ).click()
    expect(page.get_by_role("status").filter(has_text="The run is")).to_contain_text("failed")
    expect(node(page, "leg_no").locator(".braid-node")).to_have_class(
        re.compile("braid-color--failed")
    )
    expect(node(page, "fin_ok").locator(".braid-node")).to_have_class(
        re.compile("braid-color--completed")
    )
    shoot(page, "test-run")
    # The test run's reasons name nodes as code, as the monitor's do (its hover is the
    # monitor's tooltip, tested there; this node lies below the canvas's fold).
    reason = node(page, "fin_no").locator(".braid-node__reason")
    expect(reason).to_have_text("Not taken: fin chose approved")
    expect(reason.locator("code")).to_have_text(["fin", "approved"])
    assert Run.objects.count() == 0
    assert errors_of(page) == []
