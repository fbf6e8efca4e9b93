"""Single sign-on through a real OpenID provider (tests/oidc/provider.js in node): the whole
code flow, from Braid's button through the provider's login and consent forms back to
Braid's callback, and each way it must refuse (docs/sso.md)."""

import base64
import dataclasses
import json
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
from axes.models import AccessAttempt
from django.contrib.auth.models import Group, User
from django.contrib.auth.signals import user_logged_out
from django.test import Client, override_settings

from braid.models import SingleSignOnIdentity
from braid.sso import discovery, logout
from braid.sso.config import Endpoints, SsoConfig, logout_origins
from braid.sso.discovery import Provider
from tests.django.fixture_types import DemoUsers
from tests.django.sso_provider import (
    AFTER_LOGOUT,
    CLIENT_ID,
    Browser,
    OpenIdProvider,
    provider_running,
    sso_configured,
)
from tests.processes import free_port

pytestmark = pytest.mark.django_db


@pytest.fixture(scope="module")
def provider(tmp_path_factory: pytest.TempPathFactory) -> Iterator[OpenIdProvider]:
    """One provider process for the module (about half a second to start)."""
    with provider_running(tmp_path_factory.mktemp("oidc")) as running:
        yield running


@pytest.fixture
def sso(provider: OpenIdProvider) -> Iterator[SsoConfig]:
    """Braid configured for the provider, with an empty set of accounts to fill."""
    provider.set_accounts({})
    with sso_configured(provider.environment()) as config:
        yield config


def account(login: str, groups: list[str], **claims: Any) -> dict[str, dict[str, object]]:
    """Return one provider account whose user name claim is its login."""
    return {login: {"preferred_username": login, "email": f"{login}@idp.example",
                    "given_name": login.title(), "groups": groups, **claims}}  # fmt: skip


def groups_of(username: str) -> list[str]:
    """Return a user's group names, sorted."""
    return sorted(User.objects.get(username=username).groups.values_list("name", flat=True))


def logged_in_as(client: Client) -> str:
    """Return who the client's session is, '' for nobody (the page shows the user's name)."""
    response = client.get("/flows/")
    if response.status_code != 200:
        return ""
    text = response.content.decode()
    return text.split('<form class="account"', 1)[1].split("<span>", 1)[1].split("</span>")[0]


def test_a_first_login_makes_the_user_with_the_mapped_groups_and_lands_them_on_the_inbox(
    sso: SsoConfig, provider: OpenIdProvider
) -> None:
    provider.set_accounts(account("alice", ["idp-finance", "idp-unknown", "Everyone"]))
    browser = Browser()
    response = browser.log_in("alice")
    assert (response.status_code, response["Location"]) == (302, "/")
    assert browser.braid.get("/")["Location"] == "/inbox/"
    assert logged_in_as(browser.braid) == "alice"
    alice = User.objects.get(username="alice")
    assert (alice.email, alice.first_name, alice.has_usable_password()) == (
        "alice@idp.example", "Alice", False
    )  # fmt: skip
    assert groups_of("alice") == ["finance"]
    assert not Group.objects.filter(name__in=["idp-unknown", "Everyone"]).exists()
    identity = SingleSignOnIdentity.objects.get(user=alice)
    assert (identity.issuer, identity.subject) == (provider.issuer, "alice")


def test_a_changed_groups_claim_changes_the_groups_at_the_next_login_and_keeps_the_rest(
    sso: SsoConfig, provider: OpenIdProvider
) -> None:
    provider.set_accounts(account("bob", ["idp-finance"]))
    browser = Browser()
    browser.log_in("bob")
    # a group the map does not name is Braid's to manage: an admin's choice survives logins
    User.objects.get(username="bob").groups.add(Group.objects.create(name="procurement"))
    provider.set_accounts(account("bob", ["idp-legal", "idp-admins"], email="bob@new.example"))
    response = browser.log_in("bob")  # the provider remembers him: no forms this time
    assert (response.status_code, response["Location"]) == (302, "/")
    assert groups_of("bob") == ["admins", "legal", "procurement"]
    assert User.objects.get(username="bob").email == "bob@new.example"
    assert browser.braid.get("/")["Location"] == "/runs/"
    provider.set_accounts(account("bob", []))
    Browser().log_in("bob")
    assert groups_of("bob") == ["procurement"]


def test_one_provider_group_may_grant_two_braid_groups(
    sso: SsoConfig, provider: OpenIdProvider
) -> None:
    provider.set_accounts(account("carol", ["idp-approvers"]))
    Browser().log_in("carol")
    assert groups_of("carol") == ["finance", "legal"]


