from django.apps import AppConfig


class DesignerConfig(AppConfig):
    """Flows, their drafts and their published versions."""

    name = "designer"
