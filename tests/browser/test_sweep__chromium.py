"""Every page, as every role, at 1440 and 390 px (issue 31): the canvas's text is never under
12 px on screen, its zoom controls and the palette draw real icons, a test run's badge
leaves a gather's slots in view, and axe-core finds no serious or critical violation.

Runs against `braid_server` (`make run`'s Daphne on a fresh database with the demo). Each
page is saved to var/screenshots/sweep-<role>-<page>-<width>.png for a person to look at.

axe-core (frontend/node_modules/axe-core, a devDependency) goes in through
`page.evaluate`: the pages' CSP (`script-src 'self'`) refuses `add_script_tag`'s inline
script, and evaluating the source keeps that CSP enforced, so axe scans the page users get.
"""

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, expect

from tests.browser.page_errors import errors_of, watch_errors
from tests.processes import Browserless

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
SCREENSHOTS = ROOT / "var" / "screenshots"
AXE = ROOT / "frontend" / "node_modules" / "axe-core" / "axe.min.js"
WIDTHS = {1440: 900, 390: 844}
READABLE_PX = 12
ROLES = ("analyst", "finance", "legal", "admin")
# Swagger UI's markup (not Braid's): low-contrast labels, no <html lang>, and a button
# inside each operation's summary button.
SWAGGER_UI_FAULTS = ["color-contrast", "html-has-lang", "nested-interactive"]
INVOICE = {"invoice": {"id": "I-31", "amount": 120, "vendor": "ACME"}}

# Every rendered text on the canvas: its font size times the zoom of the React Flow
# viewport that holds it (1 for the panels and controls outside it).
TEXT_SIZES = """(root) => {
  const zoomOf = (element) => {
    const viewport = element.closest('.react-flow__viewport');
    return viewport === null ? 1 : new DOMMatrixReadOnly(getComputedStyle(viewport).transform).a;
  };
  const sizes = [];
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  while (walker.nextNode()) {
    const text = walker.currentNode;
    const element = text.parentElement;
    if (text.textContent.trim() === '' || element.getClientRects().length === 0) continue;
    const range = document.createRange();
    range.selectNodeContents(text);
    const box = range.getBoundingClientRect();
    if (box.width === 0 || box.height === 0) continue;
    const px = parseFloat(getComputedStyle(element).fontSize) * zoomOf(element);
    sizes.push({text: text.textContent.trim().slice(0, 40),
                where: element.getAttribute('class') || element.tagName.toLowerCase(),
                px: Math.round(px * 100) / 100});
  }
  return sizes;
}"""

# The serious and critical violations axe-core finds on the whole page.
AXE_SCAN = """async () => {
  const result = await window.axe.run(document, {resultTypes: ['violations']});
  return result.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => ({rule: v.id, impact: v.impact, help: v.help,
                  targets: v.nodes.slice(0, 6).map((n) => n.target.join(' '))}));
}"""

# Whether the viewport's transform has stopped changing (a fit or a pan may be animating).
VIEWPORT = "() => getComputedStyle(document.querySelector('.react-flow__viewport')).transform"
ZOOM = f"() => new DOMMatrixReadOnly(({VIEWPORT})()).a"


@dataclass(frozen=True)
class Sweep:
    """The runs the sweep's pages show: a waiting invoice run and a completed gathers run."""

    waiting_run: str
    gathers_run: str


@pytest.fixture(scope="module")
def sweep(braid_server: str) -> Sweep:
    """Start the runs whose views (and inbox requests) the pages show."""
    analyst = Browserless(braid_server)
    analyst.login("analyst", "braid-analyst")
    status, waiting = analyst.post_json(
        "/api/runs/", {"flow": "invoice-sign-off", "input": INVOICE}
    )
    assert status == 201, waiting
    status, gathers = analyst.post_json("/api/runs/", {"flow": "staged-gathers", "input": {}})
    assert status == 201, gathers
    return Sweep(waiting["id"], gathers["id"])


APPROVERS = ("finance", "legal")