def test_a_user_with_no_mapped_group_logs_in_without_a_role(
    sso: SsoConfig, provider: OpenIdProvider
) -> None:
    provider.set_accounts(account("dave", ["Everyone"]))
    browser = Browser()
    browser.log_in("dave")
    assert groups_of("dave") == []
    assert browser.braid.get("/")["Location"] == "/flows/"  # read-only flows, as no group
    page = browser.braid.get("/flows/")
    assert page.status_code == 200
    assert (
        '<p class="message">You are logged in, but Test IdP gave you no group that Braid maps '
        "to a role, so you may read flows and nothing more. Ask an admin for a role.</p>"
    ) in page.content.decode()
    assert "You are logged in, but" not in browser.braid.get("/flows/").content.decode()
    started = browser.braid.post(
        "/api/runs/", {"flow": "invoice-sign-off", "input": {}}, content_type="application/json"
    )
    assert started.status_code == 403


def test_a_safe_next_is_where_the_login_ends(sso: SsoConfig, provider: OpenIdProvider) -> None:
    provider.set_accounts(account("erin", ["idp-analysts"]))
    browser = Browser()
    assert browser.log_in("erin", "?next=/runs/")["Location"] == "/runs/"
    assert Browser().log_in("erin", "?next=https://evil.example/")["Location"] == "/"


def test_a_local_account_of_the_same_name_is_never_taken_over(
    sso: SsoConfig, provider: OpenIdProvider, demo_users: DemoUsers
) -> None:
    for name in ("admin", "Admin"):
        provider.set_accounts(account(name, ["idp-admins"]))
        browser = Browser()
        response = browser.log_in(name)
        assert response.status_code == 403
        assert (
            f"A Braid account named &#x27;{name}&#x27; already exists and is not linked to "
            f"your sign-on; an admin can link it to your subject &#x27;{name}&#x27;"
            in response.content.decode()
        )
        assert logged_in_as(browser.braid) == ""
    assert not SingleSignOnIdentity.objects.exists()
    assert User.objects.filter(username__iexact="admin").count() == 1
    assert User.objects.get(username="admin").check_password("braid-admin")


def test_an_identity_an_admin_linked_logs_into_the_existing_account(
    sso: SsoConfig, provider: OpenIdProvider, demo_users: DemoUsers
) -> None:
    finance = demo_users["finance"]
    SingleSignOnIdentity.objects.create(user=finance, issuer=provider.issuer, subject="f.jones")
    provider.set_accounts(account("f.jones", ["idp-finance", "idp-legal"]))
    browser = Browser()
    assert browser.log_in("f.jones").status_code == 302
    assert logged_in_as(browser.braid) == "finance"
    assert groups_of("finance") == ["finance", "legal"]
    assert User.objects.get(username="finance").check_password("braid-finance")
    assert not User.objects.filter(username="f.jones").exists()


def test_a_deactivated_account_is_refused(sso: SsoConfig, provider: OpenIdProvider) -> None:
    provider.set_accounts(account("gail", ["idp-finance"]))
    Browser().log_in("gail")
    User.objects.filter(username="gail").update(is_active=False)
    browser = Browser()
    response = browser.log_in("gail")
    assert response.status_code == 403
    assert "The Braid account &#x27;gail&#x27; is deactivated." in response.content.decode()
    assert logged_in_as(browser.braid) == ""


def test_a_reply_with_a_state_this_browser_did_not_start_is_refused(
    sso: SsoConfig, provider: OpenIdProvider
) -> None:
    provider.set_accounts(account("hank", ["idp-finance"]))
    browser = Browser()
    reply = browser.through_provider(browser.start(), "hank")
    query = parse_qs(urlsplit(reply).query)
    forged = "/oidc/callback/?" + urlencode({"code": query["code"][0], "state": "forged"})
    response = browser.braid.get(forged)
    assert response.status_code == 400
    assert "This reply is not for a login started in this browser" in response.content.decode()
    stranger = Client()  # the right state, in another browser
    assert Browser(stranger).callback(reply).status_code == 400
    assert logged_in_as(browser.braid) == logged_in_as(stranger) == ""
    assert not User.objects.filter(username="hank").exists()


def test_a_reply_used_twice_is_refused_the_second_time(
    sso: SsoConfig, provider: OpenIdProvider
) -> None:
    provider.set_accounts(account("iris", ["idp-finance"]))
    browser = Browser()
    reply = browser.through_provider(browser.start(), "iris")
    assert browser.callback(reply).status_code == 302
    browser.braid.post("/logout/")
    assert browser.callback(reply).status_code == 400
    assert logged_in_as(browser.braid) == ""


