from django.apps import AppConfig


class EngineConfig(AppConfig):
    """The Django adapter around the pure engine core."""

    name = "engine"

    def ready(self) -> None:
        """Apply the BRAID_CEL_* settings and the run limits to the core's limits."""
        from django.conf import settings

        from engine.core.expressions import configure_limits

        configure_limits(**settings.BRAID_CEL_LIMITS, **settings.BRAID_RUN_LIMITS)
