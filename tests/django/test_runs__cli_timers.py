"""A timer still set when `braid run` returns fires on time, under the durable sweeper."""

import datetime as dt
import io
import json
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.utils import timezone

from approvals.models import ApprovalRequest
from engine.core.runtime import ManualClock
from engine.models import PendingEvent, Run, Timer
from engine.runtime import clock, step, sweep
from tests.django.fixture_types import DemoUsers

DEMO = Path(__file__).resolve().parents[2] / "designer" / "demo_flows"
FLOW = str(DEMO / "approval-or-timeout.json")
INPUT = json.dumps({"item": "desk", "hours": 1})


def braid_json(*args: str) -> dict[str, Any]:
    """Run a braid command with --json; return its decoded output."""
    out = io.StringIO()
    call_command("braid", *args, "--json", stdout=out)
    decoded: dict[str, Any] = json.loads(out.getvalue())
    return decoded


def start_waiting() -> tuple[dict[str, Any], Timer]:
    """`braid run` the race with --max-wait 0: it returns waiting, its timer handed over."""
    before = timezone.now()
    report = braid_json("run", FLOW, "--input", INPUT, "--max-wait", "0")
    assert report["status"] == "waiting"
    assert (report["colors"]["approve"], report["colors"]["timer"]) == ("waiting", "waiting")
    (timer,) = Timer.objects.filter(run_id=report["run"])
    assert timer.key.endswith("|timer")
    assert 3600 <= (timer.due_at - before).total_seconds() < 3610
    return report, timer


@pytest.mark.django_db
def test_a_timer_left_by_braid_run_fires_once_after_its_due_time_and_the_run_escalates(
    demo_users: DemoUsers,
) -> None:
    report, timer = start_waiting()
    run = Run.objects.get(pk=report["run"])
    assert run.runtime == "durable"  # handed over, so the sweeper owns the timer now

    assert sweep.sweep()["timers"] == 0  # not due yet
    with clock.use_clock(ManualClock(timer.due_at - dt.timedelta(seconds=1))) as later:
        assert sweep.sweep()["timers"] == 0
        later.sleep(2)
        assert sweep.sweep()["timers"] == 1
        assert sweep.sweep()["timers"] == 0  # exactly once
    fired = PendingEvent.objects.filter(run=run, key=timer.key)
    assert fired.count() == 1
    assert fired.get().event["kind"] == "timer.fired"

    step.advance(str(run.pk))

    shown = braid_json("show", str(run.pk))
    assert shown["status"] == "completed"
    assert shown["state"] == {"outcome": "escalated: no decision in time", "decision": None}
    assert shown["nodes"]["deadline"]["result"] == "timer"
    assert (shown["colors"]["escalate"], shown["colors"]["approve"]) == ("completed", "cancelled")
    assert not Timer.objects.filter(run=run).exists()
    assert ApprovalRequest.objects.get(run=run).status != "open"


@pytest.mark.django_db
def test_a_decision_before_the_timer_wins_and_the_timer_row_goes(demo_users: DemoUsers) -> None:
    report, timer = start_waiting()

    decided = braid_json("decide", report["run"], "approve", "--user", "finance", "approve")

    assert decided["status"] == "completed"
    assert decided["state"] == {"outcome": "decided: approved", "decision": "approved"}
    assert (decided["colors"]["decided"], decided["colors"]["timer"]) == ("completed", "cancelled")
    assert not Timer.objects.filter(run_id=report["run"]).exists()
    with clock.use_clock(ManualClock(timer.due_at + dt.timedelta(seconds=1))):
        assert sweep.sweep()["timers"] == 0


@pytest.mark.django_db
def test_a_run_waiting_on_people_only_stays_in_process(demo_users: DemoUsers) -> None:
    invoice = {"invoice": {"id": "I-1", "amount": 300, "vendor": "Acme"}}
    report = braid_json("run", str(DEMO / "invoice-sign-off.json"), "--input", json.dumps(invoice))
    assert report["status"] == "waiting"
    assert Run.objects.get(pk=report["run"]).runtime == "in_process"
    assert not Timer.objects.filter(run_id=report["run"]).exists()


@pytest.mark.django_db
def test_the_text_report_says_which_timer_the_sweeper_fires_and_when(demo_users: DemoUsers) -> None:
    out = io.StringIO()
    call_command("braid", "run", FLOW, "--input", INPUT, "--max-wait", "0", stdout=out)
    (timer,) = Timer.objects.all()
    assert out.getvalue().splitlines()[-1] == (
        f"timer   timer fires at {timer.due_at.isoformat()} under the sweeper "
        "(make run, or the scaled workers' beat)"
    )
