"""XSS payloads in every user-provided string, rendered through every page in Chromium.

One `braid serve`, one seeding through the API, each page visited once: the flow's name,
a node's label, an approval's title, instructions and shown values, a decision's comment,
state values, run input, a fail node's error and a cancel reason all hold payloads that
run `window.__xss=1` if they ever reach the DOM as markup, and `javascript:` URLs where a
value could become a link. On every page: the payload is visible as text (so the test
sees the data it attacks), `window.__xss` stays undefined, no dialog opens, the CSP
reports no blocked script (a violation would mean markup got through and only the CSP
stopped it), and no link has a `javascript:` href.

A second test logs a browser out in one tab while another tab follows a run live: the
socket is closed by the server within 5 s and the page says so.
"""

import base64
import json
import re
import time
import urllib.request
from collections.abc import Callable
from typing import Any

import pytest
from playwright.sync_api import (
    Browser,
    BrowserContext,
    Dialog,
    Page,
    WebSocketRoute,
    expect,
)

pytestmark = pytest.mark.browser

XSS = (
    '<img src=x onerror="window.__xss=1;alert(1)">'
    '"><script>window.__xss=1</script>'
    "</script><svg onload=window.__xss=1>"
    "'\"><iframe src=javascript:window.__xss=1>"
)
LINK = "javascript:window.__xss=1//"
SHOWN = "<img src=x onerror=window.__xss=1>"  # a marker every page must show as text
WATCH = """
window.__violations = [];
document.addEventListener("securitypolicyviolation", (event) => {
  window.__violations.push(`${event.effectiveDirective} ${event.blockedURI}`);
});
"""
GRAPH = {
    "format": "braid.graph/1",
    "name": f"{SHOWN} flow {XSS}",
    "state": {
        "note": {"reducer": "overwrite"},
        "link": {"reducer": "overwrite"},
        "url": {"reducer": "overwrite"},
    },
    "nodes": [
        {"id": "start", "type": "start", "label": f"{SHOWN} start"},
        {"id": "write", "type": "set", "label": f"{SHOWN} {XSS}",
         "values": {"note": "input.note", "link": f"'{LINK}'", "url": "input.url"}},
        {"id": "ask", "type": "approval", "label": f"{SHOWN} ask", "groups": ["finance"],
         "policy": "any", "title": f"{SHOWN} ${{input.note}}",
         "instructions": f"{XSS} ${{input.note}} see ${{input.url}}",
         "show": ["state.note", "state.link", "input.url"]},
        {"id": "boom", "type": "fail", "label": f"{SHOWN} boom", "error": f"{SHOWN} {XSS}"},
        {"id": "done", "type": "end"},
    ],
    "edges": [
        {"source": "start", "target": "write"},
        {"source": "write", "target": "ask"},
        {"source": "ask", "outcome": "approved", "target": "done"},
        {"source": "ask", "outcome": "rejected", "target": "boom"},
    ],
}  # fmt: skip
INPUT = {"note": f"{SHOWN} {XSS}", "url": LINK}


def api(base: str, user: str, method: str, path: str, body: Any = None) -> Any:
    """Call the API with Basic auth as a demo user; return the JSON body."""
    token = base64.b64encode(f"{user}:braid-{user}".encode()).decode()
    request = urllib.request.Request(
        base + path, data=None if body is None else json.dumps(body).encode(), method=method,
        headers={"Authorization": f"Basic {token}", "Content-Type": "application/json"},
    )  # fmt: skip
    with urllib.request.urlopen(request, timeout=15) as response:
        return json.loads(response.read() or b"null")


