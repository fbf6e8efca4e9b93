from django.apps import AppConfig


class EngineConfig(AppConfig):
    """The Django adapter around the pure engine core."""

    name = "engine"

    def ready(self) -> None:
        """Apply the BRAID_CEL_* settings to the core's expression limits; close a session's
        sockets when it logs out."""
        from django.conf import settings
        from django.contrib.auth.signals import user_logged_out

        from braid.sockets import close_sockets_of_session
        from engine.core.expressions import configure_limits

        configure_limits(**settings.BRAID_CEL_LIMITS)
        user_logged_out.connect(close_sockets_of_session, dispatch_uid="braid.sockets.logout")
