from django.apps import AppConfig


class ApprovalsConfig(AppConfig):
    """The approvers' inbox."""

    name = "approvals"
