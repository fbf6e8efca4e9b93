"""The sweeper: due timers fire, lost action messages are re-sent, stuck runs advance."""

import datetime as dt
import io
import logging

import pytest
from django.core.management import call_command
from django.utils import timezone
from pytest_django import Settings

from engine.models import Dispatch, Run, Timer
from engine.runtime import runs, step, sweep
from runs import services
from tests.django.durable_driver import drain
from tests.django.fixture_types import DemoUsers


def start(slug: str, input_value: object) -> Run:
    """Start a durable run of a demo flow and apply its Start event."""
    call_command("braid", "demo", stdout=io.StringIO())
    version = services.latest_version(slug)
    run = runs.create_run(services.resolve_graphs(version.graph), slug, input_value, version)
    step.advance(str(run.pk))
    return run


@pytest.mark.django_db
def test_a_due_timer_fires_and_wins_its_race(demo_users: DemoUsers) -> None:
    run = start("approval-or-timeout", {"item": "desk", "hours": 1})
    assert Timer.objects.filter(run=run).count() == 1
    assert sweep.sweep() == {"timers": 0, "actions": 0, "runs": 0}  # not due yet
    Timer.objects.filter(run=run).update(due_at=timezone.now() - dt.timedelta(seconds=1))
    assert sweep.sweep()["timers"] == 1
    step.advance(str(run.pk))
    run.refresh_from_db()
    assert (run.status, run.state["outcome"]) == ("completed", "escalated: no decision in time")
    assert Timer.objects.filter(run=run).count() == 0


@pytest.mark.django_db
def test_an_action_message_lost_after_commit_is_sent_again_two_sweeps_later(
    demo_users: DemoUsers, settings: Settings, caplog: pytest.LogCaptureFixture
) -> None:
    settings.BRAID_SWEEP_INTERVAL_S = 5
    run = start("staged-gathers", {})
    (dispatch,) = Dispatch.objects.filter(run=run)
    # Inside the test's transaction the after-commit publish never runs: the message is
    # exactly as lost as one whose worker died between commit and publish.
    assert (dispatch.published_at, dispatch.completed_at) == (None, None)
    assert sweep.sweep(stale_after_s=3600)["actions"] == 0  # its publisher may be at it
    Dispatch.objects.filter(pk=dispatch.pk).update(
        created_at=timezone.now() - dt.timedelta(seconds=11)
    )
    with caplog.at_level(logging.WARNING, logger="engine.runtime.sweep"):
        assert sweep.sweep(stale_after_s=3600)["actions"] == 1
    assert [r.getMessage() for r in caplog.records if r.name == "engine.runtime.sweep"] == [
        f"sweep: re-sending 1 lost action(s): dispatches {dispatch.pk}"
    ]
    assert Dispatch.objects.get(pk=dispatch.pk).published_at is not None
    run = drain(run)
    assert (run.status, run.state) == (
        "completed",
        {"log": ["a", "b", "d after 2", "c"], "count": 3},
    )
