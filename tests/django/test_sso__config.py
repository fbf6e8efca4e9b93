"""Single sign-on's configuration (docs/sso.md): off unless set, every mistake named at
start-up, the group map's two forms, the ID token checks the library leaves out, and a
provider that is down at login."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.auth.models import Group
from django.core.exceptions import ImproperlyConfigured, SuspiciousOperation
from django.test import Client

from braid.sso import discovery
from braid.sso.backend import check_id_token
from braid.sso.config import BACKEND, Endpoints, SsoConfig, parse_group_map, read_sso_config
from tests.django.fixture_types import DemoUsers
from tests.django.sso_provider import sso_configured
from tests.processes import ROOT, base_env, free_port

REQUIRED = {
    "BRAID_OIDC_ISSUER": "https://idp.example",
    "BRAID_OIDC_CLIENT_ID": "braid",
    "BRAID_OIDC_CLIENT_SECRET": "s3cret",
}


def test_without_any_braid_oidc_variable_single_sign_on_is_off() -> None:
    assert read_sso_config({"PATH": "/usr/bin", "BRAID_OIDC_NAME": "  "}) is None


def test_the_defaults_of_a_minimal_configuration() -> None:
    assert read_sso_config(REQUIRED) == SsoConfig(
        issuer="https://idp.example",
        client_id="braid",
        client_secret="s3cret",
        name="single sign-on",
        scopes="openid email profile",
        username_claim="preferred_username",
        groups_claim="groups",
        group_map={},
        sign_algorithm="RS256",
        timeout_s=10.0,
        endpoints=Endpoints("", "", "", ""),
    )


@pytest.mark.parametrize(
    ("environ", "message"),
    [
        ({"BRAID_OIDC_ISSUER": "https://idp.example"},
         "single sign-on needs BRAID_OIDC_CLIENT_ID, BRAID_OIDC_CLIENT_SECRET as well"),
        ({**REQUIRED, "BRAID_OIDC_ISSUER": "idp.example"},
         "BRAID_OIDC_ISSUER must be an http(s) URL, not 'idp.example'"),
        ({**REQUIRED, "BRAID_OIDC_TOKEN_ENDPOINT": "ftp://idp.example/token"},
         "BRAID_OIDC_TOKEN_ENDPOINT must be an http(s) URL, not 'ftp://idp.example/token'"),
        ({**REQUIRED, "BRAID_OIDC_END_SESSION_ENDPOINT": "javascript:alert(1)"},
         "BRAID_OIDC_END_SESSION_ENDPOINT must be an http(s) URL, not 'javascript:alert(1)'"),
        ({**REQUIRED, "BRAID_OIDC_SCOPES": "email profile"},
         "BRAID_OIDC_SCOPES must include openid, not 'email profile'"),
        ({**REQUIRED, "BRAID_OIDC_TIMEOUT_S": "soon"},
         "BRAID_OIDC_TIMEOUT_S must be a positive number, not 'soon'"),
        ({**REQUIRED, "BRAID_OIDC_TIMEOUT_S": "0"},
         "BRAID_OIDC_TIMEOUT_S must be a positive number, not '0'"),
        ({**REQUIRED, "BRAID_OIDC_GROUP_MAP": "idp-finance=finance,legal"},
         "BRAID_OIDC_GROUP_MAP: 'legal' is not provider-group=braid-group"),
        ({**REQUIRED, "BRAID_OIDC_GROUP_MAP": "idp-finance="},
         "BRAID_OIDC_GROUP_MAP: 'idp-finance' -> '' needs a provider group and a Braid group"),
        ({**REQUIRED, "BRAID_OIDC_GROUP_MAP": '{"a": 1}'},
         "BRAID_OIDC_GROUP_MAP: the value of 'a' must be a group name or a list of them"),
        ({**REQUIRED, "BRAID_OIDC_GROUP_MAP": "{not json"},
         "BRAID_OIDC_GROUP_MAP is not valid JSON"),
    ],
)  # fmt: skip
def test_a_mistake_is_named_at_start_up(environ: dict[str, str], message: str) -> None:
    with pytest.raises(ImproperlyConfigured) as raised:
        read_sso_config(environ)
    assert str(raised.value).startswith(message)


def test_the_end_session_endpoint_is_read_and_needs_no_discovery_of_its_own() -> None:
    given = read_sso_config(
        {**REQUIRED, "BRAID_OIDC_END_SESSION_ENDPOINT": "https://idp.example/out"}
    )
    assert given is not None
    assert given.endpoints == Endpoints(end_session="https://idp.example/out")
    assert not given.endpoints.complete()  # the login's own endpoints still come from discovery


@pytest.mark.parametrize(
    ("advertised", "kept"),
    [("https://idp.example/session/end", "https://idp.example/session/end"),
     ("javascript:alert(1)", ""), ("/session/end", ""), ("", "")],
)  # fmt: skip
def test_a_discovered_end_session_endpoint_is_kept_only_as_an_absolute_web_url(
    advertised: str, kept: str
) -> None:
    assert discovery.web_url(advertised) == kept


def test_the_group_map_reads_pairs_and_json_for_names_with_commas() -> None:
    assert parse_group_map(" a = finance , a=legal, b=admins,a=finance ") == {
        "a": ("finance", "legal"),
        "b": ("admins",),
    }
    dn = "cn=finance,ou=groups,dc=example"
    assert parse_group_map(json.dumps({dn: "finance", "/braid/all": ["analysts", "legal"]})) == {
        dn: ("finance",),
        "/braid/all": ("analysts", "legal"),
    }


def test_a_claim_maps_to_braid_groups_ignoring_what_the_map_does_not_name() -> None:
    config = SsoConfig("https://idp", "c", "s", group_map=parse_group_map("a=finance,b=legal"))
    assert config.braid_groups(["a", "zzz", 7, None]) == {"finance"}
    assert config.braid_groups("b") == {"legal"}
    assert config.braid_groups({"a": 1}) == frozenset()
    assert config.braid_groups(None) == frozenset()
    assert config.managed_groups() == {"finance", "legal"}


def test_an_id_token_of_another_issuer_or_client_is_refused() -> None:
    good: dict[str, object] = {"iss": "https://idp", "aud": "braid", "sub": "s"}
    check_id_token(good, "https://idp", "braid")
    check_id_token({**good, "aud": ["braid", "other"], "azp": "braid"}, "https://idp", "braid")
    refused: list[tuple[dict[str, object], str]] = [
        ({**good, "iss": "https://evil"}, "ID token issuer 'https://evil' is not 'https://idp'"),
        ({**good, "aud": "other"}, "ID token audience 'other' does not name 'braid'"),
        ({**good, "aud": ["other"]}, "ID token audience ['other'] does not name 'braid'"),
        ({**good, "aud": ["braid", "other"]}, "ID token for several audiences has azp None"),
    ]
    for payload, message in refused:
        with pytest.raises(SuspiciousOperation) as raised:
            check_id_token(payload, "https://idp", "braid")
        assert str(raised.value) == message


def test_when_off_there_are_no_routes_no_button_and_no_backend(db: None) -> None:
    assert settings.BRAID_SSO is None
    assert BACKEND not in settings.AUTHENTICATION_BACKENDS
    client = Client()
    assert client.get("/oidc/authenticate/").status_code == 404
    assert client.get("/oidc/callback/?code=x&state=y").status_code == 404
    page = client.get("/login/").content.decode()
    assert "Log in with" not in page
    assert "/oidc/" not in page


def test_when_on_the_login_page_offers_the_provider_by_its_name(db: None) -> None:
    with sso_configured({**REQUIRED, "BRAID_OIDC_NAME": "Acme ID"}):
        page = Client().get("/login/?next=/runs/").content.decode()
    assert (
        '<a class="button sso" href="/oidc/authenticate/?next=/runs/">Log in with Acme ID</a>'
        in page
    )
    assert 'name="password"' in page  # passwords still work beside it


def test_a_provider_that_is_down_gets_a_page_saying_so_and_passwords_still_work(
    demo_users: DemoUsers,
) -> None:
    down = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    with sso_configured({**REQUIRED, "BRAID_OIDC_ISSUER": down, "BRAID_OIDC_TIMEOUT_S": "2"}):
        client = Client()
        response = client.get("/oidc/authenticate/")
        assert response.status_code == 502
        assert "The identity provider could not be reached" in response.content.decode()
        login = client.post("/login/", {"username": "finance", "password": "braid-finance"})
        assert (login.status_code, login["Location"]) == (302, "/inbox/")
    assert Group.objects.filter(name="finance").count() == 1


def test_the_environment_turns_it_on_in_a_real_process(tmp_path: Path) -> None:
    """braid/settings.py and braid/urls.py, as a deployment starts them: the backend and the
    routes exist, and start-up contacted no provider (the issuer's port is closed)."""
    env = base_env(
        BRAID_VAR_DIR=str(tmp_path),
        BRAID_OIDC_ISSUER=f"http://127.0.0.1:{free_port()}",
        BRAID_OIDC_CLIENT_ID="braid",
        BRAID_OIDC_CLIENT_SECRET="s3cret",
        BRAID_OIDC_GROUP_MAP="idp-finance=finance",
    )
    code = (
        "from django.conf import settings; from django.urls import reverse; "
        "print(settings.AUTHENTICATION_BACKENDS[-1], settings.BRAID_SSO.group_map, "
        "reverse('oidc_authentication_init'), reverse('oidc_authentication_callback'))"
    )
    result = subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", code],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert result.stdout.split("\n")[-2] == (
        "braid.sso.backend.SingleSignOnBackend {'idp-finance': ('finance',)} "
        "/oidc/authenticate/ /oidc/callback/"
    )
