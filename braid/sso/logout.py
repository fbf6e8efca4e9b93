"""Logging out: the Braid session ends as Django's LogoutView ends it, and a session that
single sign-on began is ended at the provider too (OpenID Connect RP-Initiated Logout 1.0).

The browser is sent to the provider's `end_session_endpoint` with the ID token the login
kept in the session (`id_token_hint`), the client id, and Braid's login page as the
`post_logout_redirect_uri`, which the provider must have registered for the client. Braid's
own session is over before the browser leaves: a provider that cannot be reached, or offers
no end-session endpoint, leaves the person logged out of Braid and told that they may still
be signed in there.
"""

import logging
from urllib.parse import urlencode

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import views as auth_views
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import resolve_url

from braid.sso.config import logout_origins, origin
from braid.sso.discovery import ProviderUnreachable, provider

LOG = logging.getLogger("braid.sso")
ID_TOKEN = "oidc_id_token"  # where mozilla-django-oidc keeps it (OIDC_STORE_ID_TOKEN)
UNREACHABLE = (
    "You are logged out of Braid. {name} could not be reached to end its own session, so "
    "you may still be signed in there."
)
NO_END_SESSION = (
    "You are logged out of Braid. {name} offers no way for Braid to end its own session, "
    "so you may still be signed in there."
)


class LogoutView(auth_views.LogoutView):
    """Django's logout (POST only), then the provider's when single sign-on began it."""

    def post(self, request: HttpRequest, *args: object, **kwargs: object) -> HttpResponse:
        id_token = request.session.get(ID_TOKEN)
        response: HttpResponse = super().post(request, *args, **kwargs)
        config = getattr(settings, "BRAID_SSO", None)
        if not isinstance(id_token, str) or not id_token or config is None:
            return response
        try:
            end_session = provider(config).endpoints.end_session
        except ProviderUnreachable as error:
            LOG.warning("single sign-on: logged out of Braid only, the provider is "
                        "unreachable: %s", error)  # fmt: skip
            messages.warning(request, UNREACHABLE.format(name=config.name))
            return response
        if end_session and origin(end_session) not in logout_origins(config):
            # The pages' CSP would stop the browser at the redirect (form-action).
            LOG.warning("single sign-on: the discovered end-session endpoint %s is not on the "
                        "issuer's origin; set BRAID_OIDC_END_SESSION_ENDPOINT to use it",
                        end_session)  # fmt: skip
            end_session = ""
        if not end_session:
            messages.info(request, NO_END_SESSION.format(name=config.name))
            return response
        query = urlencode({
            "id_token_hint": id_token,
            "client_id": config.client_id,
            "post_logout_redirect_uri": request.build_absolute_uri(
                resolve_url(settings.LOGOUT_REDIRECT_URL)
            ),
        })  # fmt: skip
        return HttpResponseRedirect(f"{end_session}{'&' if '?' in end_session else '?'}{query}")
