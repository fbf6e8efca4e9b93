"""The run-observer hook: what the apps above the engine do when a run asks for people.

The engine never imports those apps. An app registers an observer in its
`AppConfig.ready()` (approvals registers `approvals.hooks.ApprovalsObserver`), and the
runtime tells every registered observer, in its own transaction, when a step asks for
approvals or closes them, when a retry opens closed ones again, and at every sweep (when
requests may have passed their due time). The store asks them for a run's open approvals.
"""

import datetime as dt
from collections.abc import Mapping, Sequence
from typing import Protocol

from engine.core.events import RequestApproval


class RunObserver(Protocol):
    """What an app does around a durable or in-process run's approvals."""

    def approvals_requested(self, run_id: str, requests: Sequence[RequestApproval]) -> None:
        """A step asked people for these approvals (a key asked before is left as it is)."""
        ...

    def approvals_closed(self, run_id: str, reasons: Mapping[str, str]) -> None:
        """A step closed these approvals (key: the outcome, or why it was cancelled)."""
        ...

    def approvals_reopened(self, run_id: str, keys: Sequence[str], by: str) -> None:
        """A retry by `by` opened these closed approvals again."""
        ...

    def open_approvals(self, run_id: str) -> list[RequestApproval]:
        """Return the run's open approvals, in the order they were asked for."""
        ...

    def swept(self, now: dt.datetime) -> None:
        """The sweeper ran at `now` (requests may have passed their due time)."""
        ...


_observers: dict[str, RunObserver] = {}


def register(name: str, observer: RunObserver) -> None:
    """Register an observer under a name (registering the name again replaces it)."""
    _observers[name] = observer


def unregister(name: str) -> RunObserver | None:
    """Take an observer off the hook; return it (None when none had that name)."""
    return _observers.pop(name, None)


def approvals_requested(run_id: str, requests: Sequence[RequestApproval]) -> None:
    """Tell every observer that a step asked for these approvals."""
    for observer in list(_observers.values()):
        observer.approvals_requested(run_id, requests)


def approvals_closed(run_id: str, reasons: Mapping[str, str]) -> None:
    """Tell every observer that a step closed these approvals."""
    for observer in list(_observers.values()):
        observer.approvals_closed(run_id, reasons)


def approvals_reopened(run_id: str, keys: Sequence[str], by: str) -> None:
    """Tell every observer that a retry opened these approvals again."""
    for observer in list(_observers.values()):
        observer.approvals_reopened(run_id, keys, by)


def open_approvals(run_id: str) -> list[RequestApproval]:
    """Return the run's open approvals as the observers hold them."""
    return [found for observer in list(_observers.values())
            for found in observer.open_approvals(run_id)]  # fmt: skip


def swept(now: dt.datetime) -> None:
    """Tell every observer that the sweeper ran."""
    for observer in list(_observers.values()):
        observer.swept(now)
