"""The admin's face (issue 31): cancel as a deliberate act, the waiting work in view, bulk actions.

Runs against `braid_server` (as `make run`). Screenshots at 1440 and 390 px wide go to
var/screenshots/admin-*.png.
"""

import itertools
import json
import re
import time
import uuid
from pathlib import Path

import pytest
from playwright.sync_api import Page, Route, ViewportSize, expect

from tests.browser.test_login__chromium import log_in
from tests.django.test_durable__retry import FLOW as FAILING_ONCE
from tests.processes import Browserless

pytestmark = pytest.mark.browser

SCREENSHOTS = Path(__file__).resolve().parents[2] / "var" / "screenshots"
LIVE = 3000  # ms: a change must reach the page without a reload within this
# ms: a page just opened must show its first frame within this. Quiet, it takes 0.1-0.6 s after
# the load event; CI's full suite on 2 cores once took more than LIVE (the run was finished, its
# colors drawn, no frame yet after 3 s).
OPENED = 10_000
# What a page asked for and when each answer ended, in ms since it began to load: told when a
# first frame is late, to say whether the server or the page kept it.
REQUESTS = """() => performance.getEntriesByType('resource')
  .filter((entry) => entry.name.includes('/api/') || entry.name.includes('/ws/'))
  .map((entry) => `${new URL(entry.name).pathname} ${Math.round(entry.responseEnd)}`)"""
DESKTOP: ViewportSize = {"width": 1440, "height": 900}
PHONE: ViewportSize = {"width": 390, "height": 844}
INVOICE = {"invoice": {"id": "INV-31", "amount": 120, "vendor": "Vendor"}}
STEPS = [f"step{i}" for i in range(1, 13)]
# A long chain with the approval at its bottom: a view fitted on the top would miss it.
HOLD: dict[str, object] = {
    "format": "braid.graph/1",
    "name": "Long chain, then hold",
    "state": {"log": {"reducer": "append"}},
    "nodes": [
        {"id": "start", "type": "start"},
        *({"id": step, "type": "set", "values": {"log": f"['{step}']"}} for step in STEPS),
        {"id": "hold", "type": "approval", "groups": ["finance"], "policy": "any",
         "title": "Hold for finance"},
        {"id": "done", "type": "end"},
    ],
    "edges": [
        *({"source": a, "target": b} for a, b in itertools.pairwise(["start", *STEPS, "hold"])),
        {"source": "hold", "outcome": "approved", "target": "done"},
    ],
}  # fmt: skip
# The smallest text on the canvas as seen on screen: font size times the viewport's zoom,
# over the visible text of nodes inside the canvas.
SMALLEST_SCREEN_TEXT = """() => {
  const flow = document.querySelector('.react-flow');
  const box = flow.getBoundingClientRect();
  const viewport = flow.querySelector('.react-flow__viewport');
  const zoom = new DOMMatrix(getComputedStyle(viewport).transform).a;
  let smallest = Infinity;
  for (const el of flow.querySelectorAll('.react-flow__node *')) {
    const own = [...el.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim() !== '');
    if (!own || el.closest('.visually-hidden')) continue;
    const r = el.getBoundingClientRect();
    const outside = r.right < box.left || r.left > box.right
      || r.bottom < box.top || r.top > box.bottom;
    if (r.width === 0 || outside) continue;
    smallest = Math.min(smallest, parseFloat(getComputedStyle(el).fontSize) * zoom);
  }
  return smallest;
}"""


def shoot(page: Page, name: str) -> None:
    """Save a full-page screenshot under var/screenshots/."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"admin-{name}.png"), full_page=True)


def admin_client(base: str) -> Browserless:
    client = Browserless(base)
    client.login("admin", "braid-admin")
    return client


def start(client: Browserless, flow: str, input_value: object = None) -> str:
    """Start a run through the API; return its id."""
    status, body = client.post_json("/api/runs/", {"flow": flow, "input": input_value or {}})
    assert status == 201, body
    return str(body["id"])


def status_of(client: Browserless, run_id: str) -> str:
    return str(client.get_json(f"/api/runs/{run_id}/")[1]["status"])


def publish(client: Browserless, graph: dict[str, object], slug: str) -> None:
    """Import a flow and publish it."""
    status, body = client.post_json("/api/flows/import/", {"graph": graph, "slug": slug})
    assert status == 201, body
    status, body = client.post_json(f"/api/flows/{slug}/publish/", {})
    assert status in (200, 201), body


def settled(client: Browserless, run_id: str, wanted: str) -> None:
    """Wait until the run's status is `wanted` (the embedded worker advances it)."""
    deadline = time.monotonic() + 15
    while (seen := status_of(client, run_id)) != wanted and time.monotonic() < deadline:
        time.sleep(0.1)
    assert seen == wanted, f"run {run_id} is {seen}, not {wanted}"


