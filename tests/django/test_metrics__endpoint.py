"""/metrics: off unless configured, the bearer token, and exact figures after real runs."""

import datetime as dt
import json

import pytest
from django.test import Client
from prometheus_client.openmetrics.parser import (
    text_string_to_metric_families as openmetrics_families,
)
from pytest_django import Settings

from approvals.models import ApprovalRequest
from designer import services as flows
from engine.models import Dispatch, Run, Timer, WorkerLease
from engine.runtime import clock, runs, step, sweep
from runs import services
from tests.django.durable_driver import drain, stopped_clock
from tests.django.fixture_types import ClientFor, DemoUsers
from tests.django.graphs import ALWAYS_FAILS, CHAIN
from tests.django.metric_samples import TOKEN, grown, parse, scrape, value


@pytest.fixture
def token(settings: Settings) -> str:
    """Turn /metrics on with the tests' token."""
    settings.BRAID_METRICS_TOKEN = TOKEN
    settings.BRAID_METRICS_OPEN = False
    return TOKEN


def start(client: Client, flow: str, input_value: object = None) -> Run:
    """Start a run through the API (not advanced yet)."""
    body = {"flow": flow, "input": input_value or {}}
    response = client.post("/api/runs/", json.dumps(body), content_type="application/json")
    assert response.status_code == 201, response.content
    return Run.objects.get(pk=response.json()["id"])


@pytest.mark.django_db
def test_metrics_are_not_found_unless_a_token_or_the_open_flag_is_set(
    settings: Settings,
) -> None:
    settings.BRAID_METRICS_TOKEN = ""
    settings.BRAID_METRICS_OPEN = False
    assert Client().get("/metrics").status_code == 404
    assert Client().get("/metrics", HTTP_AUTHORIZATION=f"Bearer {TOKEN}").status_code == 404
    settings.BRAID_METRICS_OPEN = True
    response = Client().get("/metrics")
    assert response.status_code == 200
    assert value(parse(response.content.decode()), "braid_database_up") == 1.0


@pytest.mark.django_db
def test_a_scrape_without_the_token_or_with_another_one_is_refused_with_401(token: str) -> None:
    refused: list[dict[str, str]] = [
        {},
        {"Authorization": "Bearer wrong-token-0123456789"},
        {"Authorization": f"Basic {token}"},
        {"Authorization": f"Bearer {token}x"},
    ]
    for header in refused:
        response = Client().get("/metrics", headers=header)
        assert response.status_code == 401, header
        assert response.json() == {
            "code": "not_authenticated",
            "detail": "send Authorization: Bearer <BRAID_METRICS_TOKEN>",
        }
        assert response["WWW-Authenticate"] == 'Bearer realm="braid-metrics"'
    assert Client().post("/metrics", HTTP_AUTHORIZATION=f"Bearer {token}").status_code == 405
    assert value(scrape(token), "braid_database_up") == 1.0


@pytest.mark.django_db
def test_runs_steps_and_actions_are_counted_exactly_after_a_driven_run(
    demo: DemoUsers, client_for: ClientFor, token: str
) -> None:
    flows.import_graph(demo["analyst"], CHAIN, "two-noops", True)
    before = scrape()
    run = drain(start(client_for("analyst"), "two-noops"))
    assert run.status == "completed"
    drain(start(client_for("analyst"), "b-and-d-or-e", {"urgent": True}))
    waiting = drain(start(client_for("analyst"), "invoice-sign-off",
                          {"invoice": {"id": "I-1", "amount": 300, "vendor": "Acme"}}))  # fmt: skip
    assert waiting.status == "waiting"
    after = scrape()
    assert value(after, "braid_runs_started_total", flow="two-noops") == 1.0
    assert value(after, "braid_runs_started_total", flow="invoice-sign-off") == 1.0
    assert value(after, "braid_runs", flow="two-noops", status="completed") == 1.0
    assert value(after, "braid_runs", flow="two-noops", status="running") == 0.0
    assert value(after, "braid_runs", flow="invoice-sign-off", status="waiting") == 1.0
    assert value(after, "braid_runs_finished_total", flow="two-noops", status="completed") == 1.0
    assert value(after, "braid_runs_finished_total", flow="b-and-d-or-e", status="completed") == 1
    assert value(after, "braid_runs_finished_total", flow="invoice-sign-off",
                 status="completed") == 0.0  # fmt: skip
    # The chain: its start, then one step per noop's result; one step each for the others.
    assert grown(before, after, "braid_step_events_total") == 5.0
    assert grown(before, after, "braid_step_seconds_count") == 5.0
    assert grown(before, after, "braid_action_seconds_count", action="noop",
                 outcome="completed") == 2.0  # fmt: skip
    assert value(after, "braid_approvals_open", group="finance") == 1.0
    assert value(after, "braid_approvals_open", group="legal") == 1.0
    for state in ("unsent", "queued", "running"):
        assert value(after, "braid_dispatch_backlog", state=state) == 0.0
    assert value(after, "braid_inbox_backlog") == 0.0


