"""An admin starts a run from a typed form built from the flow's input schema (issue 31).

Screenshots of the start form at 1440 and 390 px go to var/screenshots/.
"""

import pytest
from playwright.sync_api import Page, expect

from tests.browser.test_login__chromium import log_in
from tests.browser.test_monitor__chromium import RUN_URL, no_sideways_scroll, shoot
from tests.processes import Browserless

pytestmark = pytest.mark.browser


def test_the_start_form_is_typed_with_refusals_beside_their_fields(
    page: Page, braid_server: str
) -> None:
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    posted: list[str] = []
    page.on("request", lambda r: posted.append(r.url) if r.method == "POST" else None)
    page.set_viewport_size({"width": 1440, "height": 900})
    log_in(page, braid_server, "admin", "braid-admin")
    page.goto(f"{braid_server}/runs/?start=vendor-payment")
    form = page.get_by_role("form", name="Start a run")
    expect(form.get_by_role("textbox", name="vendor (required)")).to_have_value("")
    expect(form.get_by_role("textbox", name="amount (required)")).to_have_attribute(
        "inputmode", "numeric"
    )
    expect(form.locator(".form-field__hint")).to_have_text(["the payment in whole units"])
    form.get_by_role("textbox", name="vendor (required)").fill("Acme")
    form.get_by_role("textbox", name="amount (required)").fill("12.5")
    form.get_by_role("button", name="Start run").click()
    amount_error = form.locator(".form-field--integer .form-field__error")
    expect(amount_error).to_have_text("must be a whole number")
    assert [url for url in posted if url.endswith("/api/runs/")] == []  # refused before sending
    form.get_by_role("textbox", name="amount (required)").fill("")
    form.get_by_role("button", name="Start run").click()
    expect(amount_error).to_have_text("required, but missing")
    expect(form.get_by_role("textbox", name="amount (required)")).to_have_attribute(
        "aria-invalid", "true"
    )
    expect(page).to_have_url(f"{braid_server}/runs/?start=vendor-payment")
    shoot(page, "start-form-errors-1440")
    page.set_viewport_size({"width": 390, "height": 844})
    form.scroll_into_view_if_needed()
    assert no_sideways_scroll(page)
    shoot(page, "start-form-errors-390")
    form.get_by_role("textbox", name="amount (required)").fill("40")
    form.get_by_role("checkbox", name="new_vendor (required)").check()
    with page.expect_request("**/api/runs/") as sent:
        form.get_by_role("button", name="Start run").click()
    assert sent.value.post_data_json == {
        "flow": "vendor-payment",
        "input": {"vendor": "Acme", "amount": 40, "new_vendor": True},
    }
    page.wait_for_url(RUN_URL, timeout=10_000)
    assert errors == []


def test_line_items_are_added_in_rows_and_reach_the_run(page: Page, braid_server: str) -> None:
    page.set_viewport_size({"width": 1440, "height": 900})
    log_in(page, braid_server, "admin", "braid-admin")
    page.goto(f"{braid_server}/runs/?start=batch-line-approval")
    form = page.get_by_role("form", name="Start a run")
    expect(form.get_by_text("No rows yet. Add one.")).to_be_visible()
    for _ in range(3):
        form.get_by_role("button", name="Add row").click()
    form.get_by_role("button", name="Remove lines row 3").click()
    for index, (line, amount) in enumerate([("L1", "12"), ("L2", "30000")], start=1):
        row = form.get_by_role("group", name=f"lines row {index}")
        row.get_by_role("textbox", name="id (required)").fill(line)
        row.get_by_role("textbox", name="amount (required)").fill(amount)
    shoot(page, "start-form-rows-1440")
    page.set_viewport_size({"width": 390, "height": 844})
    assert no_sideways_scroll(page)
    shoot(page, "start-form-rows-390")
    form.get_by_role("button", name="Start run").click()
    page.wait_for_url(RUN_URL, timeout=10_000)
    run = page.url.rstrip("/").rsplit("/", 1)[1]
    admin = Browserless(braid_server)
    admin.login("admin", "braid-admin")
    status, body = admin.get_json(f"/api/runs/{run}/")
    assert status == 200
    assert body["input"] == {"lines": [{"id": "L1", "amount": 12}, {"id": "L2", "amount": 30000}]}