def fin_reason(page: Page) -> str:
    """Hover the finance approval; return the reason its tooltip gives."""
    page.locator('.react-flow__node[data-id="fin"]').hover()
    return page.locator("#braid-reason-fin").inner_text()


def no_sideways_scroll(page: Page) -> bool:
    return bool(page.evaluate("document.documentElement.scrollWidth <= window.innerWidth"))


def test_cancel_asks_in_a_dialog_that_holds_the_focus_and_its_reason_reaches_the_reasons(
    page: Page, braid_server: str
) -> None:
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    admin = admin_client(braid_server)
    run_id = start(admin, "invoice-sign-off", INVOICE)
    settled(admin, run_id, "waiting")
    page.set_viewport_size(DESKTOP)
    log_in(page, braid_server, "admin", "braid-admin")
    page.goto(f"{braid_server}/runs/{run_id}/")
    retry = page.get_by_role("button", name="Retry")
    expect(retry).to_have_attribute("aria-disabled", "true")
    expect(retry).to_have_attribute(
        "title", "Only a failed run can be retried; this one is waiting."
    )
    opener = page.get_by_role("button", name="Cancel run…")
    expect(opener).to_have_attribute("aria-disabled", "false")

    # Opened: labelled, the reason field focused, Tab and Shift+Tab stay inside.
    opener.click()
    dialog = page.get_by_role("dialog", name=f"Cancel run {run_id[:8]}?")
    expect(dialog).to_be_visible()
    reason = dialog.get_by_label("Reason (optional)")
    expect(reason).to_be_focused()
    page.keyboard.press("Tab")
    expect(dialog.get_by_role("button", name="Keep running")).to_be_focused()
    page.keyboard.press("Tab")
    expect(dialog.get_by_role("button", name="Cancel the run")).to_be_focused()
    page.keyboard.press("Tab")
    expect(reason).to_be_focused()
    page.keyboard.press("Shift+Tab")
    expect(dialog.get_by_role("button", name="Cancel the run")).to_be_focused()
    # Escape closes it, nothing is sent, and the focus goes back to the button.
    page.keyboard.press("Escape")
    expect(dialog).to_be_hidden()
    expect(opener).to_be_focused()
    assert status_of(admin, run_id) == "waiting"

    # Too long a reason is stopped beside the field; the server's 400 lands there as well.
    opener.click()
    reason.fill("x" * 501)
    expect(dialog.locator(".field-error")).to_have_text(
        "The reason is 1 character over the limit of 500."
    )
    expect(dialog.get_by_role("button", name="Cancel the run")).to_be_disabled()
    too_long = "a reason is at most 500 characters; shorten it"
    refusal = {"code": "run.invalid", "detail": "reason: no", "fields": {"reason": too_long}}
    answer = {"status": 400, "content_type": "application/json", "body": json.dumps(refusal)}
    page.route(re.compile(r".*/cancel/$"), lambda route: route.fulfill(**answer))
    reason.fill("refused on purpose")
    dialog.get_by_role("button", name="Cancel the run").click()
    expect(dialog.locator(".field-error")).to_have_text(
        "a reason is at most 500 characters; shorten it"
    )
    page.unroute(re.compile(r".*/cancel/$"))
    reason.fill("duplicate invoice")
    shoot(page, "run-cancel-dialog-1440")
    dialog.get_by_role("button", name="Cancel the run").click()
    expect(dialog).to_be_hidden()
    expect(page.locator(".run-head .status-pill")).to_have_text(
        re.compile("cancelled"), timeout=LIVE
    )
    expect(opener).to_have_attribute("aria-disabled", "true", timeout=LIVE)
    expect(opener).to_have_attribute(
        "title", "The run was cancelled: there is nothing left to cancel."
    )
    expect(retry).to_have_attribute(
        "title", "Only a failed run can be retried; this one is cancelled."
    )
    expect(page.locator("#admin-actions-why")).to_have_text(
        "The run was cancelled: there is nothing left to cancel. "
        "Only a failed run can be retried; this one is cancelled."
    )
    _, trace = admin.get_json(f"/api/runs/{run_id}/trace/")
    at = next(e["at"] for e in trace["results"] if e["event"] == "run.cancelled")
    expect(page.locator('.react-flow__node[data-id="fin"] .braid-node')).to_have_class(
        re.compile("braid-color--cancelled"), timeout=LIVE
    )
    assert fin_reason(page) == (
        f"Cancelled by admin at {at[11:16]} UTC: duplicate invoice (while waiting for finance)"
    )
    opener.dispatch_event("click")  # disabled: nothing opens
    expect(page.get_by_role("dialog")).to_have_count(0)

    # On a phone: the dialog fits, and the page does not scroll sideways.
    other = start(admin, "invoice-sign-off", INVOICE)
    settled(admin, other, "waiting")
    page.set_viewport_size(PHONE)
    page.goto(f"{braid_server}/runs/{other}/")
    # Finance's and legal's cards do not fit side by side at the readable zoom: the first
    # is framed whole, not two halves.
    expect_framed(page, "live")
    page.wait_for_timeout(300)
    assert in_view(page, "fin") and not in_view(page, "leg")
    shoot(page, "run-parallel-approvals-390")
    page.get_by_role("button", name="Cancel run…").click()
    phone_dialog = page.get_by_role("dialog", name=f"Cancel run {other[:8]}?")
    phone_dialog.get_by_label("Reason (optional)").fill("entered twice")
    box = phone_dialog.bounding_box()
    assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"]
    assert no_sideways_scroll(page)
    shoot(page, "run-cancel-dialog-390")
    phone_dialog.get_by_role("button", name="Keep running").click()
    assert status_of(admin, other) == "waiting"
    assert errors == []


