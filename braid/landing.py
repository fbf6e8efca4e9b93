"""Where a person lands after logging in: where their work is (docs/approvals.md, "Landing").

Admins land on Runs, analysts on Flows, approvers (members of any other group, such as
finance or legal) on the Inbox; someone in several roles lands by the strongest, in the
order admin > analyst > approver (web/permissions.py `who`). A safe `next` (same host,
Django's url_has_allowed_host_and_scheme, which LoginView applies) wins over all of them.
"""

from typing import Any

from django.conf import settings
from django.contrib.auth import views as auth_views
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.http import HttpRequest, HttpResponseRedirect
from django.urls import reverse

from web.permissions import Who, who

LANDING = {
    Who.ADMIN: "monitor:index",
    Who.ANALYST: "designer:index",
    Who.APPROVER: "approvals:index",
}


def landing_url(user: AbstractBaseUser | AnonymousUser) -> str:
    """Return the page a user starts on: Runs, Flows or the Inbox (Flows without a role)."""
    return reverse(LANDING.get(who(user), "designer:index"))


class LandingLoginView(auth_views.LoginView):
    """Django's login view, sending each person to where their work is unless `next` says
    otherwise (an unsafe `next`, another host or scheme, is ignored by LoginView)."""

    redirect_authenticated_user = True

    def get_default_redirect_url(self) -> str:
        return landing_url(self.request.user)

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        """Add the provider's name when single sign-on is on: the page then offers it."""
        context = super().get_context_data(**kwargs)
        config = settings.BRAID_SSO
        context["sso_name"] = config.name if config is not None else ""
        return context


def home(request: HttpRequest) -> HttpResponseRedirect:
    """Send `/` to the user's landing page."""
    return HttpResponseRedirect(landing_url(request.user))