def wait_for_status(base: str, run_id: str, status: str, seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while api(base, "admin", "GET", f"/api/runs/{run_id}/")["status"] != status:
        assert time.monotonic() < deadline, f"run {run_id} never became {status}"
        time.sleep(0.2)


def seed(base: str) -> dict[str, str]:
    """Store every payload once: a flow, a waiting run, a rejected one, a cancelled one."""
    api(base, "analyst", "POST", "/api/flows/", {"slug": "xss", "name": GRAPH["name"],
                                                 "draft": GRAPH})  # fmt: skip
    api(base, "analyst", "POST", "/api/flows/xss/publish/")
    runs = [api(base, "analyst", "POST", "/api/runs/", {"flow": "xss", "input": INPUT})["id"]
            for _ in range(3)]  # fmt: skip
    for run in runs:
        wait_for_status(base, run, "waiting")
    requests = api(base, "finance", "GET", "/api/approvals/?limit=500")["results"]
    by_run = {request["run"]: request["id"] for request in requests}
    api(base, "finance", "POST", f"/api/approvals/{by_run[runs[1]]}/decide/",
        {"decision": "reject", "comment": f"{SHOWN} {XSS} {LINK}"})  # fmt: skip
    api(base, "admin", "POST", f"/api/runs/{runs[2]}/cancel/", {"reason": f"{SHOWN} {XSS}"})
    wait_for_status(base, runs[1], "failed")
    return {"waiting": runs[0], "rejected": runs[1], "cancelled": runs[2]}


def logged_in(browser: Browser, base: str, user: str) -> tuple[BrowserContext, Page, list[str]]:
    """A context logged in through the form, watching for dialogs, errors and violations."""
    context = browser.new_context(viewport={"width": 1280, "height": 860})
    context.add_init_script(WATCH)
    page = context.new_page()
    events: list[str] = []

    def dismiss(dialog: Dialog) -> None:
        events.append(f"dialog {dialog.message}")
        dialog.dismiss()

    page.on("dialog", dismiss)
    page.on("pageerror", lambda error: events.append(f"error {error}"))
    page.goto(f"{base}/login/")
    page.get_by_label("User name").fill(user)
    page.get_by_label("Password").fill(f"braid-{user}")
    page.get_by_role("button", name="Log in").click()
    expect(page.locator("form.account")).to_contain_text(user)
    return context, page, events


def verdict(page: Page, events: list[str]) -> dict[str, Any]:
    """Return what must be empty or false after a page has rendered the payloads."""
    page.wait_for_timeout(300)  # an onerror fires after the image fails to load
    return {
        "xss": page.evaluate("typeof window.__xss"),
        "events": list(events),
        "violations": page.evaluate("window.__violations"),
        "javascript links": page.locator('a[href^="javascript:" i]').count(),
        "frames": page.locator("iframe, object, embed").count(),
        "payload as text": SHOWN in page.locator("body").inner_text(),
    }


SAFE = {"xss": "undefined", "events": [], "violations": [], "javascript links": 0,
        "frames": 0, "payload as text": True}  # fmt: skip


def test_no_payload_executes_on_any_page(browser: Browser, braid_server: str) -> None:
    runs = seed(braid_server)
    results: dict[str, dict[str, Any]] = {}

    def visit(page: Page, events: list[str], name: str, path: str, ready: Any) -> None:
        page.goto(braid_server + path)
        expect(ready(page)).to_be_visible()
        results[name] = verdict(page, events)
        events.clear()

    context, analyst, events = logged_in(browser, braid_server, "analyst")
    visit(
        analyst,
        events,
        "flows list",
        "/flows/",
        lambda p: p.get_by_role("link", name=re.compile("flow")).first,
    )
    visit(
        analyst,
        events,
        "designer",
        "/flows/xss/",
        lambda p: p.locator('.react-flow__node[data-id="write"]'),
    )
    analyst.locator('.react-flow__node[data-id="write"]').click()
    expect(analyst.get_by_role("complementary", name="Settings of write")).to_be_visible()
    results["designer inspector"] = verdict(analyst, events)
    analyst.get_by_role("button", name="Test run").click()
    analyst.get_by_label("input (JSON)", exact=False).fill(json.dumps(INPUT))
    analyst.get_by_role("button", name="Run", exact=True).click()
    waiting = analyst.get_by_role("list", name="Approvals waiting").get_by_role("listitem")
    waiting.filter(has_text="ask").get_by_role("button", name="Reject").click()
    outcome = analyst.get_by_role("status").filter(has_text="The run is")
    expect(outcome).to_contain_text(f"failed: {SHOWN} {XSS}")
    results["designer test run"] = verdict(analyst, events)
    context.close()

    context, admin, events = logged_in(browser, braid_server, "admin")
    visit(
        admin,
        events,
        "runs list",
        "/runs/",
        lambda p: p.locator(f'tr[data-run="{runs["waiting"]}"]'),
    )
    for name, run in runs.items():
        visit(admin, events, f"run view ({name})", f"/runs/{run}/",
              lambda p: p.locator('.react-flow__node[data-id="ask"]'))  # fmt: skip
        admin.locator('.react-flow__node[data-id="ask"]').click()
        expect(admin.get_by_role("region", name=re.compile("Node ask"))).to_be_visible()
        results[f"run inspector ({name})"] = verdict(admin, events)
    context.close()

    context, finance, events = logged_in(browser, braid_server, "finance")
    visit(finance, events, "inbox", "/inbox/", lambda p: p.get_by_role("article").first)
    finance.get_by_role("article").first.click()
    expect(finance.get_by_role("complementary", name="Request details")).to_contain_text(SHOWN)
    results["approval detail"] = verdict(finance, events)
    finance.get_by_role("tab", name="Archive").click()
    rejected = finance.get_by_role("article").filter(has_text="finance rejected")
    expect(rejected).to_contain_text(f"{SHOWN} {XSS} {LINK}")
    results["inbox archive"] = verdict(finance, events)
    # The control: markup that does reach the DOM is seen by the watch (and stopped by the CSP).
    finance.evaluate(f"document.body.insertAdjacentHTML('beforeend', {json.dumps(SHOWN)})")
    control = verdict(finance, events)
    context.close()

    assert {page: found for page, found in results.items() if found != SAFE} == {}
    assert len(results) == 14
    assert (control["xss"], control["violations"]) == ("undefined", ["script-src-attr inline"])


LOGGED_OUT = "You are logged out: log in again to follow this run live."


def log_out_beside_a_live_run_view(
    browser: Browser, base: str, invoice_id: str, relay: Callable[[WebSocketRoute], None] | None
) -> BrowserContext:
    """Watch a waiting run live as the admin (its socket through `relay`, if given), log out
    in another tab of the same browser, check that the run view's badge says so within 5 s
    of the click, and return the browser context."""
    invoice = {"invoice": {"id": invoice_id, "amount": 5, "vendor": "V"}}
    body = {"flow": "invoice-sign-off", "input": invoice}
    run = api(base, "analyst", "POST", "/api/runs/", body)["id"]
    wait_for_status(base, run, "waiting")
    context, watching, _ = logged_in(browser, base, "admin")
    if relay is not None:
        watching.route_web_socket(re.compile(r"/ws/runs/[0-9a-f-]+/$"), relay)
    watching.goto(f"{base}/runs/{run}/")
    badge = watching.locator(".run-head .live-badge")
    expect(badge).to_have_text("● live")
    other = context.new_page()
    other.goto(f"{base}/flows/")
    began = time.monotonic()
    other.get_by_role("button", name="Log out").click()
    expect(other.get_by_label("User name")).to_be_visible()
    expect(badge).to_have_text(LOGGED_OUT, timeout=5000)
    assert time.monotonic() - began < 5
    return context


def test_logging_out_in_one_tab_closes_the_live_run_view_in_another(
    browser: Browser, braid_server: str
) -> None:
    log_out_beside_a_live_run_view(browser, braid_server, "INV-9", None).close()


def test_a_run_view_whose_socket_dropped_learns_at_its_reconnect_that_it_logged_out(
    browser: Browser, braid_server: str
) -> None:
    # The page first sees its socket close with a code that asks it to reconnect (here a
    # relay turns the server's 4401 into 1001, as a dropped connection would be), so the
    # reconnect is what must tell it: the server accepts and closes with 4401, which a page
    # can read, where a refused handshake reaches it as 1006 and it would retry forever.
    relayed: list[int] = []

    def relay(page_side: WebSocketRoute) -> None:
        server = page_side.connect_to_server()
        if not relayed:
            server.on_close(lambda code, reason: page_side.close(code=1001, reason="away"))
        relayed.append(len(relayed))

    context = log_out_beside_a_live_run_view(browser, braid_server, "INV-10", relay)
    assert relayed == [0, 1]
    context.close()