def open_new_run(
    page: Page, base: str, graph: dict[str, object], slug: str, status: str,
    viewport: ViewportSize,
) -> str:  # fmt: skip
    """Publish `graph` as `slug`, start a run, wait until it is `status`, and open its view
    as the admin at that size; return the run's id."""
    admin = admin_client(base)
    publish(admin, graph, slug)
    run_id = start(admin, slug)
    settled(admin, run_id, status)
    page.set_viewport_size(viewport)
    log_in(page, base, "admin", "braid-admin")
    page.goto(f"{base}/runs/{run_id}/")
    return run_id


def expect_framed(page: Page, kind: str) -> None:
    """Wait until the page just opened has framed its canvas as `kind`; when it has not in
    OPENED ms, say when each of the page's requests was answered and how long it has been."""
    try:
        expect(page.locator(".react-flow")).to_have_attribute("data-framed", kind, timeout=OPENED)
    except AssertionError as late:
        answered = page.evaluate(REQUESTS)
        since = page.evaluate("() => Math.round(performance.now())")
        told = f"answered (ms since the page began): {answered}; now {since}"
        raise AssertionError(f"{late}\n{told}") from None


def open_waiting_hold(page: Page, base: str, slug: str, viewport: ViewportSize) -> str:
    """Open a new HOLD run, waiting at its bottom, framed on the waiting step; its id."""
    run_id = open_new_run(page, base, HOLD, slug, "waiting", viewport)
    expect_framed(page, "live")
    return run_id


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["1440", "390"])
def test_the_run_view_opens_on_the_waiting_step_with_canvas_text_at_12_px_or_more(
    page: Page, braid_server: str, viewport: ViewportSize
) -> None:
    admin = admin_client(braid_server)
    open_waiting_hold(page, braid_server, f"hold-{viewport['width']}", viewport)
    flow = page.locator(".react-flow")
    hold = page.locator('.react-flow__node[data-id="hold"]')
    expect(hold.locator(".braid-node")).to_have_class(re.compile("braid-color--waiting"))
    canvas, shown = flow.bounding_box(), hold.bounding_box()
    assert canvas is not None and shown is not None
    assert (
        canvas["x"] <= shown["x"] and shown["x"] + shown["width"] <= canvas["x"] + canvas["width"]
    )
    assert (
        canvas["y"] <= shown["y"] and shown["y"] + shown["height"] <= canvas["y"] + canvas["height"]
    )
    # The top of the chain is out of view: the frame is on the waiting work, not the start.
    start_box = page.locator('.react-flow__node[data-id="start"]').bounding_box()
    assert start_box is not None and start_box["y"] + start_box["height"] < canvas["y"]
    assert page.evaluate(SMALLEST_SCREEN_TEXT) >= 12
    assert no_sideways_scroll(page)
    shoot(page, f"run-framed-on-waiting-{viewport['width']}")

    # Nothing live: the whole graph, at no smaller a zoom; its top, where the run began.
    done = start(admin, "b-and-d-or-e", {"urgent": True})
    settled(admin, done, "completed")
    page.goto(f"{braid_server}/runs/{done}/")
    expect_framed(page, "whole")
    first = page.locator('.react-flow__node[data-id="start"]').bounding_box()
    canvas = flow.bounding_box()
    assert first is not None and canvas is not None
    assert canvas["y"] <= first["y"] <= canvas["y"] + canvas["height"]
    assert page.evaluate(SMALLEST_SCREEN_TEXT) >= 12