def test_a_wrong_nonce_is_refused(sso: SsoConfig, provider: OpenIdProvider) -> None:
    provider.set_accounts(account("jack", ["idp-finance"]))
    browser = Browser()
    reply = browser.through_provider(browser.start(), "jack")
    session = browser.braid.session
    state = parse_qs(urlsplit(reply).query)["state"][0]
    states = session["oidc_states"]
    states[state]["nonce"] = "not-the-nonce-the-id-token-carries"
    session["oidc_states"] = states
    session.save()
    response = browser.callback(reply)
    assert response.status_code == 400
    assert "did not pass Braid&#x27;s checks" in response.content.decode()
    assert logged_in_as(browser.braid) == ""
    assert not User.objects.filter(username="jack").exists()


def test_a_code_from_another_browsers_login_is_refused(
    sso: SsoConfig, provider: OpenIdProvider
) -> None:
    """Code injection: the attacker's code, with the victim's own state. PKCE refuses it at
    the provider's token endpoint (the victim's verifier does not fit), before the nonce."""
    provider.set_accounts({**account("mallory", ["idp-admins"]), **account("kim", [])})
    attacker, victim = Browser(), Browser()
    stolen = parse_qs(urlsplit(attacker.through_provider(attacker.start(), "mallory")).query)
    victims = parse_qs(urlsplit(victim.through_provider(victim.start(), "kim")).query)
    injected = {"code": stolen["code"][0], "state": victims["state"][0]}
    response = victim.braid.get("/oidc/callback/?" + urlencode(injected))
    assert response.status_code == 400
    assert "refused this login&#x27;s code" in response.content.decode()
    assert logged_in_as(victim.braid) == ""
    assert not User.objects.filter(username="mallory").exists()


def test_cancelling_at_the_provider_says_so(sso: SsoConfig, provider: OpenIdProvider) -> None:
    browser = Browser()
    page = browser.idp.get(browser.start(), timeout=10)
    abort = page.text.split('href="', 1)[1].split('"', 1)[0]
    assert abort.endswith("/abort")
    reply = browser.idp.get(abort, allow_redirects=False, timeout=10)
    while not reply.headers["Location"].startswith("http://testserver/"):
        reply = browser.idp.get(reply.headers["Location"], allow_redirects=False, timeout=10)
    response = browser.callback(reply.headers["Location"])
    assert response.status_code == 403
    assert (
        "The identity provider said access_denied: End-User aborted interaction"
        in response.content.decode()
    )


def test_failed_single_sign_ons_are_not_counted_as_failed_logins(
    sso: SsoConfig, provider: OpenIdProvider, demo_users: DemoUsers, settings: Any
) -> None:
    """django-axes locks a user name and address after 5 failures; refused callbacks name no
    user, and counting them would lock the whole address out of single sign-on."""
    provider.set_accounts({**account("legal", []), **account("lena", ["idp-legal"])})
    for _ in range(settings.AXES_FAILURE_LIMIT + 1):
        assert Browser().log_in("legal").status_code == 403  # the local `legal` exists
    assert AccessAttempt.objects.count() == 0
    browser = Browser()
    assert browser.log_in("lena").status_code == 302
    assert logged_in_as(browser.braid) == "lena"


def test_logging_out_ends_a_single_sign_on_session(
    sso: SsoConfig, provider: OpenIdProvider
) -> None:
    provider.set_accounts(account("max", ["idp-finance"]))
    browser = Browser()
    browser.log_in("max")
    ended: list[str] = []

    def record(sender: object, user: User, **kwargs: object) -> None:
        ended.append(user.username)

    user_logged_out.connect(record)
    try:
        assert browser.braid.post("/logout/").status_code == 302
    finally:
        user_logged_out.disconnect(record)
    assert ended == ["max"]  # the signal web/sockets.py closes the session's sockets on
    assert browser.braid.get("/flows/")["Location"] == "/login/?next=/flows/"


def logged_in_max(provider: OpenIdProvider) -> Browser:
    """Return a browser that single sign-on logged in as max, of idp-finance."""
    provider.set_accounts(account("max", ["idp-finance"]))
    browser = Browser()
    assert browser.log_in("max").status_code == 302
    return browser


