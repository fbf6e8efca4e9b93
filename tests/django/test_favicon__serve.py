"""/favicon.ico is served on every page (no 404 in the log), and pages link the SVG icon."""

import pytest
from django.http import StreamingHttpResponse
from django.test import Client

from braid.favicon import ICON
from tests.django.fixture_types import ClientFor

pytestmark = pytest.mark.django_db


def test_favicon_ico_is_the_svg_icon_with_an_image_type_and_needs_no_login() -> None:
    response = Client().get("/favicon.ico")
    assert response.status_code == 200
    assert response["Content-Type"] == "image/svg+xml"
    assert response["Cache-Control"] == "public, max-age=86400"
    assert response.content == ICON.read_bytes()
    assert response.content.startswith(b'<svg xmlns="http://www.w3.org/2000/svg"')


def test_favicon_ico_answers_head_and_refuses_a_post() -> None:
    client = Client()
    assert client.head("/favicon.ico").status_code == 200
    assert client.post("/favicon.ico").status_code == 405


def test_the_login_page_links_the_svg_icon_which_is_served() -> None:
    client = Client()
    page = client.get("/login/").content.decode()
    assert '<link rel="icon" href="/static/braid/favicon.svg" type="image/svg+xml">' in page
    icon = client.get("/static/braid/favicon.svg")
    assert icon.status_code == 200
    assert icon["Content-Type"] == "image/svg+xml"
    assert isinstance(icon, StreamingHttpResponse)
    assert icon.getvalue() == ICON.read_bytes()


def test_a_signed_in_page_links_the_svg_icon(client_for: ClientFor) -> None:
    page = client_for("analyst").get("/flows/").content.decode()
    assert '<link rel="icon" href="/static/braid/favicon.svg" type="image/svg+xml">' in page