VIEWPORT = "() => getComputedStyle(document.querySelector('.react-flow__viewport')).transform"
ZOOM = f"() => new DOMMatrixReadOnly(({VIEWPORT})()).a"


def test_the_view_a_person_zoomed_to_stays_while_the_run_moves_and_fit_view_acts_at_once(
    page: Page, braid_server: str
) -> None:
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    run_id = open_waiting_hold(page, braid_server, f"hold-zoomed-{uuid.uuid4().hex[:6]}", DESKTOP)
    framed = page.evaluate(ZOOM)
    for _ in range(2):
        page.get_by_role("button", name="Zoom Out").click()
    # Each press zooms out 1.2x: wait for both to be drawn before taking the view.
    page.wait_for_function(f"() => ({ZOOM})() < {framed / 1.43}")
    zoomed = page.evaluate(VIEWPORT)

    finance = Browserless(braid_server)
    finance.login("finance", "braid-finance")
    finance.decide_for_run(run_id)
    # The run moves on and the canvas recolors (new node objects, measured again), and the
    # view stays where the person put it: only a resize or an inspected node frames again.
    done = page.locator('.react-flow__node[data-id="done"] .braid-node')
    expect(done).to_have_class(re.compile("braid-color--completed"), timeout=LIVE)
    page.wait_for_timeout(300)  # two frames and more: a reframe would have landed
    assert page.evaluate(VIEWPORT) == zoomed

    # Fit View fits now, from the measured nodes, with no node update to wait for: the
    # chain is taller than the canvas at the 12 px floor, so the fit stops at zoom 1.
    page.get_by_role("button", name="Fit View").click()
    page.wait_for_function(f"() => ({VIEWPORT})() !== {zoomed!r}", timeout=5_000)
    assert page.evaluate(ZOOM) == 1
    assert errors == []


# Two holds at the two ends of a long chain: framed on the first, the second is out of view.
TWO_HOLDS: dict[str, object] = {
    **HOLD,
    "name": "Hold, long chain, hold",
    "nodes": [
        {"id": "start", "type": "start"},
        {"id": "first", "type": "approval", "groups": ["finance"], "policy": "any",
         "title": "First hold"},
        *({"id": step, "type": "set", "values": {"log": f"['{step}']"}} for step in STEPS),
        {"id": "second", "type": "approval", "groups": ["finance"], "policy": "any",
         "title": "Second hold"},
        {"id": "done", "type": "end"},
    ],
    "edges": [
        {"source": "start", "target": "first"},
        {"source": "first", "outcome": "approved", "target": STEPS[0]},
        *({"source": a, "target": b} for a, b in itertools.pairwise([*STEPS, "second"])),
        {"source": "second", "outcome": "approved", "target": "done"},
    ],
}  # fmt: skip


def in_view(page: Page, node: str) -> bool:
    """Whether the node's box lies wholly inside the canvas's."""
    canvas = page.locator(".react-flow").bounding_box()
    box = page.locator(f'.react-flow__node[data-id="{node}"]').bounding_box()
    assert canvas is not None and box is not None
    return bool(
        canvas["x"] <= box["x"] and box["x"] + box["width"] <= canvas["x"] + canvas["width"]
        and canvas["y"] <= box["y"] and box["y"] + box["height"] <= canvas["y"] + canvas["height"]
    )  # fmt: skip