def pages_of(sweep: Sweep, role: str = "admin") -> dict[str, str]:
    """Return each signed-in page the role may open, by its short name: its path. An
    approver sees only the runs that ask them (the gathers run asks nobody: a 404)."""
    pages = {
        "flows": "/flows/",
        "editor": "/flows/invoice-sign-off/",
        "editor-gathers": "/flows/staged-gathers/",
        "runs": "/runs/",
        "run": f"/runs/{sweep.waiting_run}/",
        "run-gathers": f"/runs/{sweep.gathers_run}/",
        "inbox": "/inbox/",
        "tokens": "/tokens/",
        "not-found": "/flows/no-such-flow/",
        "admin-site": "/admin/",
    }
    if role in APPROVERS:
        del pages["run-gathers"]
    return pages


@pytest.fixture
def new_page(browser: Browser) -> Iterator[Callable[[int], Page]]:
    """Return a function opening a fresh page (own cookies) at a width, its script errors
    watched; close them after."""
    contexts: list[BrowserContext] = []

    def open_page(width: int) -> Page:
        context = browser.new_context(viewport={"width": width, "height": WIDTHS[width]})
        contexts.append(context)
        page = context.new_page()
        watch_errors(page)
        return page

    yield open_page
    for context in contexts:
        context.close()


def log_in(page: Page, base_url: str, role: str) -> None:
    """Log in as the demo user of that role through the form."""
    page.goto(f"{base_url}/login/")
    page.get_by_label("User name").fill(role)
    page.get_by_label("Password").fill(f"braid-{role}")
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(lambda url: "/login/" not in url)


def settle(page: Page) -> None:
    """Wait until the page's canvas (if any) has drawn its nodes and stopped moving."""
    page.wait_for_load_state("networkidle")
    if page.locator(".react-flow__viewport").count() == 0:
        return
    expect(page.locator(".react-flow__node").first).to_be_visible()
    before = page.evaluate(VIEWPORT)
    for _ in range(20):
        page.wait_for_timeout(150)
        now = page.evaluate(VIEWPORT)
        if now == before:
            return
        before = now
    raise AssertionError(f"the canvas kept moving: {before}")


def shoot(page: Page, name: str) -> None:
    """Save a full-page screenshot under var/screenshots/."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"sweep-{name}.png"), full_page=True)


@cache
def axe_source() -> str:
    """Return axe-core's script (frontend's devDependency)."""
    return AXE.read_text()


def axe_violations(page: Page) -> list[dict[str, object]]:
    """Scan the page with axe-core; return its serious and critical violations."""
    if page.evaluate("typeof window.axe") == "undefined":
        page.evaluate(axe_source())
    violations: list[dict[str, object]] = page.evaluate(AXE_SCAN)
    return violations


def small_texts(page: Page) -> list[dict[str, object]]:
    """Return every text on the page's canvas drawn under 12 px on screen."""
    canvas = page.locator(".react-flow").first.element_handle()
    sizes = page.evaluate(TEXT_SIZES, canvas)
    assert len(sizes) > 5, sizes  # the canvas's nodes were measured, not an empty root
    return [size for size in sizes if size["px"] < READABLE_PX]


def boxes(page: Page, selector: str) -> list[dict[str, float]]:
    """Return the on-screen boxes of the elements that match."""
    found: list[dict[str, float]] = page.evaluate(
        "(s) => [...document.querySelectorAll(s)].map((e) => e.getBoundingClientRect().toJSON())",
        selector,
    )
    return found


def overlap(a: dict[str, float], b: dict[str, float]) -> bool:
    """Whether two boxes share any area."""
    return (
        a["left"] < b["right"]
        and b["left"] < a["right"]
        and a["top"] < b["bottom"]
        and b["top"] < a["bottom"]
    )


