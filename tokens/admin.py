"""The Django admin's view of API tokens: who holds which, and revoking any of them."""

from typing import TYPE_CHECKING

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils import timezone

from tokens.models import ApiToken

# ModelAdmin is generic to django-stubs only; at run time it takes no type argument.
if TYPE_CHECKING:
    TokenAdminBase = admin.ModelAdmin[ApiToken]
else:
    TokenAdminBase = admin.ModelAdmin


@admin.register(ApiToken)
class ApiTokenAdmin(TokenAdminBase):
    """Tokens are listed and revoked here, never made: a secret is shown only to its owner."""

    list_display = ["prefix", "name", "user", "created_at", "expires_at", "last_used_at",
                    "revoked_at"]  # fmt: skip
    list_filter = [("revoked_at", admin.EmptyFieldListFilter), "expires_at"]
    search_fields = ["name", "prefix", "user__username"]
    readonly_fields = ["user", "prefix", "digest", "created_at", "last_used_at", "revoked_at",
                       "revoked_by"]  # fmt: skip
    actions = ["revoke"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    @admin.action(description="Revoke the selected tokens")
    def revoke(self, request: HttpRequest, queryset: QuerySet[ApiToken]) -> None:
        """Refuse the selected tokens from now on (those already revoked keep their time)."""
        count = queryset.filter(revoked_at__isnull=True).update(
            revoked_at=timezone.now(), revoked_by=request.user
        )
        self.message_user(request, f"Revoked {count} token(s).", messages.SUCCESS)
