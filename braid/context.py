"""Template context shared by every page."""

from django.http import HttpRequest

from approvals.services import open_count


def navigation(request: HttpRequest) -> dict[str, object]:
    """Return the navigation entries, which one is current, and the inbox's open count.

    The count is what the navigation bar shows first; `/ws/inbox/` keeps it current.
    """
    sections = [("designer", "Flows"), ("monitor", "Runs"), ("approvals", "Inbox")]
    current = request.resolver_match.app_name if request.resolver_match else ""
    context: dict[str, object] = {
        "nav_sections": [(name, label, name == current) for name, label in sections]
    }
    user = getattr(request, "user", None)
    if user is not None and user.is_authenticated:
        context["inbox_count"] = open_count(user)
    return context
