"""The Django admin's page for single sign-on identities: where an admin links a person's
provider identity to the Braid account they already have (docs/sso.md, "Collisions")."""

from typing import TYPE_CHECKING

from django.contrib import admin

from braid.models import SingleSignOnIdentity

# ModelAdmin is generic only in django-stubs; at run time it takes no type argument.
if TYPE_CHECKING:
    IdentityAdminBase = admin.ModelAdmin[SingleSignOnIdentity]
else:
    IdentityAdminBase = admin.ModelAdmin


@admin.register(SingleSignOnIdentity)
class SingleSignOnIdentityAdmin(IdentityAdminBase):
    """List, search and link identities; the user is picked by id, as users may be many."""

    list_display = ("user", "subject", "issuer", "created_at", "last_login_at")
    search_fields = ("user__username", "subject")
    raw_id_fields = ("user",)
    readonly_fields = ("created_at", "last_login_at")