# ---- 1. Canvas text ------------------------------------------------------------------


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize(
    ("role", "name"),
    [
        ("analyst", "editor"),
        ("analyst", "editor-gathers"),
        ("admin", "run"),
        ("admin", "run-gathers"),
    ],
)
def test_no_text_on_the_canvas_is_under_12_px_at_the_fitted_zoom(
    new_page: Callable[[int], Page],
    braid_server: str,
    sweep: Sweep,
    role: str,
    name: str,
    width: int,
) -> None:
    page = new_page(width)
    log_in(page, braid_server, role)
    page.goto(braid_server + pages_of(sweep)[name])
    settle(page)
    assert small_texts(page) == []
    assert (
        page.evaluate(ZOOM) >= 1
    )  # the fit stopped at the floor (12 px text at 12 px) and pans instead
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    assert errors_of(page) == []


@pytest.mark.parametrize(("role", "name"), [("analyst", "editor-gathers"), ("admin", "run")])
def test_the_fit_button_zooms_a_zoomed_out_canvas_back_to_readable_text_and_no_further(
    new_page: Callable[[int], Page], braid_server: str, sweep: Sweep, role: str, name: str
) -> None:
    page = new_page(390)
    log_in(page, braid_server, role)
    page.goto(braid_server + pages_of(sweep)[name])
    settle(page)
    for _ in range(3):
        page.get_by_role("button", name="Zoom Out").click()
    settle(page)
    assert page.evaluate(ZOOM) < 1
    assert small_texts(page) != []  # zoomed out by hand, the text is small
    page.get_by_role("button", name="Fit View").click()
    # React Flow applies a fit once the canvas's nodes are measured, which a color update
    # arriving at the click can delay: wait for the fit itself, not for a still canvas.
    page.wait_for_function(f"() => ({ZOOM})() === 1", timeout=10_000)
    settle(page)
    assert page.evaluate(ZOOM) == 1  # the floor: these graphs are bigger than a phone
    assert small_texts(page) == []


# ---- 2. Small things -----------------------------------------------------------------


@pytest.mark.parametrize(("role", "name"), [("analyst", "editor"), ("admin", "run")])
def test_the_zoom_and_fit_controls_draw_16_px_icons_in_32_px_buttons(
    new_page: Callable[[int], Page], braid_server: str, sweep: Sweep, role: str, name: str
) -> None:
    page = new_page(1440)
    log_in(page, braid_server, role)
    page.goto(braid_server + pages_of(sweep)[name])
    settle(page)
    controls = page.locator(".react-flow__controls-button")
    expect(controls).to_have_count(3)
    sizes = page.evaluate(
        """() => [...document.querySelectorAll('.react-flow__controls-button')].map((b) => {
          const button = b.getBoundingClientRect();
          const icon = b.querySelector('svg').getBoundingClientRect();
          return [b.getAttribute('aria-label'), button.width, button.height,
                  icon.width, icon.height];
        })"""
    )
    assert [size[0] for size in sizes] == ["Zoom In", "Zoom Out", "Fit View"]
    assert [size[1:3] for size in sizes] == [[32, 32]] * 3
    # Each icon's box is 16 px square; the drawn paths fill it (the minus is a flat bar).
    assert (
        page.evaluate(
            """() => [...document.querySelectorAll('.react-flow__controls-button svg')].map((svg) =>
          [svg.clientWidth, svg.clientHeight])"""
        )
        == [[16, 16]] * 3
    )
    assert [round(size[3]) for size in sizes] == [16, 16, 16]


