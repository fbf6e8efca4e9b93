"""The inbox in Chromium against `braid serve` (Daphne, Channels and the embedded worker):
an approver sees the count, approves from the keyboard with a comment, the run goes on,
and a second approver's count drops live."""

import base64
import json
import re
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.processes import ROOT, base_env, free_port, manage, running, wait_for_port

pytestmark = pytest.mark.browser
SHOTS = ROOT / "var" / "screenshots"
INVOICE = {"invoice": {"id": "INV-42", "amount": 1250, "vendor": "Acme <Ltd>"}}
CONTROLLER = (
    "from django.contrib.auth.models import Group, User; "
    "u = User.objects.create_user('controller', password='braid-controller'); "
    "u.groups.add(Group.objects.get(name='finance'))"
)


class Server:
    """A running `braid serve` and a way to call its API as a demo user."""

    def __init__(self, url: str) -> None:
        self.url = url

    def api(self, user: str, method: str, path: str, body: Any = None) -> Any:
        """Call the API with Basic auth; return the JSON body."""
        token = base64.b64encode(f"{user}:braid-{user}".encode()).decode()
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(
            self.url + path, data=data, method=method,
            headers={"Authorization": f"Basic {token}", "Content-Type": "application/json"},
        )  # fmt: skip
        with urllib.request.urlopen(request, timeout=15) as response:
            return json.loads(response.read())


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    """`braid serve` on a fresh SQLite file with the demo data and a second finance member."""
    env = base_env(BRAID_VAR_DIR=str(tmp_path), DJANGO_SETTINGS_MODULE="braid.settings")
    manage(env, "migrate", "--noinput")
    manage(env, "braid", "demo")
    manage(env, "shell", "-c", CONTROLLER)
    port = free_port()
    command = [str(Path(ROOT / "manage.py")), "braid", "serve", "--port", str(port)]
    import sys

    with running([sys.executable, *command], env, tmp_path / "serve.log") as process:
        wait_for_port(port, process, tmp_path / "serve.log")
        yield Server(f"http://127.0.0.1:{port}")


def log_in(page: Page, url: str, username: str, password: str) -> None:
    """Log in through the form and land on the inbox."""
    page.goto(f"{url}/inbox/")
    page.get_by_label("User name").fill(username)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Inbox")


def shot(page: Page, name: str) -> None:
    """Save a screenshot for a person to look at."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"inbox-{name}.png"), full_page=True)


def wait_for(condition: Any, seconds: float = 20) -> Any:
    """Poll until the condition returns something true; return it."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.2)
    raise AssertionError("timed out")


def test_an_approver_approves_from_the_keyboard_and_the_run_continues(
    browser: Browser, server: Server
) -> None:
    run = server.api(
        "analyst", "POST", "/api/runs/", {"flow": "invoice-sign-off", "input": INVOICE}
    )
    wait_for(lambda: server.api("admin", "GET", f"/api/runs/{run['id']}/")["status"] == "waiting")
    errors: list[str] = []
    finance = browser.new_context(viewport={"width": 1280, "height": 860}).new_page()
    other = browser.new_context(viewport={"width": 1280, "height": 860}).new_page()
    for page in (finance, other):
        page.on("pageerror", lambda error: errors.append(str(error)))
    log_in(other, server.url, "controller", "braid-controller")
    log_in(finance, server.url, "finance", "braid-finance")
    badge = finance.locator("nav [data-inbox-count]")
    expect(badge).to_have_attribute("data-inbox-count", "1")
    expect(badge).to_contain_text("1 open request")
    expect(other.locator("nav [data-inbox-count]")).to_have_attribute("data-inbox-count", "1")
    item = finance.get_by_role("article", name="Finance sign-off for INV-42")
    expect(item).to_be_visible()
    expect(item).to_contain_text("Check the amount of 1250 against the budget.")
    expect(
        item.get_by_role("link", name=f"Run {run['id'][:8]}, open the run view")
    ).to_have_attribute("href", f"/runs/{run['id']}/")
    expect(item.locator("time").first).to_have_attribute(
        "title", re.compile(r"^Asked 2\d{3}-.* UTC$")
    )
    expect(item.locator("time").first).to_have_text("waiting less than a minute")
    shot(finance, "1-open")
    finance.keyboard.press("j")
    expect(item).to_be_focused()
    finance.keyboard.press("?")
    expect(finance.get_by_role("dialog", name="Keyboard shortcuts")).to_be_visible()
    shot(finance, "2-shortcuts")
    finance.keyboard.press("Escape")
    finance.keyboard.press("a")
    dialog = finance.get_by_role("dialog", name="Approve “Finance sign-off for INV-42”")
    expect(dialog).to_be_visible()
    expect(dialog.get_by_label("Comment (optional)")).to_be_focused()
    finance.keyboard.type("Within the Q4 budget")
    shot(finance, "3-approve-dialog")
    finance.keyboard.press("Enter")
    expect(dialog).to_be_hidden()
    expect(finance.get_by_text("Nothing waits for your decision.")).to_be_visible()
    expect(badge).to_have_attribute("data-inbox-count", "0", timeout=15_000)
    expect(other.locator("nav [data-inbox-count]")).to_have_attribute(
        "data-inbox-count", "0", timeout=15_000
    )
    shot(finance, "4-empty")
    shot(other, "5-other-approver")
    tree = wait_for(
        lambda: (
            (t := server.api("admin", "GET", f"/api/runs/{run['id']}/tree/"))["nodes"]
            .get("fin_ok", {})
            .get("status")
            == "completed"
            and t
        )
    )
    assert tree["nodes"]["fin"]["result"] == "approved"
    finance.get_by_role("tab", name="Archive").click()
    archived = finance.get_by_role("article", name="Finance sign-off for INV-42")
    expect(archived).to_contain_text("finance approved: Within the Q4 budget")
    expect(archived).to_contain_text("Approved")
    shot(finance, "6-archive")
    assert errors == []


