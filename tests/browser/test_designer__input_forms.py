"""Analysts in the designer: input fields as a schema, a test run from a form, values in a
version's diff, and a quick fix on a problem (issue 31). Screenshots at 1440 and 390 px."""

import re

import pytest
from playwright.sync_api import Locator, Page, ViewportSize, expect
from pytest_django.live_server_helper import LiveServer

from designer.models import Flow
from tests.browser.page_errors import errors_of
from tests.browser.test_designer__chromium import (  # noqa: F401
    analyst_page,
    node,
    pick,
    shoot,
    stored,
    wait_saved,
)

pytestmark = pytest.mark.browser

WIDE: ViewportSize = {"width": 1440, "height": 900}
PHONE: ViewportSize = {"width": 390, "height": 844}


def no_sideways_scroll(page: Page) -> bool:
    return bool(page.evaluate("document.documentElement.scrollWidth <= window.innerWidth"))


def shown_wide_then_on_a_phone(page: Page, shown: Locator, name: str) -> None:
    """Screenshot the page at 1440 px, then at 390 px with `shown` scrolled into view, and
    check that the phone's page does not scroll sideways."""
    shoot(page, f"{name}-1440")
    page.set_viewport_size(PHONE)
    shown.scroll_into_view_if_needed()
    assert no_sideways_scroll(page)
    shoot(page, f"{name}-390")


def flow_panel(page: Page) -> Locator:
    """Return the Flow panel (nothing selected): name, input fields, state."""
    page.keyboard.press("Escape")
    return page.locator(".braid-input-fields")


def add_field(fields: Locator, name: str, kind: str) -> None:
    """Add a top-level input field of that type."""
    fields.get_by_label("New input field", exact=True).fill(name)
    fields.get_by_label("Type of the new input field", exact=True).select_option(kind)
    fields.locator(":scope > .braid-input-fields__add").get_by_role("button", name="Add").click()


def test_an_analyst_adds_input_fields_and_the_schema_keeps_what_it_does_not_show(
    analyst_page: Page,  # noqa: F811
    live_server: LiveServer,
) -> None:
    page = analyst_page
    page.set_viewport_size(WIDE)
    flow = Flow.objects.get(slug="vendor-payment")
    flow.draft["input"]["properties"]["amount"]["minimum"] = 1
    flow.draft["input"]["$comment"] = "kept as written"
    flow.save()
    page.goto(f"{live_server.url}/flows/vendor-payment/")
    fields = flow_panel(page)
    expect(fields.get_by_role("listitem", name="Input field amount")).to_be_visible()
    add_field(fields, "currency", "enum")
    currency = fields.get_by_role("listitem", name="Input field currency")
    currency.get_by_label("Options of currency (comma-separated)").fill("EUR, USD")
    currency.get_by_label("Options of currency (comma-separated)").press("Enter")
    currency.get_by_label("Default of currency").select_option(label="EUR")
    currency.get_by_label("Required").check()
    add_field(fields, "lines", "rows")
    lines = fields.get_by_role("listitem", name="Input field lines")
    lines.get_by_label("New lines column", exact=True).fill("sku")
    lines.get_by_label("New lines column", exact=True).press("Enter")
    fields.get_by_role("listitem", name="Input field amount").get_by_label(
        "Default of amount"
    ).fill("2.5")
    fields.get_by_role("listitem", name="Input field amount").get_by_label(
        "Default of amount"
    ).press("Enter")
    expect(fields.get_by_role("alert")).to_have_text("Give a whole number.")
    wait_saved(page)
    schema = stored("vendor-payment")["input"]
    assert schema == {
        "type": "object",
        "$comment": "kept as written",
        "properties": {
            "vendor": {"type": "string"},
            "amount": {"type": "integer", "description": "the payment in whole units",
                       "minimum": 1},
            "new_vendor": {"type": "boolean"},
            "currency": {"type": "string", "enum": ["EUR", "USD"], "default": "EUR"},
            "lines": {"type": "array", "items": {"type": "object",
                                                 "properties": {"sku": {"type": "string"}}}},
        },
        "required": ["vendor", "amount", "new_vendor", "currency"],
    }  # fmt: skip
    expect(page.locator(".braid-problems__counts")).to_have_text(
        re.compile(r"none: the flow is valid|0 error\(s\)"), timeout=8000
    )
    fields.scroll_into_view_if_needed()
    shown_wide_then_on_a_phone(page, fields, "input-fields")
    assert errors_of(page) == []


