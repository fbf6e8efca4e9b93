"""Template context shared by every page."""

from django.http import HttpRequest


def navigation(request: HttpRequest) -> dict[str, object]:
    """Return the navigation entries and which one is current."""
    sections = [("designer", "Flows"), ("monitor", "Runs"), ("approvals", "Inbox")]
    current = request.resolver_match.app_name if request.resolver_match else ""
    return {"nav_sections": [(name, label, name == current) for name, label in sections]}
