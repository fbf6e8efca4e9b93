"""How the runtime's messages leave: advance a run, run actions, fire a timer later.

The runtime never imports a message queue. A transport is registered at start-up
(`engine.apps` registers Celery's, `engine.tasks.CeleryTransport`); a test or a tool may
register another with `use_transport`.
"""

from collections.abc import Sequence
from typing import Protocol


class Transport(Protocol):
    """Sends the runtime's messages to the workers."""

    def send_advance(self, run_id: str) -> None:
        """Ask a worker to apply the run's pending events."""
        ...

    def send_actions(self, dispatch_ids: Sequence[int]) -> None:
        """Ask a worker to run these dispatched actions, one after another."""
        ...

    def send_timer(self, run_id: str, key: str, countdown: float) -> None:
        """Ask a worker to fire the run's timer `countdown` seconds from now."""
        ...


class NoTransport(Exception):
    """A message was to leave before any transport was registered."""


_transport: Transport | None = None


def use_transport(transport: Transport | None) -> Transport | None:
    """Make `transport` the one messages leave by; return the one it replaces."""
    global _transport
    before, _transport = _transport, transport
    return before


def transport() -> Transport:
    """Return the registered transport."""
    if _transport is None:
        raise NoTransport("no transport is registered (engine.apps registers Celery's)")
    return _transport