def test_the_inbox_reads_well_on_a_phone_and_bulk_decides_with_a_summary(
    browser: Browser, server: Server
) -> None:
    lines = [{"id": f"L{i}", "amount": 20000 + i} for i in range(4)]
    run = server.api(
        "analyst", "POST", "/api/runs/", {"flow": "batch-line-approval", "input": {"lines": lines}}
    )
    wait_for(lambda: server.api("admin", "GET", f"/api/runs/{run['id']}/")["status"] == "waiting")
    page = browser.new_context(viewport={"width": 390, "height": 844}).new_page()
    log_in(page, server.url, "finance", "braid-finance")
    expect(page.get_by_role("article")).to_have_count(4)
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    shot(page, "7-phone")
    page.get_by_role("checkbox", name="Select all 4 of batch-line-approval").check()
    page.get_by_role("button", name="Reject 4…").click()
    dialog = page.get_by_role("dialog", name="Reject 4 requests")
    dialog.get_by_label("Comment (optional)").fill("duplicate batch")
    shot(page, "8-phone-bulk-dialog")
    dialog.get_by_role("button", name="Reject 4", exact=True).click()
    expect(page.get_by_role("status").filter(has_text="Rejected: 4 of 4 done.")).to_be_visible()
    shot(page, "9-phone-bulk-summary")
    assert page.evaluate("document.documentElement.scrollWidth") <= 390


def test_overdue_and_cancelled_requests_read_plainly_and_filter(
    browser: Browser, server: Server
) -> None:
    from tests.django.approval_helpers import approval_graph

    graph = approval_graph(title="Pay ${input.vendor}", show=["state.total"], due_in_s=1)
    server.api("analyst", "POST", "/api/flows/", {"slug": "quick-due", "draft": graph})
    server.api("analyst", "POST", "/api/flows/quick-due/publish/")
    server.api(
        "analyst",
        "POST",
        "/api/runs/",
        {"flow": "quick-due", "input": {"amount": 7, "vendor": "Globex"}},
    )
    doomed = server.api(
        "analyst", "POST", "/api/runs/", {"flow": "invoice-sign-off", "input": INVOICE}
    )
    wait_for(
        lambda: server.api("admin", "GET", f"/api/runs/{doomed['id']}/")["status"] == "waiting"
    )
    server.api("admin", "POST", f"/api/runs/{doomed['id']}/cancel/", {"reason": "duplicate"})
    wait_for(
        lambda: server.api("admin", "GET", f"/api/runs/{doomed['id']}/")["status"] == "cancelled"
    )
    time.sleep(1.2)
    page = browser.new_context(viewport={"width": 1280, "height": 860}).new_page()
    log_in(page, server.url, "finance", "braid-finance")
    item = page.get_by_role("article", name="Pay Globex")
    expect(item).to_contain_text("overdue by")
    expect(item).to_contain_text("state.total")
    page.get_by_label("Due", exact=True).select_option("overdue")
    expect(page.get_by_role("article")).to_have_count(1)
    page.get_by_label("Search", exact=True).fill("nothing like this")
    expect(page.get_by_text("No request matches these filters.")).to_be_visible()
    page.get_by_role("button", name="Clear filters").first.click()
    expect(page.get_by_role("article")).to_have_count(1)
    shot(page, "10-overdue")
    page.get_by_role("tab", name="Archive").click()
    cancelled = page.get_by_role("article", name="Finance sign-off for INV-42")
    expect(cancelled).to_contain_text("Cancelled: run cancelled by admin")
    shot(page, "11-archive-cancelled")
