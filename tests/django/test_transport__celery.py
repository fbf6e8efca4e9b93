"""The runtime's messages leave through Braid's Celery app from any thread.

Celery's shared tasks are the tasks of the app current in the calling thread; a thread
nobody made Braid's app current in gets Celery's default app, which in a process that also
uses another Celery app is that one (the peers benchmark's client imports one: its runs'
starts from 8 threads went to that app's queue, and each run waited for the sweeper).
"""

import threading
from collections.abc import Iterator

import pytest
from celery import Celery, _state

from braid.celery import app as braid_app
from engine.runtime.transport import transport

SENT = ["braid.advance_run", "braid.run_actions", "braid.fire_timer"]


@pytest.fixture
def other_default() -> Iterator[Celery]:
    """Another Celery app of this process, made the default for every thread."""
    other = Celery("other", broker="memory://", set_as_current=False)
    before = vars(_state)["default_app"]  # not in celery-types' stub
    other.set_default()
    yield other
    _state.set_default_app(before)


def send_all() -> None:
    """Send one message of each kind the runtime sends."""
    transport().send_advance("00000000-0000-0000-0000-000000000001")
    transport().send_actions([1, 2])
    transport().send_timer("00000000-0000-0000-0000-000000000001", "wait-1", 30.0)


def test_a_thread_without_braids_app_current_sends_through_braids_app(
    other_default: Celery, monkeypatch: pytest.MonkeyPatch
) -> None:
    sent: dict[str, list[str]] = {"braid": [], "other": []}
    for name, app in (("braid", braid_app), ("other", other_default)):
        into = sent[name]
        monkeypatch.setattr(app, "send_task", lambda task, *_, _into=into, **__: _into.append(task))
    caller = threading.Thread(target=send_all)
    caller.start()
    caller.join()
    send_all()  # and the thread that set Django up
    assert sent == {"braid": SENT * 2, "other": []}
