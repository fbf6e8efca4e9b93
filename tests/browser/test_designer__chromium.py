"""The designer in Chromium: an analyst draws, validates, publishes and reopens flows."""

import json
import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Literal

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import Client
from playwright.sync_api import Browser, Locator, Page, expect
from pytest_django.live_server_helper import LiveServer

from designer import services
from designer.models import DraftRevision, Flow
from tests.browser.page_errors import errors_of, watch_errors
from tests.browser.test_login__chromium import log_in

pytestmark = pytest.mark.browser

SCREENSHOTS = Path(__file__).resolve().parents[2] / "var" / "screenshots"
DEMO_SLUGS = sorted(
    p.stem for p in (Path(__file__).resolve().parents[2] / "designer" / "demo_flows").glob("*.json")
)


def shoot(page: Page, name: str) -> None:
    """Save a screenshot of the page as a test artifact (var/screenshots, not committed)."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"designer-{name}.png"), full_page=True)


def smallest_label_px(page: Page) -> float:
    """Return the smallest on-screen font size of the node labels at the current zoom."""
    found: float = page.evaluate(
        """() => {
          const viewport = document.querySelector('.react-flow__viewport');
          const zoom = new DOMMatrix(getComputedStyle(viewport).transform).a;
          const labels = [...document.querySelectorAll('.braid-node__id')];
          return Math.min(...labels.map(e => parseFloat(getComputedStyle(e).fontSize) * zoom));
        }"""
    )
    return found


@pytest.fixture
def analyst_page(page: Page, live_server: LiveServer) -> Iterator[Page]:
    call_command("braid", "demo")
    watch_errors(page)
    log_in(page, live_server.url, "analyst", "braid-analyst")
    yield page
    # Leave the editor before the database is flushed: an autosave or a validation still
    # in flight would otherwise hold a table lock during the flush.
    page.goto("about:blank")


@pytest.mark.parametrize("slug", DEMO_SLUGS)
def test_each_demo_flow_opens_in_the_editor_readable_and_valid(
    analyst_page: Page, live_server: LiveServer, slug: str
) -> None:
    page = analyst_page
    page.goto(f"{live_server.url}/flows/{slug}/")
    flow = Flow.objects.get(slug=slug)
    expect(page.locator(".react-flow__node")).to_have_count(len(flow.draft["nodes"]))
    # Every demo flow is valid; some have warnings.
    expect(page.locator(".braid-problems__counts")).to_have_text(
        re.compile(r"none: the flow is valid|0 error\(s\), \d+ warning\(s\)"), timeout=8000
    )
    shoot(page, f"demo-{slug}")
    assert smallest_label_px(page) >= 12
    assert errors_of(page) == []
    assert json.loads(json.dumps(Flow.objects.get(slug=slug).draft)) == flow.draft


EMPTY = {"format": "braid.graph/1", "name": "Invoice drawn", "nodes": [], "edges": []}
EXPECTED: dict[str, Any] = {
    "format": "braid.graph/1",
    "name": "Invoice drawn",
    "nodes": [
        {"id": "start", "type": "start"},
        {"id": "split", "type": "fork", "branches": ["finance", "legal"]},
        {"id": "fin", "type": "approval", "groups": ["finance"], "policy": "all",
         "title": "Finance sign-off"},
        {"id": "leg", "type": "approval", "groups": ["legal"], "policy": "all",
         "title": "Legal sign-off"},
        {"id": "both", "type": "gather", "slots": ["finance", "legal"], "conflicts": "error"},
        {"id": "done", "type": "end"},
    ],
    "edges": [
        {"source": "start", "target": "split"},
        {"source": "split", "target": "fin", "branch": "finance"},
        {"source": "split", "target": "leg", "branch": "legal"},
        {"source": "fin", "target": "both", "outcome": "approved", "slot": "finance"},
        {"source": "both", "target": "done"},
        # Drawn last, by mouse, after the validator pointed at the empty slot.
        {"source": "leg", "target": "both", "outcome": "approved", "slot": "legal"},
    ],
}  # fmt: skip


def without_layout(document: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in document.items() if key != "layout"}


def node(page: Page, node_id: str) -> Locator:
    return page.locator(f'.react-flow__node[data-id="{node_id}"]')


type Modifier = Literal["Alt", "Control", "ControlOrMeta", "Meta", "Shift"]


def pick(page: Page, node_id: str, modifiers: Sequence[Modifier] = ()) -> None:
    """Select a node: by mouse with a modifier, else by keyboard (focus pans it into view)."""
    node(page, node_id).focus()
    if modifiers:
        node(page, node_id).click(modifiers=modifiers)
    else:
        page.keyboard.press("Enter")
    expect(node(page, node_id)).to_have_class(re.compile(r"\bselected\b"))


def handle(page: Page, node_id: str, handle_id: str) -> Locator:
    return node(page, node_id).locator(f'.react-flow__handle[data-handleid="{handle_id}"]')


def quick_add(page: Page, kind: str) -> None:
    """Press / and pick a node type by typing: it lands after the selected node, connected."""
    page.keyboard.press("/")
    page.keyboard.type(kind)
    page.keyboard.press("Enter")


def set_field(page: Page, label: str, value: str) -> None:
    field = page.locator(".braid-inspector").get_by_label(label, exact=True)
    field.fill(value)
    field.press("Enter")


def drag_between(page: Page, source: Locator, target: Locator, release: bool = True) -> None:
    start, end = source.bounding_box(), target.bounding_box()
    assert start is not None and end is not None, "both ends are on the page"
    page.mouse.move(start["x"] + start["width"] / 2, start["y"] + start["height"] / 2)
    page.mouse.down()
    page.mouse.move(end["x"] + end["width"] / 2, end["y"] + end["height"] / 2, steps=12)
    if release:
        page.mouse.up()


def wait_saved(page: Page) -> None:
    expect(page.locator(".braid-save")).to_have_text("All changes saved", timeout=8000)


def stored(slug: str) -> dict[str, Any]:
    draft: dict[str, Any] = Flow.objects.get(slug=slug).draft
    return draft


def build_invoice_flow(page: Page, live_server: LiveServer) -> None:
    """Draw start → fork(finance, legal) → two approvals → gather(finance, legal) → end."""
    canvas = page.locator(".braid-editor__canvas")
    page.locator('.braid-palette__item[data-node-type="start"]').drag_to(
        canvas, target_position={"x": 320, "y": 90}
    )
    expect(node(page, "start")).to_be_visible()
    quick_add(page, "fork")
    set_field(page, "Id", "split")
    set_field(page, "Branches 1", "finance")
    set_field(page, "Branches 2", "legal")
    for approval, group, title in (("fin", "finance", "Finance"), ("leg", "legal", "Legal")):
        pick(page, "split")
        quick_add(page, "approval")
        set_field(page, "Id", approval)
        set_field(page, "Add a group (e.g. finance)", group)
        set_field(page, "Title (${CEL} is interpolated)", f"{title} sign-off")
    pick(page, "fin")
    quick_add(page, "gather")
    set_field(page, "Id", "both")
    set_field(page, "Slots 1", "finance")
    set_field(page, "Slots 2", "legal")
    pick(page, "both")
    quick_add(page, "end")
    set_field(page, "Id", "done")


def test_an_analyst_draws_the_invoice_flow_validates_publishes_and_reopens_it(
    analyst_page: Page, live_server: LiveServer
) -> None:
    page = analyst_page
    page.set_viewport_size({"width": 1440, "height": 1000})
    services.create_flow(User.objects.get(username="analyst"), "invoice-drawn", EMPTY)
    page.goto(f"{live_server.url}/flows/invoice-drawn/")
    expect(page.locator(".braid-problems__counts")).to_contain_text("error(s)")
    build_invoice_flow(page, live_server)

    # The legal slot has no edge yet: the gather is red, with a badge, and Problems says why.
    problem = page.locator(
        ".braid-problem", has_text="Slot `legal` of gather `both` has no incoming edge"
    )
    expect(problem).to_be_visible(timeout=8000)
    expect(node(page, "both").locator(".braid-node__problem--error")).to_have_text("✖ error")
    expect(handle(page, "both", "slot:legal")).to_have_class(re.compile("braid-port--empty"))
    shoot(page, "invoice-unfed-slot")

    # A connection that cannot be: fin's approved outcome is taken. The tooltip says why.
    drag_between(
        page, handle(page, "fin", "outcome:approved"), handle(page, "leg", "in"), release=False
    )
    expect(page.locator(".braid-connection-tip")).to_have_text(
        "✖ Outcome “approved” of fin already leads to both; delete that edge first."
    )
    shoot(page, "refused-connection")
    page.mouse.up()
    expect(page.locator(".braid-editor__status")).to_contain_text(
        "Not connected: Outcome “approved” of fin"
    )

    # The fix, by mouse: leg's approved onto the gather's legal slot.
    drag_between(page, handle(page, "leg", "outcome:approved"), handle(page, "both", "slot:legal"))
    expect(problem).to_have_count(0, timeout=8000)
    expect(page.locator(".braid-problems__counts")).to_have_text(
        "none: the flow is valid", timeout=8000
    )
    wait_saved(page)
    assert without_layout(stored("invoice-drawn")) == EXPECTED

    page.get_by_role("button", name="Publish", exact=True).click()
    expect(page.locator(".braid-editor__status")).to_have_text("Published version 1.")
    page.reload()
    expect(page.locator(".react-flow__node")).to_have_count(6)
    expect(page.locator(".braid-editor__version")).to_have_text("Latest: v1")
    flow = Flow.objects.get(slug="invoice-drawn")
    assert without_layout(flow.draft) == EXPECTED
    assert without_layout(flow.versions.get(number=1).graph) == EXPECTED
    assert set(flow.draft["layout"]) == {n["id"] for n in EXPECTED["nodes"]}
    page.locator(".braid-problems__counts").click()  # not an input: shortcuts go to the canvas
    shoot(page, "invoice-published")
    assert smallest_label_px(page) >= 12
    assert errors_of(page) == []


def test_undo_and_redo_restore_the_exact_graph(analyst_page: Page, live_server: LiveServer) -> None:
    page = analyst_page
    page.goto(f"{live_server.url}/flows/invoice-sign-off/")
    wait_saved(page)
    before = stored("invoice-sign-off")
    pick(page, "leg")
    page.keyboard.press("Delete")
    expect(node(page, "leg")).to_have_count(0)
    pick(page, "fin")
    page.keyboard.press("Control+d")
    expect(node(page, "fin2")).to_be_visible()
    wait_saved(page)
    edited = stored("invoice-sign-off")
    assert "leg" not in {n["id"] for n in edited["nodes"]}
    page.keyboard.press("Control+z")
    page.keyboard.press("Control+z")
    expect(node(page, "leg")).to_be_visible()
    wait_saved(page)
    # The demo draft had no layout; the editor stores the positions it drew, nothing else.
    undone = stored("invoice-sign-off")
    assert without_layout(undone) == before
    assert json.dumps(without_layout(undone)) == json.dumps(before)  # member order too
    page.keyboard.press("Control+Shift+z")
    page.keyboard.press("Control+Shift+z")
    expect(node(page, "fin2")).to_be_visible()
    wait_saved(page)
    assert stored("invoice-sign-off") == edited
    page.keyboard.press("Control+z")
    page.keyboard.press("Control+z")
    wait_saved(page)
    assert stored("invoice-sign-off") == undone
    assert errors_of(page) == []


def test_a_label_with_markup_shows_as_text_and_runs_nothing(
    analyst_page: Page, live_server: LiveServer
) -> None:
    page = analyst_page
    page.goto(f"{live_server.url}/flows/invoice-sign-off/")
    hostile = '<img src=x onerror="window.__xss=1">'
    pick(page, "fin")
    set_field(page, "Title (${CEL} is interpolated)", hostile)
    expect(node(page, "fin").locator(".braid-node__title")).to_have_text(hostile)
    set_field(page, "Id", "fin")  # no change: stays
    page.locator(".braid-problems__counts").click()
    page.keyboard.press("Escape")
    set_field(page, "Name", hostile)
    expect(page.locator(".braid-editor__title")).to_contain_text(hostile)
    wait_saved(page)
    page.reload()
    expect(node(page, "fin").locator(".braid-node__title")).to_have_text(hostile)
    assert page.locator(".react-flow img, .braid-editor img").count() == 0
    assert page.evaluate("window.__xss") is None
    shoot(page, "markup-label")
    assert errors_of(page) == []


def test_the_flows_list_searches_creates_duplicates_imports_and_refuses_deleting_a_used_flow(
    analyst_page: Page, live_server: LiveServer
) -> None:
    page = analyst_page
    client = Client()
    client.force_login(User.objects.get(username="analyst"))
    started = client.post(
        "/api/runs/",
        json.dumps({"flow": "staged-gathers", "input": {}}),
        content_type="application/json",
    )
    assert started.status_code == 201
    page.on("dialog", lambda dialog: dialog.accept())
    page.goto(f"{live_server.url}/flows/")
    rows = page.locator(".braid-flows__table tbody tr")
    expect(rows).to_have_count(len(DEMO_SLUGS))
    expect(rows.first).to_contain_text("v1 by analyst")
    shoot(page, "flows-list")

    page.get_by_placeholder("Search by name, slug or owner").fill("gather")
    expect(rows).to_have_count(1)
    page.get_by_role("button", name="Delete staged-gathers").click()
    expect(page.get_by_role("alert")).to_have_text(
        "Not deleted: runs reference staged-gathers; it cannot be deleted."
    )
    page.get_by_role("button", name="Duplicate staged-gathers").click()
    expect(page.get_by_role("status")).to_contain_text(
        "Duplicated staged-gathers as staged-gathers-copy"
    )
    copy = Flow.objects.get(slug="staged-gathers-copy")
    original = Flow.objects.get(slug="staged-gathers").draft
    assert copy.draft == {**original, "name": "Staged gathers: a+b, then d+c (copy)"}
    page.get_by_role("button", name="Delete staged-gathers-copy").click()
    expect(rows).to_have_count(1)
    assert not Flow.objects.filter(slug="staged-gathers-copy").exists()

    # Import: a broken document is refused with the validator's reasons; a good one opens.
    page.get_by_role("button", name="Import JSON").click()
    broken = {**EXPECTED, "name": "Broken import", "edges": EXPECTED["edges"][:-1]}
    page.get_by_label("or paste the JSON").fill(json.dumps(broken))
    page.get_by_role("button", name="Validate and import").click()
    expect(page.get_by_role("alert")).to_contain_text("Not imported: the document has 1 error(s)")
    expect(page.locator(".braid-flows__problems")).to_contain_text("Slot `legal` of gather `both`")
    assert not Flow.objects.filter(slug="broken-import").exists()
    page.get_by_label("or paste the JSON").fill(json.dumps({**EXPECTED, "name": "Pasted flow"}))
    page.get_by_role("button", name="Validate and import").click()
    expect(page).to_have_url(f"{live_server.url}/flows/pasted-flow/")
    assert Flow.objects.get(slug="pasted-flow").draft == {**EXPECTED, "name": "Pasted flow"}

    # Create opens an empty canvas.
    page.goto(f"{live_server.url}/flows/")
    page.get_by_role("button", name="New flow").click()
    page.get_by_label("Name").fill("Fresh one")
    expect(page.get_by_label("Slug (its address)")).to_have_value("fresh-one")
    page.get_by_role("button", name="Create and open").click()
    expect(page).to_have_url(f"{live_server.url}/flows/fresh-one/")
    expect(page.locator(".react-flow__node")).to_have_count(0)
    assert errors_of(page) == []


@pytest.mark.parametrize("path", ["/flows/", "/flows/batch-line-approval/"])
def test_at_390_px_wide_the_designer_pages_content_does_not_scroll_sideways(
    analyst_page: Page, live_server: LiveServer, path: str
) -> None:
    page = analyst_page
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(f"{live_server.url}{path}")
    page.wait_for_load_state("networkidle")
    shoot(page, f"narrow-{path.strip('/').replace('/', '-')}")
    wide = page.evaluate(
        """() => [...document.querySelectorAll('body *')]
            .filter(e => e.closest('main') && !e.closest('.react-flow'))
            .filter(e => e.getBoundingClientRect().right > 391)
            .map(e => e.tagName + '.' + e.className).slice(0, 8)"""
    )
    # Only <main>: the shared top bar (base.html) is the lead's and is measured elsewhere.
    assert wide == []


def test_two_tabs_never_silently_overwrite_each_other(
    analyst_page: Page, browser: Browser, live_server: LiveServer
) -> None:
    first = analyst_page
    context = browser.new_context(viewport={"width": 1280, "height": 860})
    second = context.new_page()
    log_in(second, live_server.url, "analyst", "braid-analyst")
    for page in (first, second):
        page.goto(f"{live_server.url}/flows/invoice-sign-off/")
        wait_saved(page)
    title = "Title (${CEL} is interpolated)"
    pick(first, "fin")
    set_field(first, title, "Edited in the first tab")
    wait_saved(first)
    pick(second, "leg")
    set_field(second, title, "Edited in the second tab")
    banner = second.get_by_role("alertdialog", name="Save conflict")
    expect(banner).to_contain_text("This draft was saved elsewhere")
    expect(second.locator(".braid-save")).to_have_text("Not saved: conflict")
    shoot(second, "conflict")
    titles = {n["id"]: n.get("title") for n in stored("invoice-sign-off")["nodes"]}
    assert titles["fin"] == "Edited in the first tab"
    assert titles["leg"] != "Edited in the second tab"

    # The second tab keeps its version; the first tab's is kept in the draft history.
    banner.get_by_role("button", name="Keep mine").click()
    wait_saved(second)
    titles = {n["id"]: n.get("title") for n in stored("invoice-sign-off")["nodes"]}
    assert titles["leg"] == "Edited in the second tab"
    assert titles["fin"] != "Edited in the first tab"
    kept = DraftRevision.objects.get(flow__slug="invoice-sign-off", reason="overwritten")
    assert {n["id"]: n.get("title") for n in kept.draft["nodes"]}[
        "fin"
    ] == "Edited in the first tab"

    # The first tab, editing again, is told too; it takes the saved draft and can undo back.
    pick(first, "done")
    set_field(first, "Id", "finished")
    expect(first.get_by_role("alertdialog", name="Save conflict")).to_be_visible()
    first.get_by_role("button", name="Load the saved draft").click()
    expect(node(first, "done")).to_be_visible()
    expect(node(first, "leg").locator(".braid-node__title")).to_have_text(
        "Edited in the second tab"
    )
    wait_saved(first)
    assert stored("invoice-sign-off")["nodes"][-1]["id"] == "done"
    context.close()
    assert errors_of(first) == []


def test_a_version_opens_read_only_with_its_differences_and_restores(
    analyst_page: Page, live_server: LiveServer
) -> None:
    page = analyst_page
    page.goto(f"{live_server.url}/flows/invoice-sign-off/")
    pick(page, "leg")
    page.keyboard.press("Delete")
    wait_saved(page)
    page.get_by_role("button", name="History").click()
    history = page.get_by_role("complementary", name="Version history")
    expect(history).to_contain_text("v1 by analyst")
    history.get_by_role("button", name="Open v1").click()
    banner = page.get_by_role("region", name="Viewing a version")
    expect(banner).to_contain_text("Viewing version 1 (read-only)")
    expect(banner).to_contain_text("Against the draft: adds leg; 3 edge(s) more")
    expect(node(page, "leg").locator(".braid-node__change")).to_have_text("added")
    expect(page.locator(".braid-palette")).to_have_count(0)
    shoot(page, "version-diff")
    banner.get_by_role("button", name="Restore into the draft").click()
    expect(banner).to_have_count(0)
    wait_saved(page)
    version = Flow.objects.get(slug="invoice-sign-off").versions.get(number=1).graph
    assert json.dumps(without_layout(stored("invoice-sign-off"))) == json.dumps(version)
    assert errors_of(page) == []


def test_a_cel_error_shows_beside_its_field_at_the_reported_position(
    analyst_page: Page, live_server: LiveServer
) -> None:
    page = analyst_page
    page.goto(f"{live_server.url}/flows/a-risk-score/")
    wait_saved(page)
    first_set = next(n["id"] for n in stored("a-risk-score")["nodes"] if n["type"] == "set")
    node(page, first_set).click()
    field = page.locator(".braid-inspector .braid-pair .braid-input--mono").first
    field.fill("1 +")
    field.press("Enter")
    inline = page.locator(".braid-inspector .braid-field__problem--error").first
    expect(inline).to_contain_text("line 1, column 4:")
    expect(inline).to_contain_text("fix the CEL expression")
    expect(page.locator(".braid-inspector .braid-field__caret")).to_have_text("1 +\n   ^")
    expect(node(page, first_set).locator(".braid-node__problem--error")).to_be_visible()
    expect(page.locator(".braid-problem--error").first).to_contain_text(first_set)
    page.locator(".braid-problem--error").first.click()
    expect(node(page, first_set)).to_have_class(re.compile("selected"))
    shoot(page, "cel-error")
    page.keyboard.press("Escape")
    node(page, first_set).focus()
    page.keyboard.press("Control+z")
    expect(page.locator(".braid-problem--error")).to_have_count(0, timeout=8000)
    assert errors_of(page) == []


def test_an_analyst_draws_a_foreach_with_a_return_and_an_or_slot_gather(
    analyst_page: Page, live_server: LiveServer
) -> None:
    page = analyst_page
    page.set_viewport_size({"width": 1440, "height": 1000})
    document = {**EMPTY, "name": "Loops and alternatives", "state": {"seen": {"reducer": "append"}}}
    services.create_flow(User.objects.get(username="analyst"), "loops", document)
    page.goto(f"{live_server.url}/flows/loops/")
    canvas = page.locator(".braid-editor__canvas")
    page.locator('.braid-palette__item[data-node-type="start"]').drag_to(
        canvas, target_position={"x": 300, "y": 80}
    )
    quick_add(page, "fork")
    quick_add(page, "if")  # after the fork's first branch, a
    set_field(page, "Condition (CEL)", "size(state.seen) > 0")
    pick(page, "if")
    quick_add(page, "gather")  # the if's true outcome into slot a
    pick(page, "if")
    # The if's false outcome into the same slot: an alternative (OR), by mouse.
    drag_between(page, handle(page, "if", "outcome:false"), handle(page, "gather", "slot:a"))
    two_alternatives = " OR\N{MULTIPLICATION SIGN}2"
    expect(node(page, "gather").locator(".braid-port__or")).to_have_text(two_alternatives)
    pick(page, "fork")
    quick_add(page, "foreach")  # the fork's branch b
    set_field(page, "Items (CEL list)", "[1, 2, 3]")
    pick(page, "foreach")
    quick_add(page, "set")  # the foreach's item outcome: the body
    page.locator(".braid-inspector").get_by_label("New field").fill("seen")
    page.locator(".braid-inspector").get_by_label("New field").press("Enter")
    set_field(page, "CEL (seen)", "[item]")
    # The body returns to its foreach, by mouse, onto the return handle.
    drag_between(page, handle(page, "set", "outcome:next"), handle(page, "foreach", "return"))
    expect(page.locator(".react-flow__edge.braid-edge--back")).to_have_count(1)
    # The foreach's done outcome into the gather's slot b, picked from the side panel.
    pick(page, "foreach")
    page.locator(".braid-inspector").get_by_label("Outcome done leads to").select_option(
        label="gather · slot b"
    )
    pick(page, "gather")
    quick_add(page, "end")
    expect(page.locator(".braid-problems__counts")).to_have_text(
        re.compile(r"none: the flow is valid|0 error\(s\)"), timeout=8000
    )
    wait_saved(page)
    page.get_by_role("button", name="Publish", exact=True).click()
    expect(page.locator(".braid-editor__status")).to_have_text("Published version 1.")
    page.reload()
    expect(page.locator(".react-flow__node")).to_have_count(7)
    shoot(page, "loops-and-alternatives")
    flow = Flow.objects.get(slug="loops")
    assert without_layout(flow.versions.get(number=1).graph) == without_layout(flow.draft)
    assert without_layout(flow.draft) == {
        "format": "braid.graph/1",
        "name": "Loops and alternatives",
        "nodes": [
            {"id": "start", "type": "start"},
            {"id": "fork", "type": "fork", "branches": ["a", "b"]},
            {"id": "if", "type": "if", "condition": "size(state.seen) > 0"},
            {"id": "gather", "type": "gather", "slots": ["a", "b"], "conflicts": "error"},
            {"id": "foreach", "type": "foreach", "items": "[1, 2, 3]", "as": "item",
             "concurrency": 1, "on_item_failure": "fail"},
            {"id": "set", "type": "set", "values": {"seen": "[item]"}},
            {"id": "end", "type": "end"},
        ],
        "edges": [
            {"source": "start", "target": "fork"},
            {"source": "fork", "target": "if", "branch": "a"},
            {"source": "if", "target": "gather", "outcome": "true", "slot": "a"},
            {"source": "if", "target": "gather", "outcome": "false", "slot": "a"},
            {"source": "fork", "target": "foreach", "branch": "b"},
            {"source": "foreach", "target": "set", "outcome": "item"},
            {"source": "set", "target": "foreach"},
            {"source": "foreach", "target": "gather", "outcome": "done", "slot": "b"},
            {"source": "gather", "target": "end"},
        ],
        "state": {"seen": {"reducer": "append"}},
    }  # fmt: skip
    assert errors_of(page) == []


def test_an_approver_sees_the_editor_read_only(page: Page, live_server: LiveServer) -> None:
    call_command("braid", "demo")
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    log_in(page, live_server.url, "finance", "braid-finance")
    page.goto(f"{live_server.url}/flows/invoice-sign-off/")
    expect(page.locator(".react-flow__node")).to_have_count(11)
    expect(page.locator(".braid-save")).to_have_text("Read-only")
    expect(page.locator(".braid-palette")).to_have_count(0)
    expect(page.get_by_role("button", name="Publish", exact=True)).to_have_count(0)
    pick(page, "fin")
    expect(page.locator(".braid-inspector").get_by_label("Id", exact=True)).to_be_disabled()
    page.keyboard.press("Delete")
    expect(node(page, "fin")).to_be_visible()
    shoot(page, "read-only")
    page.goto("about:blank")
    assert errors == []


def test_the_keyboard_reaches_nodes_and_the_shortcuts_list(
    analyst_page: Page, live_server: LiveServer
) -> None:
    page = analyst_page
    page.goto(f"{live_server.url}/flows/a-risk-score/")
    wait_saved(page)
    node(page, "start").focus()
    page.keyboard.press("Tab")
    page.keyboard.press("Enter")
    expect(page.locator(".braid-inspector h2")).to_contain_text("set score")
    page.keyboard.press("Escape")
    expect(page.locator(".braid-inspector h2")).to_have_text("Flow")
    page.keyboard.press("?")
    dialog = page.get_by_role("dialog", name="Keyboard shortcuts")
    expect(dialog).to_contain_text("Quick-add a node")
    page.keyboard.press("Escape")
    expect(dialog).to_have_count(0)
    assert errors_of(page) == []


def test_nodes_copied_in_one_flow_paste_into_another(
    analyst_page: Page, live_server: LiveServer
) -> None:
    page = analyst_page
    page.goto(f"{live_server.url}/flows/invoice-sign-off/")
    pick(page, "fin")
    pick(page, "fin_no", modifiers=["Control"])
    page.keyboard.press("Control+c")
    expect(page.locator(".braid-editor__status")).to_have_text("Copied 2 node(s).")
    page.goto(f"{live_server.url}/flows/staged-gathers/")
    wait_saved(page)
    page.locator(".braid-problems__counts").click()
    page.keyboard.press("Control+v")
    expect(node(page, "fin")).to_be_visible()
    expect(node(page, "fin_no")).to_be_visible()
    wait_saved(page)
    draft = stored("staged-gathers")
    source = stored("invoice-sign-off")
    copied = [n for n in source["nodes"] if n["id"] in {"fin", "fin_no"}]
    assert [n for n in draft["nodes"] if n["id"] in {"fin", "fin_no"}] == copied
    assert {"source": "fin", "outcome": "rejected", "target": "fin_no"} in draft["edges"]
    # The approval's group picker offers the approval groups that exist.
    page.keyboard.press("Escape")  # the pasted pair is selected; start afresh
    pick(page, "fin")
    expect(page.locator(".braid-inspector")).to_contain_text("Groups: legal")
    assert errors_of(page) == []
