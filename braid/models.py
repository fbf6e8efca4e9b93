"""The project's own rows: which Braid user each single sign-on identity is (docs/sso.md)."""

from django.conf import settings
from django.db import models


class SingleSignOnIdentity(models.Model):
    """One person at the identity provider, known by the issuer and subject of their tokens.

    OpenID Connect promises that this pair is unique and stable; a user name claim is
    neither, so it only names the user made at the first login. A row ties the pair to one
    user: made at that first login, or by an admin in the Django admin to let a person
    who already has a Braid account log in through the provider with it.
    """

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="sso_identity"
    )
    issuer = models.CharField(max_length=500, help_text="the provider's issuer URL")
    subject = models.CharField(max_length=255, help_text="the `sub` claim")
    created_at = models.DateTimeField(auto_now_add=True)
    last_login_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["issuer", "subject"], name="sso_identity_unique")
        ]
        verbose_name = "single sign-on identity"
        verbose_name_plural = "single sign-on identities"

    def __str__(self) -> str:
        return f"{self.subject} at {self.issuer}"