def test_a_test_runs_badges_leave_each_gathers_slots_and_and_marker_in_view(
    new_page: Callable[[int], Page], braid_server: str
) -> None:
    page = new_page(1440)
    log_in(page, braid_server, "analyst")
    page.goto(f"{braid_server}/flows/staged-gathers/")
    settle(page)
    page.get_by_role("button", name="Test run").click()
    page.get_by_label("input (JSON)", exact=False).fill("{}")
    page.get_by_role("button", name="Run", exact=True).click()
    run_status = page.get_by_role("status").filter(has_text="The run is")
    expect(run_status).to_contain_text("completed", timeout=30_000)
    gathers = page.locator(".react-flow__node:has(.braid-node--gather)")
    expect(gathers).to_have_count(2)
    for node_id in gathers.evaluate_all("(nodes) => nodes.map((n) => n.dataset.id)"):
        inside = f'.react-flow__node[data-id="{node_id}"]'
        [badge] = boxes(page, f"{inside} .braid-node__status")
        slots = boxes(page, f"{inside} .braid-port--slot, {inside} .braid-port__label--top")
        marks = boxes(page, f"{inside} .braid-port__and, {inside} .braid-port--out")
        assert len(slots) == 4 and len(marks) == 2, (node_id, slots, marks)
        assert [box for box in slots + marks if overlap(badge, box)] == [], node_id
    assert small_texts(page) == []
    # Drag the empty pane left of `a` to pan the gathers clear of the mini map, for the
    # screenshot (the fit shows the top of this tall graph).
    pane = page.locator(".braid-editor__canvas").bounding_box()
    assert pane is not None
    x, y = pane["x"] + 100, pane["y"] + 300  # inside the window, whose height is 900
    page.mouse.move(x, y)
    page.mouse.down()
    page.mouse.move(x - 250, y - 300, steps=10)
    page.mouse.up()
    settle(page)
    [canvas] = boxes(page, ".braid-editor__canvas")
    [gather] = boxes(page, '.react-flow__node[data-id="ab"]')
    assert canvas["top"] < gather["top"] and gather["bottom"] < canvas["bottom"]
    shoot(page, "analyst-editor-test-run-1440")
    assert errors_of(page) == []


def test_the_palette_draws_each_node_kind_as_an_svg_icon_not_a_font_glyph(
    new_page: Callable[[int], Page], braid_server: str
) -> None:
    page = new_page(1440)
    log_in(page, braid_server, "analyst")
    page.goto(f"{braid_server}/flows/staged-gathers/")
    settle(page)
    icons = page.evaluate(
        """() => [...document.querySelectorAll('.braid-palette__item')].map((item) => {
          const icon = item.querySelector('.braid-palette__icon');
          const svg = icon.querySelector('svg').getBoundingClientRect();
          return [item.dataset.nodeType, icon.textContent, svg.width, svg.height,
                  icon.querySelectorAll('svg path, svg circle, svg rect').length > 0];
        })"""
    )
    kinds = ["start", "end", "task", "set", "if", "switch", "fork", "gather", "foreach", "loop"]
    kinds += ["race", "approval", "wait", "subflow", "fail"]
    assert icons == [[kind, "", 18, 18, True] for kind in kinds]


# ---- 3 and 4. Every page as every role: screenshots and axe-core -----------------------


def visit(page: Page, base_url: str, path: str, shot: str) -> list[dict[str, object]]:
    """Open a page, let it settle, save its screenshot; return axe's serious findings."""
    page.goto(base_url + path)
    settle(page)
    shoot(page, shot)
    return axe_violations(page)


@pytest.mark.parametrize("width", WIDTHS)
def test_the_login_page_has_no_serious_accessibility_violation(
    new_page: Callable[[int], Page], braid_server: str, width: int
) -> None:
    page = new_page(width)
    failed: list[str] = []
    page.on("response", lambda r: failed.append(f"{r.status} {r.url}") if r.status >= 400 else None)
    found = {"login": visit(page, braid_server, "/login/", f"anonymous-login-{width}")}
    page.get_by_label("User name").fill("nobody")
    page.get_by_label("Password").fill("wrong")
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("alert")).to_be_visible()
    shoot(page, f"anonymous-login-error-{width}")
    found["login-error"] = axe_violations(page)
    assert {name: found for name, found in found.items() if found} == {}
    assert [line for line in failed if "/login/" not in line] == []
    assert errors_of(page) == []


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("role", ROLES)
def test_every_page_as_each_role_has_no_serious_accessibility_violation(
    new_page: Callable[[int], Page], braid_server: str, sweep: Sweep, role: str, width: int
) -> None:
    page = new_page(width)
    failed: list[str] = []
    page.on("response", lambda r: failed.append(f"{r.status} {r.url}") if r.status >= 400 else None)
    log_in(page, braid_server, role)
    found = {
        name: visit(page, braid_server, path, f"{role}-{name}-{width}")
        for name, path in pages_of(sweep, role).items()
    }
    violations = {name: found for name, found in found.items() if found}
    assert violations == {}, json.dumps(violations, indent=1)
    # The API docs are Swagger UI's own page (drf-spectacular-sidecar): screenshot and scan
    # them too, and hold its known faults to exactly these, so a new one shows.
    docs = visit(page, braid_server, "/api/docs/", f"{role}-api-docs-{width}")
    assert sorted(str(violation["rule"]) for violation in docs) == SWAGGER_UI_FAULTS
    assert failed == [f"404 {braid_server}/flows/no-such-flow/"]
    assert errors_of(page) == []


