"""Issuing, finding and revoking personal API tokens (docs/tokens.md)."""

import datetime as dt
import hashlib
import re
import secrets

from django.conf import settings
from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone

from tokens.models import ApiToken

SECRET_PREFIX = "braid_"
SECRET_BYTES = 32  # 256 random bits: no one guesses a token, so a fast hash stores it safely
SHOWN_CHARACTERS = 8  # of the random part, kept in `prefix` to tell tokens apart
SECRET_FORM = re.compile(r"braid_[A-Za-z0-9_-]{43}")  # SECRET_PREFIX + urlsafe base64 of 32 bytes
LAST_USED_EVERY = dt.timedelta(minutes=1)  # at most one write per token per minute


class IssueRefused(Exception):
    """A token could not be issued: a stable code, a sentence and the HTTP status."""

    def __init__(self, code: str, detail: str, status: int) -> None:
        super().__init__(detail)
        self.code = code
        self.detail = detail
        self.status = status


def new_secret() -> str:
    """Return a new secret: `braid_` and 43 characters of urlsafe base64 (256 random bits)."""
    return SECRET_PREFIX + secrets.token_urlsafe(SECRET_BYTES)


def digest_of(secret: str) -> str:
    """Return the SHA-256 of a secret in hex: what the database keeps and looks tokens up by."""
    return hashlib.sha256(secret.encode("utf-8", "surrogatepass")).hexdigest()


def active_tokens(user: User) -> QuerySet[ApiToken]:
    """Return the user's tokens that are not revoked (expired ones included), newest first."""
    return ApiToken.objects.filter(user=user, revoked_at__isnull=True)


def issue(user: User, name: str, expires_at: dt.datetime | None) -> tuple[ApiToken, str]:
    """Store a new token for the user; return it with its secret, which is shown only now.

    The user's row is locked while the count is checked, so that two requests at once
    cannot both pass the last free place.
    """
    limit = settings.BRAID_TOKENS_PER_USER
    with transaction.atomic():
        User.objects.select_for_update().filter(pk=user.pk).first()
        if active_tokens(user).count() >= limit:
            detail = f"you have {limit} tokens, the most one person may hold; revoke one first"
            raise IssueRefused("token.limit", detail, 409)
        secret = new_secret()
        token = ApiToken.objects.create(
            user=user,
            name=name,
            prefix=secret[: len(SECRET_PREFIX) + SHOWN_CHARACTERS],
            digest=digest_of(secret),
            expires_at=expires_at,
        )
    return token, secret


def revoke(token: ApiToken, by: User) -> None:
    """Refuse the token from now on; the row stays, so that a caller is told it was revoked."""
    token.revoked_at = timezone.now()
    token.revoked_by = by
    token.save(update_fields=["revoked_at", "revoked_by"])


def note_use(token: ApiToken, now: dt.datetime) -> None:
    """Record that the token was used now, at most once a minute (one UPDATE, no read)."""
    if token.last_used_at is not None and now - token.last_used_at < LAST_USED_EVERY:
        return
    ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
    token.last_used_at = now
