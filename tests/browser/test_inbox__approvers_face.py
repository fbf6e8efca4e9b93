"""The approvers' face in Chromium against `braid serve`: each person lands on the inbox,
sees who started each run, when, the flow version and its input without any `show`; the
run's starter sees their own request read-only with the reason, in the inbox and in the
run view; the new request's email (console backend) links to it; screenshots at 1440 and
390 px for finance, legal and the starter."""

import base64
import json
import re
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.browser.test_inbox__chromium import INVOICE, SHOTS, Server
from tests.processes import ROOT, base_env, free_port, manage, running, wait_for_port

pytestmark = pytest.mark.browser
CONTROLLER = (
    "from django.contrib.auth.models import Group, User; "
    "u = User.objects.create_user('controller', password='braid-controller', "
    "email='controller@braid.example'); "
    "u.groups.add(Group.objects.get(name='finance'))"
)
PURCHASE = {
    "format": "braid.graph/1",
    "name": "Purchase request",
    "state": {"decision": {"reducer": "overwrite"}},
    "nodes": [
        {"id": "start", "type": "start"},
        {"id": "buy", "type": "approval", "groups": ["finance", "legal"], "policy": "all",
         "title": "Approve purchase ${input.ref}"},
        {"id": "done", "type": "end"},
    ],
    "edges": [
        {"source": "start", "target": "buy"},
        {"source": "buy", "outcome": "approved", "target": "done"},
        {"source": "buy", "outcome": "rejected", "target": "done"},
    ],
}  # fmt: skip
LINES = [{"sku": f"SKU-{n}", "qty": n} for n in range(1, 10)]
PURCHASE_INPUT = {"ref": "PO-7", "supplier": "Globex " + "x" * 100, "lines": LINES}
STARTER_SENTENCE = "You started this run, so another finance member must decide"


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[Server, Path]]:
    """`braid serve` with the demo data and a second finance member; its log."""
    port = free_port()
    env = base_env(BRAID_VAR_DIR=str(tmp_path), DJANGO_SETTINGS_MODULE="braid.settings",
                   BRAID_BASE_URL=f"http://127.0.0.1:{port}")  # fmt: skip
    manage(env, "migrate", "--noinput")
    manage(env, "braid", "demo")
    manage(env, "shell", "-c", CONTROLLER)
    log = tmp_path / "serve.log"
    command = [sys.executable, str(ROOT / "manage.py"), "braid", "serve", "--port", str(port)]
    with running(command, env, log) as process:
        wait_for_port(port, process, log)
        yield Server(f"http://127.0.0.1:{port}"), log


def basic(server: Server, user: str, password: str, path: str, body: Any) -> Any:
    """POST to the API as a user whose password is not braid-<name>; return the JSON."""
    token = base64.b64encode(f"{user}:{password}".encode()).decode()
    headers = {"Authorization": f"Basic {token}", "Content-Type": "application/json"}
    data = json.dumps(body).encode()
    request = urllib.request.Request(server.url + path, data=data, method="POST", headers=headers)
    with urllib.request.urlopen(request, timeout=15) as response:
        return json.loads(response.read())


def waiting(server: Server, run_id: str) -> None:
    """Wait until the run waits on its approvals."""
    deadline = time.monotonic() + 30
    while server.api("admin", "GET", f"/api/runs/{run_id}/")["status"] != "waiting":
        assert time.monotonic() < deadline, "the run never reached its approval"
        time.sleep(0.2)


def log_in_at_the_door(page: Page, url: str, username: str, password: str) -> None:
    """Log in at /login/ with no `next`: the person lands where their work is."""
    page.goto(f"{url}/login/")
    page.get_by_label("User name").fill(username)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Log in").click()
    expect(page).to_have_url(re.compile(r"/inbox/$"))
    expect(page.get_by_role("heading", level=1)).to_have_text("Inbox")


