"""Single sign-on's configuration, read from BRAID_OIDC_* (docs/sso.md).

Settings import this module, so it imports nothing of Django but its exception: reading the
environment must not load models. A mistake in a variable stops start-up with the variable's
name and what is wrong, as BRAID_HTTP_ALLOWLIST does; the identity provider itself is never
contacted here (discovery waits for the first login, braid/sso/discovery.py).
"""

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from django.core.exceptions import ImproperlyConfigured

PREFIX = "BRAID_OIDC_"
BACKEND = "braid.sso.backend.SingleSignOnBackend"
GROUP_NAME_MAX = 150  # django.contrib.auth's Group.name
ENDPOINTS = ("AUTHORIZATION_ENDPOINT", "TOKEN_ENDPOINT", "USERINFO_ENDPOINT", "JWKS_ENDPOINT",
             "END_SESSION_ENDPOINT")  # fmt: skip


@dataclass(frozen=True)
class Endpoints:
    """Where the provider's endpoints are; any left empty come from discovery."""

    authorization: str = ""
    token: str = ""
    userinfo: str = ""
    jwks: str = ""
    end_session: str = ""  # RP-initiated logout's, when the provider offers one

    def complete(self) -> bool:
        """Return whether discovery is unneeded (the userinfo and end-session endpoints are
        optional)."""
        return bool(self.authorization and self.token and self.jwks)


@dataclass(frozen=True)
class SsoConfig:
    """What BRAID_OIDC_* says; see docs/sso.md for each variable."""

    issuer: str
    client_id: str
    client_secret: str
    name: str = "single sign-on"
    scopes: str = "openid email profile"
    username_claim: str = "preferred_username"
    groups_claim: str = "groups"
    group_map: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    sign_algorithm: str = "RS256"
    timeout_s: float = 10.0
    endpoints: Endpoints = Endpoints()

    def managed_groups(self) -> frozenset[str]:
        """Return the Braid groups the provider decides: every group the map names."""
        return frozenset(name for names in self.group_map.values() for name in names)

    def braid_groups(self, claimed: object) -> frozenset[str]:
        """Return the Braid groups a groups claim maps to (unmapped and non-text values
        ignored; a single text value counts as a list of one)."""
        values = [claimed] if isinstance(claimed, str) else claimed
        if not isinstance(values, list):
            return frozenset()
        return frozenset(
            name
            for value in values
            if isinstance(value, str)
            for name in self.group_map.get(value, ())
        )


def read_sso_config(environ: Mapping[str, str]) -> SsoConfig | None:
    """Return the configuration, or None when no BRAID_OIDC_* variable is set (off)."""
    given = {key[len(PREFIX) :]: value.strip() for key, value in environ.items()
             if key.startswith(PREFIX) and value.strip()}  # fmt: skip
    if not given:
        return None
    missing = [f"{PREFIX}{name}" for name in ("ISSUER", "CLIENT_ID", "CLIENT_SECRET")
               if not given.get(name)]  # fmt: skip
    if missing:
        raise ImproperlyConfigured(
            f"single sign-on needs {', '.join(missing)} as well (docs/sso.md); "
            f"unset every {PREFIX}* variable to turn it off"
        )
    for name in ("ISSUER", *ENDPOINTS):
        if name in given:
            check_url(f"{PREFIX}{name}", given[name])
    return SsoConfig(
        issuer=given["ISSUER"],
        client_id=given["CLIENT_ID"],
        client_secret=given["CLIENT_SECRET"],
        name=given.get("NAME", SsoConfig.name),
        scopes=scopes(given.get("SCOPES", SsoConfig.scopes)),
        username_claim=given.get("USERNAME_CLAIM", SsoConfig.username_claim),
        groups_claim=given.get("GROUPS_CLAIM", SsoConfig.groups_claim),
        group_map=parse_group_map(given.get("GROUP_MAP", "")),
        sign_algorithm=given.get("SIGN_ALGORITHM", SsoConfig.sign_algorithm),
        timeout_s=positive_number(f"{PREFIX}TIMEOUT_S", given.get("TIMEOUT_S", "10")),
        endpoints=Endpoints(*(given.get(name, "") for name in ENDPOINTS)),
    )


def is_web_url(value: str) -> bool:
    """Return whether a value is an absolute http(s) URL with a host."""
    parts = urlsplit(value)
    return parts.scheme in ("https", "http") and bool(parts.hostname)


def check_url(variable: str, value: str) -> None:
    """Refuse a provider address that is not an absolute http(s) URL."""
    if not is_web_url(value):
        raise ImproperlyConfigured(f"{variable} must be an http(s) URL, not {value!r}")


def scopes(value: str) -> str:
    """Return the scopes to ask for, refusing a list without `openid` (not OpenID Connect)."""
    words = value.split()
    if "openid" not in words:
        raise ImproperlyConfigured(f"{PREFIX}SCOPES must include openid, not {value!r}")
    return " ".join(words)


