"""The two pages of single sign-on: the start, which sends the browser to the provider, and
the callback it comes back to. Each failure is a page that says what happened, never a 500:

- 502: the provider cannot be reached, or answers with a server error;
- 400: a reply to no login started in this browser (an unknown state), a code the provider
  refuses (expired, used twice, another login's), a wrong nonce, an ID token of another
  issuer or client;
- 403: the provider said no (the person cancelled), or Braid refuses the account.
"""

import logging
from typing import Any

import requests
from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_not_required
from django.core.exceptions import SuspiciousOperation
from django.http import HttpRequest, HttpResponse, HttpResponseBase
from django.shortcuts import render
from django.views.generic import View
from mozilla_django_oidc.views import OIDCAuthenticationCallbackView, OIDCAuthenticationRequestView

from braid.sso.backend import REFUSAL
from braid.sso.config import SsoConfig
from braid.sso.discovery import ProviderUnreachable, provider
from web.permissions import Who, who

LOG = logging.getLogger("braid.sso")
UNREACHABLE = (
    "the identity provider could not be reached or did not answer as expected; try again "
    "later, or log in with a password"
)
NOT_STARTED = (
    "this reply is not for a login started in this browser, or that login expired; start again"
)
CODE_REFUSED = (
    "the identity provider refused this login's code (it expired, was used already, or "
    "belongs to another login); start again"
)
TAMPERED = "the identity provider's reply did not pass Braid's checks; start again"
NOT_LOGGED_IN = "single sign-on did not log you in"
ERROR_TEXT_MAX = 200
NO_ROLE = (
    "You are logged in, but {name} gave you no group that Braid maps to a role, so you may "
    "read flows and nothing more. Ask an admin for a role."
)


def configured() -> SsoConfig:
    """Return the configuration; these views are routed only when there is one."""
    config = settings.BRAID_SSO
    assert config is not None, "single sign-on's views are routed only when it is configured"
    return config


def failure(request: HttpRequest, reason: str, status: int) -> HttpResponse:
    """Answer a failed single sign-on with a page that says why, and links to try again."""
    context = {"reason": reason, "sso_name": configured().name}
    return render(request, "registration/sso_failed.html", context, status=status)


class StartView(OIDCAuthenticationRequestView):  # type: ignore[misc]  # the library has no type hints
    """Send the browser to the provider's authorization endpoint with a new state, nonce
    and PKCE challenge, kept in the session (the library); `next` is kept if it is safe."""

    def __init__(self, **kwargs: Any) -> None:
        # Not the library's __init__, which reads the endpoint from settings: it is discovered.
        View.__init__(self, **kwargs)

    def get(self, request: HttpRequest) -> HttpResponseBase:
        config = configured()
        try:
            self.OIDC_OP_AUTH_ENDPOINT = provider(config).endpoints.authorization
        except ProviderUnreachable as error:
            LOG.warning("single sign-on: the provider is unreachable: %s", error)
            return failure(request, UNREACHABLE, 502)
        self.OIDC_RP_CLIENT_ID = config.client_id
        response: HttpResponseBase = super().get(request)
        return response


class CallbackView(OIDCAuthenticationCallbackView):  # type: ignore[misc]  # the library has no type hints
    """Finish the login the provider sends back; log the person in or say why not."""

    def get(self, request: HttpRequest) -> HttpResponseBase:
        state = request.GET.get("state")
        if "error" not in request.GET and state not in request.session.get("oidc_states", {}):
            LOG.warning("single sign-on: a callback with an unknown state")
            return failure(request, NOT_STARTED, 400)
        try:
            response: HttpResponseBase = super().get(request)
        except SuspiciousOperation as error:
            LOG.warning("single sign-on: refused a reply: %s", error)
            return failure(request, TAMPERED, 400)
        except requests.HTTPError as error:
            return provider_refused(request, error)
        except (ProviderUnreachable, requests.RequestException) as error:
            LOG.warning("single sign-on: the provider failed: %s", error)
            return failure(request, UNREACHABLE, 502)
        return response

    def login_success(self) -> HttpResponseBase:
        """Log the person in (the library); tell someone without a role why the pages are
        empty, rather than leaving them on a read-only list of flows wondering."""
        response: HttpResponseBase = super().login_success()
        if who(self.user) is Who.NO_GROUP:
            messages.info(self.request, NO_ROLE.format(name=configured().name))
        return response

    def login_failure(self) -> HttpResponse:
        """Say why: the provider's error, Braid's refusal, or that it simply did not work."""
        error = self.request.GET.get("error")
        if error:
            described = self.request.GET.get("error_description", "")
            said = f"{error}: {described}" if described else error
            reason = f"the identity provider said {said}"[:ERROR_TEXT_MAX]
        else:
            reason = getattr(self.request, REFUSAL, NOT_LOGGED_IN)
        return failure(self.request, reason, 403)


def provider_refused(request: HttpRequest, error: requests.HTTPError) -> HttpResponse:
    """Answer the provider's refusal of a call: a 4xx (a code expired, used twice, or not
    this login's, as PKCE shows) is about this reply, anything else about the provider."""
    status = error.response.status_code if error.response is not None else 502
    LOG.warning("single sign-on: the provider answered %s: %s", status, error)
    if 400 <= status < 500:
        return failure(request, CODE_REFUSED, 400)
    return failure(request, UNREACHABLE, 502)


start = login_not_required(StartView.as_view())
callback = login_not_required(CallbackView.as_view())
