"""The inbox page and the navigation bar's count, as the server renders them."""

import json
import re

import pytest

from tests.django.approval_helpers import INVOICE, start
from tests.django.fixture_types import ClientFor, DemoUsers

pytestmark = pytest.mark.django_db


def badge(html: str) -> str:
    """Return the navigation bar's count badge."""
    found = re.search(r'<span class="nav-count"[^>]*>(?:</span>|.*?</span></span>)', html)
    assert found, "no count badge"
    return found[0]


def test_every_page_shows_the_callers_open_count_in_the_navigation_bar(
    demo: DemoUsers, client_for: ClientFor
) -> None:
    start(client_for("analyst"), "invoice-sign-off", INVOICE)
    finance = client_for("finance")
    for page in ("/flows/", "/runs/", "/inbox/"):
        html = finance.get(page).content.decode()
        assert badge(html) == (
            '<span class="nav-count" data-inbox-count="1"><span aria-hidden="true">1</span>'
            '<span class="visually-hidden">, 1 open request</span></span>'
        )
        assert "src/nav-count" in html or "nav-count-" in html
    assert badge(client_for("analyst").get("/flows/").content.decode()) == (
        '<span class="nav-count" data-inbox-count="0" hidden></span>'
    )


def test_the_inbox_page_passes_its_settings_as_json_and_loads_its_entry(
    demo: DemoUsers, client_for: ClientFor
) -> None:
    response = client_for("finance").get("/inbox/")
    html = response.content.decode()
    config = re.search(r'<script id="inbox-config" type="application/json">(.*?)</script>', html)
    assert config is not None
    settings = json.loads(config[1])
    assert {k: settings[k] for k in ("user", "groups", "admin", "api", "runUrl")} == {
        "user": "finance",
        "groups": ["finance"],
        "admin": False,
        "api": "/api/approvals/",
        "runUrl": "/runs/{id}/",
    }
    assert settings["csrfToken"]
    assert re.search(r'<script type="module"[^>]*src="/static/dist/assets/inbox-[^"]+\.js"', html)
    assert "<script>" not in html  # no inline script (the CSP forbids it)
    assert "Not yet" not in html
