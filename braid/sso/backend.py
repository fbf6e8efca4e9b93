"""The authentication backend of single sign-on: mozilla-django-oidc's code flow (the token
request, the ID token's signature against the provider's JWKS, its nonce, PKCE), with what
Braid adds to it:

- the endpoints come from discovery at login time (braid/sso/discovery.py), never at
  construction: Django constructs the backend for every request of a logged-in user;
- the ID token's `iss` and `aud` are checked, which the library leaves out;
- the userinfo answer must be about the ID token's `sub` (OpenID Connect Core 5.3.4), and the
  claims of both are read together, as some providers put groups in the ID token only;
- the user is the one linked to the issuer and subject (braid/sso/accounts.py), not one
  matched by email, as the library does by default.
"""

from collections.abc import Mapping
from typing import Any, NoReturn

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied, SuspiciousOperation
from django.http import HttpRequest
from mozilla_django_oidc.auth import OIDCAuthenticationBackend

from braid.sso.accounts import Refused, sign_in
from braid.sso.discovery import Provider, provider

# Where the reason for a refused login waits for the callback view to show it.
REFUSAL = "braid_sso_refusal"


class SingleSignOnBackend(OIDCAuthenticationBackend):  # type: ignore[misc]  # the library has no type hints
    """Authenticate the callback of an OpenID Connect code flow; nothing else."""

    def __init__(self) -> None:
        # Deliberately not the library's __init__, which reads the endpoints from settings.
        self.UserModel = get_user_model()

    def authenticate(self, request: HttpRequest | None, **credentials: Any) -> User | None:
        """Finish the code flow the callback view began; any other login is not ours.

        A failed password login reaches every backend, this one too: without the nonce only
        the callback passes, a `code` in that request's query would be exchanged.
        """
        config = getattr(settings, "BRAID_SSO", None)
        if request is None or config is None or "nonce" not in credentials:
            return None
        self.config = config
        self.provider: Provider = provider(config)  # ProviderUnreachable: the view says so
        endpoints = self.provider.endpoints
        self.OIDC_OP_TOKEN_ENDPOINT = endpoints.token
        self.OIDC_OP_USER_ENDPOINT = endpoints.userinfo
        self.OIDC_OP_JWKS_ENDPOINT = endpoints.jwks
        self.OIDC_RP_CLIENT_ID = config.client_id
        self.OIDC_RP_CLIENT_SECRET = config.client_secret
        self.OIDC_RP_SIGN_ALGO = config.sign_algorithm
        self.OIDC_RP_IDP_SIGN_KEY = None
        user: User | None = super().authenticate(request, **credentials)
        return user

    def verify_token(self, token: str, **kwargs: Any) -> dict[str, Any]:
        """Check the signature and nonce (the library), then the issuer and audience."""
        payload: dict[str, Any] = super().verify_token(token, **kwargs)
        if "nonce" in kwargs:  # the ID token; a signed userinfo answer passes no nonce
            check_id_token(payload, self.provider.issuer, self.config.client_id)
        return payload

    def get_userinfo(
        self, access_token: str, id_token: str, payload: Mapping[str, Any]
    ) -> dict[str, Any]:
        """Return the ID token's claims updated with the userinfo endpoint's, when it has one."""
        claims = dict(payload)
        if self.OIDC_OP_USER_ENDPOINT:
            userinfo = super().get_userinfo(access_token, id_token, payload)
            if not isinstance(userinfo, dict) or userinfo.get("sub") != payload.get("sub"):
                self.refuse("the identity provider's userinfo is about someone else")
            claims.update(userinfo)
        return claims

    def get_or_create_user(
        self, access_token: str, id_token: str, payload: Mapping[str, Any]
    ) -> User:
        """Return the user linked to the identity, made at its first login."""
        claims = self.get_userinfo(access_token, id_token, payload)
        try:
            return sign_in(self.config, self.provider.issuer, claims)
        except Refused as refused:
            self.refuse(str(refused))

    def refuse(self, reason: str) -> NoReturn:
        """Keep the reason for the callback view and end the login (Django then sends
        user_login_failed, as for a wrong password)."""
        setattr(self.request, REFUSAL, reason)
        raise PermissionDenied(reason)


def check_id_token(payload: Mapping[str, Any], issuer: str, client_id: str) -> None:
    """Refuse an ID token from another issuer or for another client (OpenID Connect Core
    3.1.3.7, steps 2-4): mozilla-django-oidc checks neither."""
    if payload.get("iss") != issuer:
        raise SuspiciousOperation(f"ID token issuer {payload.get('iss')!r} is not {issuer!r}")
    audience = payload.get("aud")
    audiences = [audience] if isinstance(audience, str) else audience
    if not isinstance(audiences, list) or client_id not in audiences:
        raise SuspiciousOperation(f"ID token audience {audience!r} does not name {client_id!r}")
    if len(audiences) > 1 and payload.get("azp") != client_id:
        raise SuspiciousOperation(f"ID token for several audiences has azp {payload.get('azp')!r}")
