from django.apps import AppConfig


class EngineConfig(AppConfig):
    """The Django adapter around the pure engine core."""

    name = "engine"

    def ready(self) -> None:
        """Apply the BRAID_CEL_* settings and the run limits to the core's limits, and send the
        runtime's messages as Celery tasks of the app current now: Braid's, which the project
        package made current in this thread while Django read its settings (braid/__init__.py),
        whichever thread sends them later (engine.tasks.CeleryTransport says why).

        Imported here, not above: the tasks import the models, which load after this module.
        """
        from celery._state import get_current_app
        from django.conf import settings

        from engine.core.expressions import configure_limits
        from engine.runtime.transport import use_transport
        from engine.tasks import CeleryTransport

        configure_limits(**settings.BRAID_CEL_LIMITS, **settings.BRAID_RUN_LIMITS)
        use_transport(CeleryTransport(get_current_app()))