@pytest.mark.django_db
def test_each_failure_counts_once_and_a_retried_run_that_fails_again_twice(
    demo_users: DemoUsers, client_for: ClientFor, token: str
) -> None:
    flows.import_graph(demo_users["analyst"], ALWAYS_FAILS, "always-fails", True)
    admin = client_for("admin")
    before = scrape()
    run = drain(start(admin, "always-fails"))
    assert run.status == "failed"
    once = scrape()
    assert value(once, "braid_runs_finished_total", flow="always-fails", status="failed") == 1.0
    assert value(once, "braid_runs", flow="always-fails", status="failed") == 1.0
    assert grown(before, once, "braid_action_seconds_count", action="fail_sometimes",
                 outcome="failed") == 1.0  # fmt: skip
    assert admin.post(f"/api/runs/{run.pk}/retry/").status_code == 202
    retried = scrape()  # a retried run is running again; its failure stays counted
    assert value(retried, "braid_runs", flow="always-fails", status="failed") == 0.0
    assert value(retried, "braid_runs", flow="always-fails", status="running") == 1.0
    assert value(retried, "braid_runs_finished_total", flow="always-fails", status="failed") == 1
    assert drain(run).status == "failed"
    twice = scrape()
    assert value(twice, "braid_runs_finished_total", flow="always-fails", status="failed") == 2.0
    assert value(twice, "braid_runs", flow="always-fails", status="failed") == 1.0
    assert value(twice, "braid_runs_started_total", flow="always-fails") == 1.0


@pytest.mark.django_db
def test_a_cancelled_run_counts_as_cancelled_and_a_file_run_under_its_own_flow_label(
    demo: DemoUsers, client_for: ClientFor, token: str
) -> None:
    run = drain(start(client_for("admin"), "approval-or-timeout", {"item": "desk", "hours": 1}))
    runs.cancel(run, "admin", "not needed")
    assert drain(run).status == "cancelled"
    version = services.latest_version("a-risk-score")
    file_run = runs.create_run(
        services.resolve_graphs(version.graph), "score.json", {"amount": 5, "new_vendor": False}
    )
    drain(file_run)
    found = scrape()
    assert value(found, "braid_runs_finished_total", flow="approval-or-timeout",
                 status="cancelled") == 1.0  # fmt: skip
    assert value(found, "braid_runs", flow="(file)", status="completed") == 1.0
    assert value(found, "braid_runs_started_total", flow="(file)") == 1.0


