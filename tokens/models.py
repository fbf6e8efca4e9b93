"""Personal API tokens: only a SHA-256 digest of each secret is stored (docs/tokens.md).

The secret is 256 random bits, so a fast hash is as safe as a slow one would be (nobody
can guess their way to a preimage) and lets a request find its token by one indexed
lookup, instead of paying a password hash (PBKDF2, 0.34 s here) on every call.
"""

from django.conf import settings
from django.db import models


class ApiToken(models.Model):
    """One personal API token: it authenticates as its user, with that user's role."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens"
    )
    name = models.CharField(max_length=100, help_text="what the token is for, in the owner's words")
    prefix = models.CharField(
        max_length=20, help_text="the secret's first characters, to tell tokens apart"
    )
    digest = models.CharField(
        max_length=64, unique=True, help_text="SHA-256 of the secret, in hex; never the secret"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField(
        null=True, blank=True, help_text="refused from this time on; empty: never expires"
    )
    last_used_at = models.DateTimeField(
        null=True, blank=True, help_text="the last authenticated request, to the minute"
    )
    revoked_at = models.DateTimeField(null=True, blank=True, help_text="refused from this time on")
    revoked_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
        related_name="revoked_api_tokens", help_text="the owner, or the admin who revoked it",
    )  # fmt: skip

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["user", "revoked_at"], name="token_user_active")]
        verbose_name = "API token"

    def __str__(self) -> str:
        return f"{self.prefix}… {self.name} ({self.user})"