def shot(page: Page, name: str) -> None:
    """Save a full-page screenshot for a person to look at."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"inbox-face-{name}.png"), full_page=True)


def no_sideways_scroll(page: Page) -> None:
    """At 390 px nothing may make the page scroll sideways (UI.md)."""
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 390, f"the page is {width} px wide at 390 px"


@pytest.mark.parametrize("width", [1440, 390])
def test_finance_legal_and_the_starter_each_see_context_and_the_starter_sees_why(
    browser: Browser, served: tuple[Server, Path], width: int
) -> None:
    server, log = served
    start = {"flow": "invoice-sign-off", "input": INVOICE}
    invoice = server.api("analyst", "POST", "/api/runs/", start)
    server.api("analyst", "POST", "/api/flows/", {"slug": "purchase", "draft": PURCHASE})
    server.api("analyst", "POST", "/api/flows/purchase/publish/")
    purchase = basic(server, "controller", "braid-controller", "/api/runs/",
                     {"flow": "purchase", "input": PURCHASE_INPUT})  # fmt: skip
    waiting(server, invoice["id"])
    waiting(server, purchase["id"])
    errors: list[str] = []
    pages = {}
    for user, password in (("finance", "braid-finance"), ("legal", "braid-legal"),
                           ("controller", "braid-controller")):  # fmt: skip
        page = browser.new_context(viewport={"width": width, "height": 900}).new_page()
        page.on("pageerror", lambda error: errors.append(str(error)))
        log_in_at_the_door(page, server.url, user, password)
        pages[user] = page

    # Legal: the purchase without `show` says who started it, when, the version and the input.
    legal = pages["legal"]
    item = legal.get_by_role("article", name="Approve purchase PO-7")
    started = re.compile(r"Started by controller (just now|\d+ min ago) · Purchase request v1")
    expect(item.locator(".started")).to_have_text(started)
    values = item.locator("dl.shown--input")
    # Fields and keys by name: PostgreSQL's jsonb keeps no key order (approvals/context.py).
    expect(values.locator("dt")).to_have_text(["lines", "ref", "supplier"])
    expect(values.locator("dd").nth(2)).to_have_text("Globex " + "x" * 72 + "…")
    expect(values.locator("dd").nth(0)).to_have_text(
        "[{qty: 1, sku: SKU-1}, {qty: 2, sku: SKU-2}, {qty: 3, sku: SKU-3}, … 6 more]"
    )
    expect(item.get_by_role("button", name="Approve Approve purchase PO-7")).to_be_visible()
    shot(legal, f"legal-{width}")

    # Finance: the invoice's chosen `show` fields, and the purchase with its input.
    finance = pages["finance"]
    invoice_item = finance.get_by_role("article", name="Finance sign-off for INV-42")
    expect(invoice_item.locator("dl.shown").first).to_contain_text("Acme <Ltd>")
    expect(invoice_item).to_contain_text("Started by analyst")
    expect(finance.get_by_role("article", name="Approve purchase PO-7")).to_contain_text("supplier")
    shot(finance, f"finance-{width}")

    # The starter: their own purchase is listed read-only with the reason; the count skips it.
    starter = pages["controller"]
    own = starter.get_by_role("article", name="Approve purchase PO-7")
    expect(own.locator(".why-not--starter")).to_have_text(STARTER_SENTENCE)
    expect(own.get_by_role("button", name=re.compile("^Approve"))).to_have_count(0)
    expect(own.get_by_role("checkbox")).to_be_disabled()
    expect(starter.locator("nav [data-inbox-count]")).to_have_attribute("data-inbox-count", "1")
    own.click()
    detail = starter.get_by_role("complementary", name="Request details")
    expect(detail.locator(".why-not--starter")).to_have_text(STARTER_SENTENCE)
    expect(detail.get_by_role("button", name="Approve")).to_have_count(0)
    shot(starter, f"starter-{width}")
    if width == 390:
        for page in pages.values():
            no_sideways_scroll(page)

    # The run view: the starter inspects the waiting approval and reads the same sentence.
    starter.goto(f"{server.url}/runs/{purchase['id']}/")
    starter.locator('.react-flow__node[data-id="buy"]').click()
    inspector = starter.get_by_role("region", name=re.compile("Node buy"))
    expect(inspector.locator(".why-not--starter")).to_have_text(STARTER_SENTENCE)
    expect(inspector.get_by_role("button", name="Approve")).to_have_count(0)
    expect(inspector.get_by_placeholder("comment (optional)")).to_have_count(0)
    shot(starter, f"starter-run-{width}")
    assert errors == []

    # The email for legal (console backend): the same title and context, and a link to it.
    text = log.read_text(errors="replace")
    assert "Subject: [Braid] Approve purchase PO-7" in text
    assert "To: legal@braid.example" in text
    assert "Started by controller on" in text
    mine = server.api("legal", "GET", "/api/approvals/?q=purchase")["results"][0]["id"]
    assert f"Open it: {server.url}/inbox/?request={mine}" in text


def test_the_link_in_an_email_opens_the_inbox_on_that_request(
    browser: Browser, served: tuple[Server, Path]
) -> None:
    server, _ = served
    runs = [server.api("analyst", "POST", "/api/runs/", {"flow": "invoice-sign-off",
                                                       "input": {**INVOICE, "n": n}})
            for n in range(3)]  # fmt: skip
    for run in runs:
        waiting(server, run["id"])
    listed = server.api("finance", "GET", "/api/approvals/")["results"]
    oldest = next(r for r in listed if r["run"] == runs[0]["id"])
    page = browser.new_context(viewport={"width": 1440, "height": 900}).new_page()
    page.goto(f"{server.url}/inbox/?request={oldest['id']}")
    page.get_by_label("User name").fill("finance")
    page.get_by_label("Password").fill("braid-finance")
    page.get_by_role("button", name="Log in").click()
    expect(page).to_have_url(f"{server.url}/inbox/?request={oldest['id']}")
    active = page.locator("article.request--active")
    expect(active).to_contain_text(f"run {runs[0]['id'][:8]}")
    detail = page.get_by_role("complementary", name="Request details")
    expect(detail).to_contain_text(f"run {runs[0]['id'][:8]}")