@pytest.mark.django_db
def test_timer_lag_approvals_by_group_and_the_sweep_are_exact_on_a_stopped_clock(
    demo: DemoUsers, client_for: ClientFor, token: str
) -> None:
    with stopped_clock() as stopped:
        run = drain(start(client_for("analyst"), "approval-or-timeout",
                          {"item": "desk", "hours": 1}))  # fmt: skip
        created = clock.now() - dt.timedelta(seconds=10)
        ApprovalRequest.objects.filter(run=run).update(created_at=created, due_at=None)
        found = scrape()
        assert value(found, "braid_timers", state="pending") == 1.0
        assert value(found, "braid_timer_lag_seconds") == 0.0
        assert value(found, "braid_approvals_open", group="finance") == 1.0
        assert value(found, "braid_approvals_overdue", group="finance") == 0.0
        assert value(found, "braid_approvals_oldest_open_seconds", group="finance") == 10.0
        stopped.sleep(3600 + 42)
        ApprovalRequest.objects.filter(run=run).update(due_at=clock.now())
        late = scrape()
        assert value(late, "braid_timers", state="due") == 1.0
        assert value(late, "braid_timer_lag_seconds") == 42.0
        assert value(late, "braid_approvals_overdue", group="finance") == 1.0
        assert value(late, "braid_approvals_oldest_open_seconds", group="finance") == 3652.0
        # The fired timer's event was recorded at the wall clock's now, an hour "ago".
        assert sweep.sweep() == {"timers": 1, "actions": 0, "runs": 1}
        swept = scrape()
    assert value(swept, "braid_timer_lag_seconds") == 0.0
    assert Timer.objects.filter(run=run).count() == 0
    assert grown(late, swept, "braid_sweeps_total", outcome="ok") == 1.0
    assert grown(late, swept, "braid_sweep_found_total", kind="timers") == 1.0
    assert grown(late, swept, "braid_sweep_found_total", kind="actions") == 0.0
    assert grown(late, swept, "braid_sweep_found_total", kind="runs") == 1.0


@pytest.mark.django_db
def test_the_dispatch_backlog_follows_an_action_from_recorded_to_sent_to_claimed(
    demo: DemoUsers, client_for: ClientFor, token: str
) -> None:
    with stopped_clock() as stopped:
        run = start(client_for("analyst"), "staged-gathers")
        step.advance(str(run.pk))
        # Inside the test's transaction the after-commit publish never runs: still unsent.
        (dispatch,) = Dispatch.objects.filter(run=run)
        Dispatch.objects.filter(pk=dispatch.pk).update(created_at=clock.now())
        stopped.sleep(7)
        unsent = scrape()
        assert value(unsent, "braid_dispatch_backlog", state="unsent") == 1.0
        assert value(unsent, "braid_dispatch_oldest_unclaimed_seconds") == 7.0
        Dispatch.objects.filter(pk=dispatch.pk).update(published_at=clock.now())
        assert value(scrape(), "braid_dispatch_backlog", state="queued") == 1.0
        Dispatch.objects.filter(pk=dispatch.pk).update(claimed_by="h:1:x", claimed_at=clock.now())
        claimed = scrape()
    assert value(claimed, "braid_dispatch_backlog", state="running") == 1.0
    assert value(claimed, "braid_dispatch_backlog", state="queued") == 0.0
    assert value(claimed, "braid_dispatch_oldest_unclaimed_seconds") == 0.0


@pytest.mark.django_db
def test_worker_leases_count_alive_and_dead_by_their_last_beat(
    token: str, settings: Settings
) -> None:
    settings.BRAID_LEASE_DEAD_S = 8
    with stopped_clock():
        now = clock.now()
        WorkerLease.objects.create(name="h:1:a", beat_at=now - dt.timedelta(seconds=2))
        WorkerLease.objects.create(name="h:2:b", beat_at=now - dt.timedelta(seconds=9))
        WorkerLease.objects.create(name="h:3:c", beat_at=now - dt.timedelta(minutes=30))
        found = scrape()
    assert value(found, "braid_worker_leases", state="alive") == 1.0
    assert value(found, "braid_worker_leases", state="dead") == 2.0


@pytest.mark.django_db
def test_a_scraper_asking_for_openmetrics_gets_it(
    demo: DemoUsers, client_for: ClientFor, token: str
) -> None:
    drain(start(client_for("analyst"), "b-and-d-or-e", {"urgent": True}))
    accept = "application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5"
    response = Client().get("/metrics", headers={"Authorization": f"Bearer {token}",
                                                 "Accept": accept})  # fmt: skip
    assert response.status_code == 200
    assert response["Content-Type"].startswith("application/openmetrics-text; version=1.0.0")
    families = {f.name: f for f in openmetrics_families(response.content.decode())}
    (started,) = families["braid_runs_started"].samples
    assert (started.name, started.labels, started.value) == (
        "braid_runs_started_total", {"flow": "b-and-d-or-e"}, 1.0
    )  # fmt: skip
    assert families["braid_runs_finished"].type == "counter"
    assert families["braid_step_seconds"].type == "histogram"