def test_the_run_view_follows_the_live_work_until_a_person_moves_the_view(
    page: Page, braid_server: str
) -> None:
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    slug = f"two-holds-{uuid.uuid4().hex[:6]}"
    run_id = open_new_run(page, braid_server, TWO_HOLDS, slug, "waiting", DESKTOP)
    expect_framed(page, "live")
    follow = page.get_by_role("button", name="Follow live work")
    expect(follow).to_have_attribute("aria-pressed", "true")
    assert in_view(page, "first") and not in_view(page, "second")

    # The first hold is decided: the camera moves to the second, with no hand on the page.
    finance = Browserless(braid_server)
    finance.login("finance", "braid-finance")
    finance.decide_for_run(run_id)
    second = page.locator('.react-flow__node[data-id="second"] .braid-node')
    expect(second).to_have_class(re.compile("braid-color--waiting"), timeout=LIVE)
    page.wait_for_function(
        "() => document.querySelector('.react-flow').dataset.followed === '1'", timeout=LIVE
    )
    page.wait_for_timeout(400)  # the move takes 300 ms
    assert in_view(page, "second") and not in_view(page, "first")
    shoot(page, "run-followed-to-second-hold")

    # A person drags the view away (on the empty pane, left of the chain): the following
    # stops, and the view stays theirs.
    canvas = page.locator(".react-flow").bounding_box()
    assert canvas is not None
    x, y = canvas["x"] + 120, canvas["y"] + canvas["height"] / 2
    page.mouse.move(x, y)
    page.mouse.down()
    page.mouse.move(x + 900, y, steps=12)
    page.mouse.up()
    expect(follow).to_have_attribute("aria-pressed", "false")
    page.wait_for_timeout(400)
    assert not in_view(page, "second")
    scrolled = page.evaluate(VIEWPORT)
    page.wait_for_timeout(300)
    assert page.evaluate(VIEWPORT) == scrolled

    # "Follow live work" frames on it again at once.
    follow.click()
    expect(follow).to_have_attribute("aria-pressed", "true")
    page.wait_for_function(f"() => ({VIEWPORT})() !== {scrolled!r}", timeout=5_000)
    page.wait_for_timeout(300)
    assert in_view(page, "second")

    # Looking at a past execution pauses the following; "l" returns to the live view.
    page.locator("button.tree-row[data-execution]").first.click()
    expect(follow).to_have_attribute("aria-pressed", "false")
    page.keyboard.press("l")
    expect(follow).to_have_attribute("aria-pressed", "true")
    expect(page.get_by_role("button", name="Live", exact=True)).to_have_count(0)

    # Finished, there is nothing to follow: the button goes.
    finance.decide_for_run(run_id)
    expect(follow).to_have_count(0, timeout=LIVE)
    assert errors == []


def test_an_admin_cancels_selected_runs_in_bulk_and_reads_each_result(
    page: Page, braid_server: str
) -> None:
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    admin = admin_client(braid_server)
    slug = f"bulk-{uuid.uuid4().hex[:6]}"
    publish(admin, HOLD, slug)
    runs = [start(admin, slug) for _ in range(3)]
    for run_id in runs:
        settled(admin, run_id, "waiting")
    assert admin.post_json(f"/api/runs/{runs[0]}/cancel/", {"reason": "early"})[0] == 202
    settled(admin, runs[0], "cancelled")
    page.set_viewport_size(DESKTOP)
    log_in(page, braid_server, "admin", "braid-admin")
    page.goto(f"{braid_server}/runs/")
    page.get_by_label("Flow", exact=True).select_option(slug)
    expect(page.locator("tbody tr")).to_have_count(3)

    # Keyboard: the page's select-all box is reached and checked with the keyboard.
    select_all = page.get_by_role("checkbox", name="Select all 3 runs on this page")
    select_all.focus()
    page.keyboard.press("Space")
    bar = page.get_by_role("region", name="Actions on the selected runs")
    expect(bar).to_contain_text("3 runs selected")
    retry = bar.get_by_role("button", name="Retry selected")
    expect(retry).to_have_attribute("aria-disabled", "true")
    expect(retry).to_have_attribute(
        "title", "Only failed runs can be retried, and none of the selected runs failed."
    )
    bar.get_by_role("button", name="Cancel selected…").click()
    dialog = page.get_by_role("dialog", name="Cancel 3 selected runs?")
    expect(dialog).to_contain_text("1 selected run has finished and will be refused.")
    dialog.get_by_label("Reason (optional)").fill("month closed")
    dialog.get_by_role("button", name="Cancel 3 runs").click()

    results = page.get_by_role("region", name="Bulk action results")
    expect(results.get_by_role("status")).to_have_text(
        "Cancel: 2 of 3 done, 1 refused.", timeout=LIVE
    )
    expect(results.locator("progress")).to_have_attribute("value", "3")
    refused = results.get_by_role("list", name="Refused runs").get_by_role("listitem")
    expect(refused).to_have_count(1)
    expect(refused).to_have_text(
        f"{runs[0][:8]} ({slug} v1): the run is cancelled: nothing to cancel"
    )
    for run_id in runs[1:]:
        expect(page.locator(f'tr[data-run="{run_id}"]')).to_contain_text("cancelled", timeout=LIVE)
        assert status_of(admin, run_id) == "cancelled"
    _, trace = admin.get_json(f"/api/runs/{runs[1]}/trace/")
    assert {"by": "admin", "reason": "month closed"} in [
        e["detail"] for e in trace["results"] if e["event"] == "run.cancelled"
    ]
    page.locator(f'tr[data-run="{runs[2]}"]').get_by_role("checkbox").check()
    expect(bar).to_contain_text("1 run selected")
    shoot(page, "runs-bulk-1440")

    page.set_viewport_size(PHONE)
    cancel = bar.get_by_role("button", name="Cancel selected…")
    expect(cancel).to_have_attribute("aria-disabled", "true")
    expect(cancel).to_have_attribute(
        "title", "Every selected run has finished: there is nothing to cancel."
    )
    assert no_sideways_scroll(page)
    shoot(page, "runs-bulk-390")
    assert errors == []