def test_a_test_run_takes_its_input_from_a_form_with_refusals_beside_the_fields(
    analyst_page: Page,  # noqa: F811
    live_server: LiveServer,
) -> None:
    page = analyst_page
    page.set_viewport_size(WIDE)
    page.goto(f"{live_server.url}/flows/batch-line-approval/")
    page.get_by_role("button", name="Test run").click()
    panel = page.get_by_role("region", name="Test run")
    panel.get_by_role("button", name="Add row").click()
    panel.get_by_role("button", name="Add row").click()
    first = panel.get_by_role("group", name="lines row 1")
    first.get_by_label("id").fill("L1")
    first.get_by_label("amount").fill("120")
    second = panel.get_by_role("group", name="lines row 2")
    second.get_by_label("id").fill("L2")
    panel.get_by_role("button", name="Run", exact=True).click()
    # The server refuses the missing amount; the reason sits beside that row's field.
    missing = second.locator(".form-field__error")
    expect(missing).to_have_text("required, but missing")
    expect(second.get_by_label("amount")).to_have_attribute("aria-invalid", "true")
    shoot(page, "test-run-form-error-1440")
    second.get_by_label("amount").fill("abc")
    panel.get_by_role("button", name="Run", exact=True).click()
    expect(missing).to_have_text("must be a number")
    second.get_by_label("amount").fill("80")
    panel.get_by_role("button", name="Run", exact=True).click()
    expect(panel.get_by_role("status")).to_contain_text("The run is", timeout=20_000)
    expect(missing).to_have_count(0)
    # The advanced JSON holds the same input, and going back keeps it.
    panel.get_by_role("button", name="Edit as JSON (advanced)").click()
    text = panel.get_by_label("Input (JSON)")
    expect(text).to_have_value(
        '{\n  "lines": [\n    {\n      "id": "L1",\n      "amount": 120\n    },\n'
        '    {\n      "id": "L2",\n      "amount": 80\n    }\n  ]\n}'
    )
    text.fill('{"lines": [{"id": "L9", "amount": 5}]}')
    panel.get_by_role("button", name="Back to the form").click()
    expect(panel.get_by_role("group", name="lines row 1").get_by_label("id")).to_have_value("L9")
    expect(panel.get_by_role("group", name="lines row 2")).to_have_count(0)
    shown_wide_then_on_a_phone(page, panel, "test-run-form")
    assert errors_of(page) == []


def test_a_versions_diff_shows_old_and_new_values(
    analyst_page: Page,  # noqa: F811
    live_server: LiveServer,
) -> None:
    page = analyst_page
    page.set_viewport_size(WIDE)
    flow = Flow.objects.get(slug="invoice-sign-off")
    draft = flow.draft
    fin = next(n for n in draft["nodes"] if n["id"] == "fin")
    old_title = fin["title"]
    fin["title"] = "Money check"
    draft["state"]["reviewed"] = {"reducer": "overwrite"}
    flow.draft = draft
    flow.save()
    page.goto(f"{live_server.url}/flows/invoice-sign-off/")
    expect(node(page, "fin")).to_be_visible()
    page.get_by_role("button", name="History").click()
    page.get_by_role("complementary", name="Version history").get_by_role(
        "button", name="Open v1"
    ).click()
    changes = page.get_by_role("list", name="Changed values, version 1 to the draft")
    expect(changes.get_by_role("listitem")).to_have_text(
        [
            f'fin title v1: "{old_title}" → draft: "Money check"',
            'state reviewed v1: (none) → draft: {"reducer":"overwrite"}',
        ]
    )
    shown_wide_then_on_a_phone(page, changes, "version-values")
    assert errors_of(page) == []


def test_an_undeclared_write_is_fixed_by_one_click_and_the_problem_goes(
    analyst_page: Page,  # noqa: F811
    live_server: LiveServer,
) -> None:
    page = analyst_page
    page.set_viewport_size(WIDE)
    flow = Flow.objects.get(slug="invoice-sign-off")
    draft = flow.draft
    draft["nodes"].append({"id": "note", "type": "set", "values": {"checked": "true"}})
    done = next(e for e in draft["edges"] if e["target"] == "done")
    draft["edges"].remove(done)
    draft["edges"] += [{**done, "target": "note"}, {"source": "note", "target": "done"}]
    flow.draft = draft
    flow.save()
    page.goto(f"{live_server.url}/flows/invoice-sign-off/")
    problems = page.get_by_role("region", name="Problems")
    fix = problems.get_by_role("button", name="Declare checked (overwrite)")
    expect(fix).to_be_visible(timeout=8000)
    shoot(page, "quick-fix-1440")
    fix.click()
    expect(fix).to_have_count(0)
    expect(page.locator(".braid-problems__counts")).to_have_text(
        re.compile(r"none: the flow is valid|0 error\(s\)"), timeout=8000
    )
    wait_saved(page)
    assert stored("invoice-sign-off")["state"]["checked"] == {"reducer": "overwrite"}
    assert errors_of(page) == []


def test_an_object_input_is_a_group_of_fields_in_the_test_run(
    analyst_page: Page,  # noqa: F811
    live_server: LiveServer,
) -> None:
    page = analyst_page
    page.set_viewport_size(WIDE)
    page.goto(f"{live_server.url}/flows/invoice-sign-off/")
    page.get_by_role("button", name="Test run").click()
    panel = page.get_by_role("region", name="Test run")
    invoice = panel.get_by_role("group", name="invoice (required)")
    invoice.get_by_role("textbox", name="id (required)").fill("I-9")
    invoice.get_by_role("textbox", name="vendor (required)").fill("ACME")
    panel.get_by_role("button", name="Run", exact=True).click()
    expect(invoice.locator(".form-field--number .form-field__error")).to_have_text(
        "required, but missing"
    )
    invoice.get_by_role("textbox", name="amount (required)").fill("120")
    panel.get_by_role("button", name="Run", exact=True).click()
    expect(panel.get_by_role("status")).to_contain_text("waiting", timeout=20_000)
    shown_wide_then_on_a_phone(page, panel, "test-run-group")
    assert errors_of(page) == []
