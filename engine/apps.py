from django.apps import AppConfig


class EngineConfig(AppConfig):
    """The Django adapter around the pure engine core."""

    name = "engine"

    def ready(self) -> None:
        """Apply the BRAID_CEL_* settings and the run limits to the core's limits; send the
        runtime's messages as Celery tasks; close a session's sockets when it logs out, and a
        user's when the user is deactivated, deleted or given a new password.

        Imported here, not above: the tasks import the models, which load after this module.
        """
        from django.conf import settings
        from django.contrib.auth import get_user_model
        from django.contrib.auth.signals import user_logged_out
        from django.db.models.signals import post_delete, post_save, pre_save

        from braid.sockets import (
            close_sockets_of_inactive_user,
            close_sockets_of_session,
            note_password_change,
        )
        from engine.core.expressions import configure_limits
        from engine.runtime.transport import use_transport
        from engine.tasks import CeleryTransport

        configure_limits(**settings.BRAID_CEL_LIMITS, **settings.BRAID_RUN_LIMITS)
        use_transport(CeleryTransport())
        user_logged_out.connect(close_sockets_of_session, dispatch_uid="braid.sockets.logout")
        for signal in (post_save, post_delete):
            signal.connect(
                close_sockets_of_inactive_user,
                sender=get_user_model(),
                dispatch_uid=f"braid.sockets.inactive.{signal is post_save}",
            )
        pre_save.connect(
            note_password_change, sender=get_user_model(), dispatch_uid="braid.sockets.password"
        )
