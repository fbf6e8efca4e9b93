from django.apps import AppConfig


class WebConfig(AppConfig):
    """The plumbing every app's pages, API and sockets share."""

    name = "web"

    def ready(self) -> None:
        """Close a session's sockets when it logs out, and a user's when the user is
        deactivated, deleted or given a new password."""
        from django.contrib.auth import get_user_model
        from django.contrib.auth.signals import user_logged_out
        from django.db.models.signals import post_delete, post_save, pre_save

        from web.sockets import (
            close_sockets_of_inactive_user,
            close_sockets_of_session,
            note_password_change,
        )

        user_logged_out.connect(close_sockets_of_session, dispatch_uid="web.sockets.logout")
        for signal in (post_save, post_delete):
            signal.connect(
                close_sockets_of_inactive_user,
                sender=get_user_model(),
                dispatch_uid=f"web.sockets.inactive.{signal is post_save}",
            )
        pre_save.connect(
            note_password_change, sender=get_user_model(), dispatch_uid="web.sockets.password"
        )