def scan_after(page: Page, shot: str, act: Callable[[], None]) -> list[dict[str, object]]:
    """Do something that opens a panel or a dialog, then screenshot and scan the page."""
    act()
    page.wait_for_timeout(300)
    shoot(page, shot)
    return axe_violations(page)


def test_open_panels_and_dialogs_have_no_serious_accessibility_violation(
    new_page: Callable[[int], Page], braid_server: str, sweep: Sweep
) -> None:
    found: dict[str, list[dict[str, object]]] = {}
    analyst = new_page(1440)
    log_in(analyst, braid_server, "analyst")
    analyst.goto(f"{braid_server}/flows/invoice-sign-off/")
    settle(analyst)
    found["editor-node"] = scan_after(
        analyst, "analyst-editor-node-1440",
        lambda: analyst.locator('.react-flow__node[data-id="record"]').click(),
    )  # fmt: skip
    found["editor-test-run"] = scan_after(
        analyst, "analyst-editor-test-run-panel-1440",
        lambda: analyst.get_by_role("button", name="Test run").click(),
    )  # fmt: skip
    found["editor-history"] = scan_after(
        analyst, "analyst-editor-history-1440",
        lambda: analyst.get_by_role("button", name="History").click(),
    )  # fmt: skip
    found["editor-shortcuts"] = scan_after(
        analyst, "analyst-editor-shortcuts-1440",
        lambda: analyst.get_by_role("button", name="Keyboard shortcuts").click(),
    )  # fmt: skip
    admin = new_page(1440)
    log_in(admin, braid_server, "admin")
    admin.goto(f"{braid_server}/runs/")
    settle(admin)
    found["runs-start-form"] = scan_after(
        admin, "admin-runs-start-form-1440",
        lambda: admin.get_by_role("button", name="Start run").click(),
    )  # fmt: skip
    admin.goto(f"{braid_server}/runs/{sweep.waiting_run}/")
    settle(admin)
    found["run-inspector"] = scan_after(
        admin, "admin-run-inspector-1440",
        lambda: admin.locator('.react-flow__node[data-id="split"]').click(),
    )  # fmt: skip
    admin.goto(f"{braid_server}/tokens/")
    settle(admin)
    admin.get_by_label("Name").fill("swept")
    found["tokens-secret"] = scan_after(
        admin, "admin-tokens-secret-1440",
        lambda: admin.get_by_role("button", name="Make token").click(),
    )  # fmt: skip
    found["tokens-revoke"] = scan_after(
        admin, "admin-tokens-revoke-1440",
        lambda: admin.get_by_role("button", name="Revoke token swept").click(),
    )  # fmt: skip
    finance = new_page(390)
    log_in(finance, braid_server, "finance")
    finance.goto(f"{braid_server}/inbox/")
    settle(finance)
    found["inbox-delegate"] = scan_after(
        finance, "finance-inbox-delegate-390",
        lambda: finance.get_by_text("Delegate to another approver").click(),
    )  # fmt: skip
    violations = {name: found for name, found in found.items() if found}
    assert violations == {}, json.dumps(violations, indent=1)
    assert errors_of(analyst) == errors_of(admin) == errors_of(finance) == []
