"""The identity provider's endpoints, discovered at the first login rather than at start-up.

Start-up never contacts the provider: Braid starts, and password logins work, while it is
down. The first single sign-on fetches `<issuer>/.well-known/openid-configuration` (at most
BRAID_OIDC_TIMEOUT_S); the endpoints are kept for DISCOVERY_TTL_S in each process. A failed
fetch is not kept, so the next login tries again, and the person is told the provider could
not be reached (braid/sso/views.py). Endpoints set in BRAID_OIDC_*_ENDPOINT win over the
document's, and when the authorization, token and JWKS endpoints are all set, nothing is
fetched at all.
"""

import threading
import time
from dataclasses import dataclass

import requests

from braid.sso.config import Endpoints, SsoConfig, is_web_url

DISCOVERY_TTL_S = 3600.0
WELL_KNOWN = "/.well-known/openid-configuration"


class ProviderUnreachable(Exception):
    """The discovery document could not be fetched or read; the message says why."""


@dataclass(frozen=True)
class Provider:
    """What a login needs of the provider: the issuer its tokens carry and its endpoints."""

    issuer: str
    endpoints: Endpoints


_lock = threading.Lock()
_cached: dict[str, tuple[float, Provider]] = {}


def provider(config: SsoConfig) -> Provider:
    """Return the provider's issuer and endpoints, discovering them when needed."""
    if config.endpoints.complete():
        return Provider(config.issuer, config.endpoints)
    with _lock:
        until, found = _cached.get(config.issuer, (0.0, None))
    if found is not None and time.monotonic() < until:
        return found
    found = discover(config)
    with _lock:
        _cached[config.issuer] = (time.monotonic() + DISCOVERY_TTL_S, found)
    return found


def forget() -> None:
    """Drop what was discovered (a test's provider comes and goes on a new port)."""
    with _lock:
        _cached.clear()


def discover(config: SsoConfig) -> Provider:
    """Fetch and check the discovery document; raise ProviderUnreachable with the reason."""
    url = config.issuer.rstrip("/") + WELL_KNOWN
    try:
        response = requests.get(url, timeout=config.timeout_s, allow_redirects=False)
        response.raise_for_status()
        document = response.json()
    except (requests.RequestException, ValueError) as error:
        raise ProviderUnreachable(f"{url}: {error}") from error
    if not isinstance(document, dict):
        raise ProviderUnreachable(f"{url} did not answer a JSON object")
    issuer = document.get("issuer")
    # OpenID Connect Discovery 1.0, 4.3: the document's issuer must be the one configured
    # (a trailing slash aside, which people add or leave out of the variable).
    if not isinstance(issuer, str) or issuer.rstrip("/") != config.issuer.rstrip("/"):
        raise ProviderUnreachable(
            f"{url} names the issuer {issuer!r}, not BRAID_OIDC_ISSUER {config.issuer!r}"
        )
    endpoints = Endpoints(
        authorization=config.endpoints.authorization or text(document, "authorization_endpoint"),
        token=config.endpoints.token or text(document, "token_endpoint"),
        userinfo=config.endpoints.userinfo or text(document, "userinfo_endpoint"),
        jwks=config.endpoints.jwks or text(document, "jwks_uri"),
        end_session=config.endpoints.end_session or web_url(text(document, "end_session_endpoint")),
    )
    if not endpoints.complete():
        raise ProviderUnreachable(f"{url} lacks the authorization, token or jwks_uri endpoint")
    return Provider(issuer, endpoints)


def web_url(value: str) -> str:
    """Return an absolute http(s) URL as it is, anything else as '' (a browser is sent there:
    the check BRAID_OIDC_*_ENDPOINT passes at start-up)."""
    return value if is_web_url(value) else ""


def text(document: dict[str, object], key: str) -> str:
    """Return a text member of the document, or '' when it is absent or not text."""
    value = document.get(key)
    return value if isinstance(value, str) else ""
