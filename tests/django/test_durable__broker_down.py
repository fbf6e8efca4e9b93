"""A broker that is down fails the message, never the request that recorded the event.

`make chaos` found it: during a Redis restart `POST /api/runs/` stored the run, then
answered 500 because the after-commit publish raised, and a client that retried started
the run a second time.
"""

import datetime as dt
import logging

import pytest
from django.test import Client
from django.utils import timezone
from kombu.exceptions import OperationalError

from braid.celery import app
from engine.models import PendingEvent, Run
from engine.runtime import step, sweep
from tests.django.fixture_types import ClientFor, DemoUsers

pytestmark = pytest.mark.django_db(transaction=True)


# The task the runtime sends through (engine.tasks.CeleryTransport): Braid's app's, whichever
# app is current in this thread (`engine.tasks.advance_run` is the current app's).
ADVANCE_RUN = app.tasks["braid.advance_run"]


def broker_down(*args: object, **kwargs: object) -> None:
    raise OperationalError("Error 111 connecting to 127.0.0.1:6390. Connection refused.")


def test_a_start_while_the_broker_is_down_answers_201_and_the_sweeper_starts_it(
    demo: DemoUsers,
    client_for: ClientFor,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    monkeypatch.setattr(ADVANCE_RUN, "delay", broker_down)
    client: Client = client_for("admin")

    response = client.post("/api/runs/", {"flow": "staged-gathers", "input": {}},
                           content_type="application/json")  # fmt: skip

    assert response.status_code == 201, response.content
    run = Run.objects.get()
    assert str(run.pk) == response.json()["id"]
    assert list(PendingEvent.objects.filter(run=run).values_list("key", "applied_at")) == [
        ("start", None)
    ]
    sent: list[str] = []
    monkeypatch.setattr(ADVANCE_RUN, "delay", sent.append)
    PendingEvent.objects.update(created_at=timezone.now() - dt.timedelta(minutes=1))
    with caplog.at_level(logging.WARNING, logger="engine.runtime.sweep"):
        assert sweep.sweep()["runs"] == 1
    assert sent == [str(run.pk)]
    # The sweeper says which run it advanced: a lost wake-up shows in the log.
    assert [r.getMessage() for r in caplog.records if r.name == "engine.runtime.sweep"] == [
        f"sweep: advancing 1 run(s) whose events waited over 10 s: {run.pk}"
    ]
    assert step.advance(str(run.pk)) == 1
    run.refresh_from_db()
    assert run.status == "running" and run.snapshot["status"] == "running"
