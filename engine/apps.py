from django.apps import AppConfig


class EngineConfig(AppConfig):
    """The Django adapter around the pure engine core."""

    name = "engine"