def test_logging_out_ends_the_session_at_the_provider_too(
    sso: SsoConfig, provider: OpenIdProvider
) -> None:
    browser = logged_in_max(provider)
    assert browser.passes_the_provider()  # signed in there: no password asked again
    # The log-out button is a form: the pages' CSP lets its answer redirect to the provider.
    policy = browser.braid.get("/flows/")["Content-Security-Policy"]
    assert f"form-action 'self' {provider.issuer};" in policy

    response = browser.braid.post("/logout/")
    assert response.status_code == 302
    assert logged_in_as(browser.braid) == ""  # Braid's session ended before the browser left
    location = urlsplit(response["Location"])
    assert f"{location.scheme}://{location.netloc}" == provider.issuer
    query = parse_qs(location.query)
    assert sorted(query) == ["client_id", "id_token_hint", "post_logout_redirect_uri"]
    assert query["client_id"] == [CLIENT_ID]
    assert query["post_logout_redirect_uri"] == [AFTER_LOGOUT]
    claims = json.loads(base64.urlsafe_b64decode(query["id_token_hint"][0].split(".")[1] + "=="))
    assert (claims["iss"], claims["aud"], claims["sub"]) == (provider.issuer, CLIENT_ID, "max")

    # The provider asks, ends its session, and sends the browser back to Braid's login page.
    assert browser.through_logout(response["Location"]) == AFTER_LOGOUT
    assert not browser.passes_the_provider()  # the next login asks for the password again


def test_a_password_session_logs_out_of_braid_alone(
    sso: SsoConfig, provider: OpenIdProvider, demo_users: DemoUsers
) -> None:
    client = Client()
    client.force_login(User.objects.get(username="finance"))
    assert logged_in_as(client) == "finance"
    response = client.post("/logout/")
    assert (response.status_code, response["Location"]) == (302, "/login/")
    assert logged_in_as(client) == ""


def test_a_provider_unreachable_at_logout_leaves_braid_logged_out_and_says_so(
    sso: SsoConfig, provider: OpenIdProvider
) -> None:
    browser = logged_in_max(provider)
    gone = dataclasses.replace(sso, issuer=f"http://127.0.0.1:{free_port()}")
    with override_settings(BRAID_SSO=gone):
        discovery.forget()
        response = browser.braid.post("/logout/", follow=True)
    assert response.redirect_chain == [("/login/", 302)]
    assert logged_in_as(browser.braid) == ""
    assert [str(m) for m in response.context["messages"]] == [
        "You are logged out of Braid. Test IdP could not be reached to end its own session, "
        "so you may still be signed in there."
    ]


def test_a_provider_without_an_end_session_endpoint_logs_out_of_braid_and_says_so(
    sso: SsoConfig, provider: OpenIdProvider
) -> None:
    browser = logged_in_max(provider)
    without = dataclasses.replace(sso, endpoints=dataclasses.replace(
        sso.endpoints, authorization=f"{provider.issuer}/auth", token=f"{provider.issuer}/token",
        jwks=f"{provider.issuer}/jwks", end_session="",
    ))  # fmt: skip
    assert without.endpoints.complete()  # nothing is discovered, so no end-session endpoint
    with override_settings(BRAID_SSO=without):
        response = browser.braid.post("/logout/", follow=True)
    assert response.redirect_chain == [("/login/", 302)]
    assert [str(m) for m in response.context["messages"]] == [
        "You are logged out of Braid. Test IdP offers no way for Braid to end its own "
        "session, so you may still be signed in there."
    ]


def test_a_password_login_with_a_code_in_its_query_is_not_exchanged(
    sso: SsoConfig, provider: OpenIdProvider, demo_users: DemoUsers
) -> None:
    """A failed password login asks every backend, the single sign-on one too: it must not
    take the page's query for a provider's reply."""
    response = Client().post("/login/?code=x&state=y", {"username": "finance", "password": "wrong"})
    assert response.status_code == 200
    assert "That user name and password do not match" in response.content.decode()


def test_a_discovered_end_session_endpoint_the_csp_would_block_is_not_used(
    sso: SsoConfig, provider: OpenIdProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    browser = logged_in_max(provider)
    elsewhere = Provider(provider.issuer, Endpoints(end_session="https://elsewhere.example/out"))
    monkeypatch.setattr(logout, "provider", lambda config: elsewhere)
    response = browser.braid.post("/logout/", follow=True)
    assert response.redirect_chain == [("/login/", 302)]
    assert [str(m) for m in response.context["messages"]] == [
        "You are logged out of Braid. Test IdP offers no way for Braid to end its own "
        "session, so you may still be signed in there."
    ]


def test_an_end_session_endpoint_set_apart_is_allowed_by_the_csp_too() -> None:
    config = SsoConfig("https://idp.example/realms/x", "braid", "s", endpoints=Endpoints(
        end_session="https://logout.idp.example:8443/end"))  # fmt: skip
    assert logout_origins(config) == ["https://idp.example", "https://logout.idp.example:8443"]
