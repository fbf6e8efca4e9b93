"""/healthz reports the database, broker, channel layer and workers, plus versions."""

import threading
from collections.abc import Iterator
from importlib.metadata import version

import pytest
from celery.worker import WorkController
from django.db import connection
from django.test import Client

from braid import celery as braid_celery
from braid.worker import start_embedded_worker, stop_embedded_worker
from tests.django.fixture_types import ClientFor


@pytest.fixture
def embedded_worker(transactional_db: None) -> Iterator[WorkController]:
    """Run the embedded Celery worker thread for the test."""
    worker = start_embedded_worker(concurrency=2)
    yield worker
    stop_embedded_worker()


def test_healthz_is_ok_in_embedded_mode_with_the_worker_thread(
    client_for: ClientFor, embedded_worker: WorkController
) -> None:
    response = client_for("admin").get("/healthz")
    body = response.json()
    assert response.status_code == 200
    assert body["ok"] is True
    assert body["mode"] == "embedded"
    assert body["checks"] == {
        "database": {"ok": True, "detail": connection.vendor},
        "broker": {"ok": True, "detail": "memory"},
        "channel_layer": {"ok": True, "detail": "InMemoryChannelLayer"},
        "workers": {"ok": True, "detail": "embedded worker thread (2 threads)"},
    }
    assert body["versions"]["django"] == version("django")
    assert body["versions"]["celery"] == version("celery")


def test_healthz_is_503_and_names_the_cause_when_the_worker_is_not_running(
    client_for: ClientFor,
) -> None:
    response = client_for("admin").get("/healthz")
    assert response.status_code == 503
    assert response.json()["ok"] is False
    assert response.json()["checks"]["workers"] == {
        "ok": False,
        "error": "RuntimeError: the embedded worker thread is not running",
    }


def test_healthz_answers_anyone_without_login_and_without_details(
    embedded_worker: WorkController, db: None
) -> None:
    response = Client().get("/healthz")
    assert response.status_code == 200
    assert response.json() == {
        "ok": True,
        "checks": {
            "database": {"ok": True},
            "broker": {"ok": True},
            "channel_layer": {"ok": True},
            "workers": {"ok": True},
        },
    }


seen: list[int] = []
done = threading.Event()


# Registered at import, before any worker starts: a worker knows the tasks it started with.
@braid_celery.app.task(name="tests.record")
def record(value: int) -> None:
    """Record the value the worker received."""
    seen.append(value)
    done.set()


def test_the_embedded_worker_runs_a_task_published_in_this_process(
    embedded_worker: WorkController,
) -> None:
    record.delay(41)
    assert done.wait(timeout=10)
    assert seen == [41]