def positive_number(variable: str, value: str) -> float:
    """Return a positive number of seconds, or say which variable is wrong."""
    try:
        number = float(value)
    except ValueError:
        number = 0.0
    if not number > 0:
        raise ImproperlyConfigured(f"{variable} must be a positive number, not {value!r}")
    return number


def parse_group_map(text: str) -> dict[str, tuple[str, ...]]:
    """Return provider group -> Braid groups from BRAID_OIDC_GROUP_MAP.

    Either `idp-group=braid-group,...` (a provider group may be named twice to grant two
    Braid groups), or a JSON object whose values are a group name or a list of them, for
    provider group names holding `,` or `=` (LDAP DNs, paths).
    """
    pairs = json_pairs(text) if text.lstrip().startswith("{") else list_pairs(text)
    mapping: dict[str, tuple[str, ...]] = {}
    for claimed, group in pairs:
        if not claimed or not group or len(group) > GROUP_NAME_MAX:
            raise ImproperlyConfigured(
                f"{PREFIX}GROUP_MAP: {claimed!r} -> {group!r} needs a provider group and a "
                f"Braid group name of 1 to {GROUP_NAME_MAX} characters"
            )
        if group not in mapping.get(claimed, ()):
            mapping[claimed] = (*mapping.get(claimed, ()), group)
    return mapping


def list_pairs(text: str) -> list[tuple[str, str]]:
    """Read `a=b,c=d` (spaces around each part ignored)."""
    pairs = []
    for entry in (item.strip() for item in text.split(",")):
        if not entry:
            continue
        claimed, equals, group = entry.rpartition("=")
        if not equals:
            raise ImproperlyConfigured(
                f"{PREFIX}GROUP_MAP: {entry!r} is not provider-group=braid-group "
                "(use a JSON object for names holding ',' or '=')"
            )
        pairs.append((claimed.strip(), group.strip()))
    return pairs


def json_pairs(text: str) -> list[tuple[str, str]]:
    """Read `{"provider group": "braid group" or ["braid group", ...]}`."""
    try:
        document = json.loads(text)
    except ValueError as error:
        raise ImproperlyConfigured(f"{PREFIX}GROUP_MAP is not valid JSON: {error}") from None
    if not isinstance(document, dict):
        raise ImproperlyConfigured(f"{PREFIX}GROUP_MAP must be a JSON object")
    pairs: list[tuple[str, str]] = []
    for claimed, groups in document.items():
        names = [groups] if isinstance(groups, str) else groups
        if not isinstance(names, list) or not all(isinstance(name, str) for name in names):
            raise ImproperlyConfigured(
                f"{PREFIX}GROUP_MAP: the value of {claimed!r} must be a group name or a list "
                "of them"
            )
        pairs.extend((claimed.strip(), name.strip()) for name in names)
    return pairs


def origin(url: str) -> str:
    """Return a URL's scheme and host (and port), as a CSP source names it."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def logout_origins(config: SsoConfig) -> list[str]:
    """Return where logging out may send the browser: the issuer's origin, and the
    end-session endpoint's when it is set apart. The pages' CSP allows these in
    `form-action`, which browsers apply to where a form's answer redirects (the log-out
    button is a form)."""
    found = [origin(config.issuer)]
    if config.endpoints.end_session and origin(config.endpoints.end_session) not in found:
        found.append(origin(config.endpoints.end_session))
    return found


def django_settings(
    config: SsoConfig, backends: list[str], csp: Mapping[str, list[str]]
) -> dict[str, object]:
    """Return the settings single sign-on adds: its backend, mozilla-django-oidc's OIDC_*
    settings (the endpoints are resolved at login, braid/sso/discovery.py), and the
    provider in the CSP's `form-action`, for logging out there (braid/sso/logout.py)."""
    form_action = [*csp.get("form-action", []), *logout_origins(config)]
    return {
        "BRAID_SSO": config,
        "SECURE_CSP": {**csp, "form-action": form_action},
        "AUTHENTICATION_BACKENDS": [*backends, BACKEND],
        "OIDC_RP_CLIENT_ID": config.client_id,
        "OIDC_RP_CLIENT_SECRET": config.client_secret,
        "OIDC_RP_SCOPES": config.scopes,
        "OIDC_RP_SIGN_ALGO": config.sign_algorithm,
        "OIDC_USE_PKCE": True,  # S256; also protects a code stolen on its way back
        "OIDC_USE_NONCE": True,
        "OIDC_TOKEN_USE_BASIC_AUTH": True,  # client_secret_basic, the spec's default method
        "OIDC_TIMEOUT": config.timeout_s,
        "OIDC_VERIFY_SSL": True,
        "OIDC_CREATE_USER": True,
        "OIDC_STORE_ACCESS_TOKEN": False,
        "OIDC_STORE_ID_TOKEN": True,  # in the session: logging out names it to the provider
    }