def test_a_long_bulk_cancel_shows_done_of_total_while_it_runs(
    page: Page, braid_server: str
) -> None:
    admin = admin_client(braid_server)
    slug = f"bulk-{uuid.uuid4().hex[:6]}"
    publish(admin, HOLD, slug)
    runs = [start(admin, slug) for _ in range(12)]
    for run_id in runs:
        settled(admin, run_id, "waiting")
    page.set_viewport_size(DESKTOP)
    log_in(page, braid_server, "admin", "braid-admin")
    page.goto(f"{braid_server}/runs/")
    page.get_by_label("Flow", exact=True).select_option(slug)
    expect(page.locator("tbody tr")).to_have_count(12)
    page.get_by_role("checkbox", name="Select all 12 runs on this page").check()
    # The page sends ten runs a request: hold the second request to see the count between.
    held: list[Route] = []
    seen: list[int] = []

    def hold_the_second(route: Route) -> None:
        seen.append(len(json.loads(route.request.post_data or "{}")["ids"]))
        if len(seen) == 2:
            held.append(route)
        else:
            route.continue_()

    page.route(re.compile(r".*/api/runs/bulk/$"), hold_the_second)
    page.get_by_role("button", name="Cancel selected…").click()
    page.get_by_role("dialog").get_by_role("button", name="Cancel 12 runs").click()
    results = page.get_by_role("region", name="Bulk action results")
    expect(results.get_by_role("status")).to_have_text("Cancelling: 10 of 12 runs answered…")
    expect(results.locator("progress")).to_have_attribute("value", "10")
    expect(results.locator("progress")).to_have_attribute("max", "12")
    shoot(page, "runs-bulk-progress-1440")
    held[0].continue_()
    expect(results.get_by_role("status")).to_have_text("Cancel: 12 of 12 done.", timeout=LIVE)
    assert seen == [10, 2]
    for run_id in runs:  # answered means accepted (202); the worker applies each cancel next
        settled(admin, run_id, "cancelled")


def test_retry_is_open_on_a_failed_run_and_runs_the_failed_step_again(
    page: Page, braid_server: str
) -> None:
    slug = f"flaky-{uuid.uuid4().hex[:6]}"
    open_new_run(page, braid_server, FAILING_ONCE, slug, "failed", DESKTOP)
    cancel = page.get_by_role("button", name="Cancel run…")
    expect(cancel).to_have_attribute("aria-disabled", "true")
    expect(cancel).to_have_attribute("title", "The run failed: there is nothing left to cancel.")
    retry = page.get_by_role("button", name="Retry")
    expect(retry).to_have_attribute("aria-disabled", "false")
    retry.click()
    expect(page.get_by_text("Retry started: the failed step runs again.")).to_be_visible()
    expect(page.locator(".run-head .status-pill")).to_have_text(
        re.compile("completed"), timeout=LIVE
    )
    expect(retry).to_have_attribute("aria-disabled", "true")
