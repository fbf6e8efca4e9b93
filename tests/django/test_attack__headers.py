"""Security headers on every page, the API and its docs; cookie flags in production.

Every path the resolver serves is requested (test_permissions__sweep.py keeps that list
complete), logged in as an admin: each answer forbids framing twice (X-Frame-Options DENY
and CSP frame-ancestors 'none'), allows script only from the same origin, and carries no
inline script.
"""

import json
import re
from pathlib import Path

import pytest
from django.test import Client

from tests.django.fixture_types import ClientFor, DemoUsers
from tests.django.test_permissions__sweep import start_invoice_run
from tests.processes import base_env, manage

pytestmark = pytest.mark.django_db

PATHS = [
    "/", "/login/", "/flows/", "/flows/invoice-sign-off/", "/runs/", "/runs/{run}/", "/inbox/",
    "/admin/", "/admin/auth/user/", "/api/", "/api/schema/", "/api/docs/", "/api/flows/",
    "/api/runs/{run}/tree/", "/healthz", "/no-such-page/", "/api/no-such-thing/",
    "/static/dist/.vite/manifest.json",
]  # fmt: skip


def directives(policy: str) -> dict[str, list[str]]:
    """Return a CSP header as {directive: sources}."""
    parts = [part.split() for part in policy.split(";") if part.strip()]
    return {part[0]: part[1:] for part in parts}


def test_every_answer_denies_framing_and_inline_script(
    demo: DemoUsers, client_for: ClientFor
) -> None:
    admin = client_for("admin")
    run = start_invoice_run(client_for("analyst"))
    found = {}
    for template in PATHS:
        path = template.format(run=run.pk)
        response = admin.get(path)
        assert response.status_code in (200, 302, 404, 503), (path, response.status_code)
        policy = directives(response["Content-Security-Policy"])
        html = response.content.decode() if "html" in response.get("Content-Type", "") else ""
        inline = [t for t in re.findall(r"<script\b[^>]*>", html) if "src=" not in t]
        found[template] = (
            response["X-Frame-Options"],
            policy["frame-ancestors"],
            policy["script-src"],
            policy["object-src"],
            policy["base-uri"],
            [tag for tag in inline if 'type="application/json"' not in tag],
            response["X-Content-Type-Options"],
            response["Referrer-Policy"],
        )
    expected: tuple[object, ...] = ("DENY", ["'none'"], ["'self'"], ["'none'"], ["'self'"], [],
                                    "nosniff", "same-origin")  # fmt: skip
    assert {path: got for path, got in found.items() if got != expected} == {}


def test_the_apis_own_413_carries_the_headers_too(demo: DemoUsers, client_for: ClientFor) -> None:
    big = json.dumps({"slug": "x", "draft": {"pad": "x" * (9 * 1024 * 1024)}})
    response = client_for("analyst").post("/api/flows/", big, "application/json")
    assert response.status_code == 413
    assert response["X-Frame-Options"] == "DENY"
    assert directives(response["Content-Security-Policy"])["frame-ancestors"] == ["'none'"]


def test_a_json_island_cannot_end_its_script_element(
    demo: DemoUsers, client_for: ClientFor
) -> None:
    analyst = client_for("analyst")
    name = "</script><script>window.__xss=1</script>"
    graph = {"format": "braid.graph/1", "name": name,
             "nodes": [{"id": "start", "type": "start"}, {"id": "done", "type": "end"}],
             "edges": [{"source": "start", "target": "done"}]}  # fmt: skip
    made = analyst.post(
        "/api/flows/", json.dumps({"slug": "island", "name": name, "draft": graph}),
        "application/json",
    )  # fmt: skip
    assert made.status_code == 201, made.content
    for path in ("/flows/", "/flows/island/"):
        html = analyst.get(path).content.decode()
        assert "<script>window.__xss" not in html
        assert "\\u003C/script\\u003E\\u003Cscript\\u003Ewindow.__xss=1" in html
        assert "&lt;/script&gt;&lt;script&gt;window.__xss=1&lt;/script&gt;" in html


def test_production_cookies_are_secure_http_only_and_same_site(tmp_path: Path) -> None:
    env = base_env(
        DJANGO_DEBUG="0",
        DJANGO_HTTPS="",  # unset: follows DEBUG, as in a deployment
        DJANGO_SECRET_KEY="x7Qv!m2#Lp9@zR4$wK8^tN6&yB3*cF5(hJ1)dG0-sA_eU+iO=oP",
        DJANGO_ALLOWED_HOSTS="braid.example.com",
        BRAID_VAR_DIR=str(tmp_path),
    )
    manage(env, "migrate", "--noinput", "-v", "0")
    script = (
        "import json\n"
        "from django.contrib.auth.models import User\n"
        "from django.test import Client\n"
        "User.objects.create_user('u', password='a long password 1')\n"
        "c = Client(HTTP_HOST='braid.example.com')\n"
        "plain = c.get('/login/')\n"
        "page = c.get('/login/', secure=True)\n"
        "token = page.cookies['csrftoken'].value\n"
        "login = c.post('/login/', {'username': 'u', 'password': 'a long password 1',\n"
        "    'csrfmiddlewaretoken': token}, secure=True,\n"
        "    HTTP_REFERER='https://braid.example.com/login/')\n"
        "flags = lambda m: {k: m[k] for k in ('secure', 'httponly', 'samesite', 'path')}\n"
        "print(json.dumps({'redirect': [plain.status_code, plain['Location']],\n"
        "    'login': login.status_code, 'hsts': login['Strict-Transport-Security'],\n"
        "    'csrftoken': flags(page.cookies['csrftoken']),\n"
        "    'sessionid': flags(login.cookies['sessionid'])}))\n"
    )
    answer = json.loads(manage(env, "shell", "-v", "0", "-c", script).strip().splitlines()[-1])
    assert answer == {
        "redirect": [301, "https://braid.example.com/login/"],
        "login": 302,
        "hsts": "max-age=31536000; includeSubDomains; preload",
        "csrftoken": {"secure": True, "httponly": "", "samesite": "Lax", "path": "/"},
        "sessionid": {"secure": True, "httponly": True, "samesite": "Lax", "path": "/"},
    }


def test_the_session_cookie_is_http_only_even_on_plain_http(demo: DemoUsers) -> None:
    client = Client()
    token = client.get("/login/").cookies["csrftoken"].value
    form = {"username": "analyst", "password": "braid-analyst", "csrfmiddlewaretoken": token}
    login = client.post("/login/", form)
    cookie = login.cookies["sessionid"]
    assert (cookie["httponly"], cookie["samesite"]) == (True, "Lax")
