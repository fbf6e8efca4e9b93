from django.apps import AppConfig


class ApprovalsConfig(AppConfig):
    """The approvers' inbox."""

    name = "approvals"

    def ready(self) -> None:
        """Register on the engine's run-observer hook; give a deactivated or deleted user's
        delegated parts back to their delegators.

        Imported here, not above: these modules import the models, which load after this one.
        """
        from django.contrib.auth import get_user_model
        from django.db.models.signals import post_delete, post_save

        from approvals.hooks import ApprovalsObserver
        from approvals.services import return_parts_of_leaving_user
        from engine.runtime import observers

        observers.register("approvals", ApprovalsObserver())

        for signal in (post_save, post_delete):
            signal.connect(
                return_parts_of_leaving_user,
                sender=get_user_model(),
                dispatch_uid=f"approvals.return_parts.{signal is post_save}",
            )
