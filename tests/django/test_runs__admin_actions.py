"""An admin's cancel and retry: one run (with a bounded reason) or many (POST /api/runs/bulk/)."""

import json
import uuid
from typing import Any

import pytest
from django.test import Client

from designer import services as flows
from engine.models import Run
from monitor import reading
from tests.django.durable_driver import drain
from tests.django.fixture_types import ClientFor, DemoUsers
from tests.django.test_durable__retry import FLOW as FAILING_ONCE

INVOICE = {"invoice": {"id": "I-1", "amount": 2, "vendor": "V"}}


def post(client: Client, url: str, body: object) -> tuple[int, dict[str, Any]]:
    """POST JSON; return the status and the JSON answer."""
    response = client.post(url, json.dumps(body), content_type="application/json")
    return response.status_code, response.json()


def started(client: Client, flow: str, input_value: object = None) -> Run:
    """Start a run of a demo flow and advance it until it waits or ends."""
    status, body = post(client, "/api/runs/", {"flow": flow, "input": input_value or {}})
    assert status == 201, body
    return drain(Run.objects.get(pk=body["id"]))


@pytest.mark.django_db
def test_a_cancel_reason_over_500_characters_is_a_400_naming_the_field_and_nothing_changes(
    demo: DemoUsers, client_for: ClientFor
) -> None:
    admin = client_for("admin")
    run = started(admin, "invoice-sign-off", INVOICE)
    status, body = post(admin, f"/api/runs/{run.pk}/cancel/", {"reason": "x" * 501})
    message = "a reason is at most 500 characters; shorten it"
    assert (status, body) == (
        400,
        {"code": "run.invalid", "detail": f"reason: {message}", "fields": {"reason": message}},
    )
    assert drain(run).status == "waiting"
    assert post(admin, f"/api/runs/{run.pk}/cancel/", {"reason": "y" * 500})[0] == 202
    assert drain(run).error == "cancelled by admin: " + "y" * 500


@pytest.mark.django_db
def test_the_cancel_reason_and_its_clock_time_reach_the_monitors_reasons(
    demo: DemoUsers, client_for: ClientFor
) -> None:
    admin = client_for("admin")
    run = started(admin, "invoice-sign-off", INVOICE)
    assert post(admin, f"/api/runs/{run.pk}/cancel/", {"reason": "duplicate invoice"})[0] == 202
    run = drain(run)
    cancels = run.trace_events.filter(event="run.cancelled").order_by("seq")
    at = cancels.values_list("at", flat=True)[0]  # RFC 3339, e.g. 2026-12-06T14:02:…Z
    clock = f"{at[11:16]} UTC"
    tree = admin.get(f"/api/runs/{run.pk}/tree/").json()
    assert (tree["colors"]["fin"], tree["reasons"]["fin"]) == (
        "cancelled",
        f"Cancelled by admin at {clock}: duplicate invoice (while waiting for finance)",
    )
    assert reading.cancelled_clock(str(run.pk)) == clock
    branch = admin.get(f"/api/runs/{run.pk}/execution/", {"id": "root:1:split.finance:1"})
    assert branch.json()["reasons"]["fin"] == tree["reasons"]["fin"]


@pytest.mark.django_db
def test_cancelling_a_finished_run_and_retrying_a_run_that_did_not_fail_are_409s(
    demo: DemoUsers, client_for: ClientFor
) -> None:
    admin = client_for("admin")
    done = started(admin, "b-and-d-or-e", {"urgent": True})
    assert done.status == "completed"
    assert post(admin, f"/api/runs/{done.pk}/cancel/", {}) == (
        409, {"code": "run.finished", "detail": "the run is completed: nothing to cancel"},
    )  # fmt: skip
    assert post(admin, f"/api/runs/{done.pk}/retry/", {}) == (
        409,
        {"code": "run.not_retryable",
         "detail": "only a run that an action's failure ended can be retried"},
    )  # fmt: skip


@pytest.mark.django_db
def test_a_bulk_cancel_answers_each_run_in_the_order_asked(
    demo: DemoUsers, client_for: ClientFor
) -> None:
    admin, analyst = client_for("admin"), client_for("analyst")
    waiting = started(admin, "invoice-sign-off", INVOICE)
    other = started(analyst, "invoice-sign-off", INVOICE)
    done = started(admin, "b-and-d-or-e", {"urgent": True})
    missing = str(uuid.uuid4())
    ids = [str(waiting.pk), str(done.pk), missing, str(other.pk)]
    status, body = post(admin, "/api/runs/bulk/", {"action": "cancel", "ids": ids,
                                                   "reason": "month closed"})  # fmt: skip
    assert status == 200
    assert body == {
        "action": "cancel", "total": 4, "done": 2, "refused": 2,
        "results": [
            {"id": ids[0], "ok": True, "code": "", "error": ""},
            {"id": ids[1], "ok": False, "code": "run.finished",
             "error": "the run is completed: nothing to cancel"},
            {"id": missing, "ok": False, "code": "not_found",
             "error": "no such run, or not one you may see"},
            {"id": ids[3], "ok": True, "code": "", "error": ""},
        ],
    }  # fmt: skip
    assert [(r.status, r.error) for r in (drain(waiting), drain(other))] == [
        ("cancelled", "cancelled by admin: month closed")
    ] * 2


@pytest.mark.django_db
def test_a_bulk_retry_retries_the_failed_runs_and_refuses_the_others_with_why(
    demo: DemoUsers, client_for: ClientFor
) -> None:
    flows.import_graph(demo["analyst"], FAILING_ONCE, "retry-me", True)
    admin = client_for("admin")
    failed = started(admin, "retry-me")
    waiting = started(admin, "invoice-sign-off", INVOICE)
    assert (failed.status, waiting.status) == ("failed", "waiting")
    ids = [str(waiting.pk), str(failed.pk)]
    status, body = post(admin, "/api/runs/bulk/", {"action": "retry", "ids": ids})
    assert (status, body["done"], body["refused"]) == (200, 1, 1)
    assert body["results"] == [
        {"id": ids[0], "ok": False, "code": "run.not_retryable",
         "error": "only a run that an action's failure ended can be retried (the run is waiting)"},
        {"id": ids[1], "ok": True, "code": "", "error": ""},
    ]  # fmt: skip
    assert drain(failed).status == "completed"


@pytest.mark.django_db
def test_only_admins_may_act_in_bulk(demo: DemoUsers, client_for: ClientFor) -> None:
    analyst = client_for("analyst")
    run = started(analyst, "invoice-sign-off", INVOICE)
    for user in ("analyst", "finance"):
        status, body = post(client_for(user), "/api/runs/bulk/",
                            {"action": "cancel", "ids": [str(run.pk)]})  # fmt: skip
        assert (status, body["code"]) == (403, "permission_denied")
    assert drain(run).status == "waiting"


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("body", "fields"),
    [
        ({"action": "cancel", "ids": [str(uuid.uuid4()) for _ in range(101)]},
         {"ids": "at most 100 runs at once; select fewer"}),
        ({"action": "cancel", "ids": []}, {"ids": "select at least one run"}),
        ({"action": "cancel", "ids": ["00000000-0000-0000-0000-000000000001"] * 2},
         {"ids": "a run is named twice"}),
        ({"action": "cancel", "ids": ["nope"]}, {"ids": "item 0: Must be a valid UUID."}),
        ({"action": "delete", "ids": [str(uuid.uuid4())]},
         {"action": '"delete" is not a valid choice.'}),
        ({"action": "cancel", "ids": [str(uuid.uuid4())], "reason": "r" * 501},
         {"reason": "a reason is at most 500 characters; shorten it"}),
    ],
)  # fmt: skip
def test_a_malformed_bulk_request_is_a_400_naming_each_field_and_touches_no_run(
    demo: DemoUsers, client_for: ClientFor, body: dict[str, object], fields: dict[str, str]
) -> None:
    admin = client_for("admin")
    run = started(admin, "invoice-sign-off", INVOICE)
    status, answer = post(admin, "/api/runs/bulk/", body)
    assert (status, answer["code"], answer["fields"]) == (400, "run.invalid", fields)
    assert drain(run).status == "waiting"


@pytest.mark.django_db
def test_one_run_spelled_twice_is_acted_on_once_and_the_second_spelling_refused(
    demo: DemoUsers, client_for: ClientFor
) -> None:
    admin = client_for("admin")
    run = started(admin, "invoice-sign-off", INVOICE)
    ids = [str(run.pk), str(run.pk).upper()]
    status, body = post(admin, "/api/runs/bulk/", {"action": "cancel", "ids": ids})
    assert (status, body["done"], body["refused"]) == (200, 1, 1)
    assert body["results"] == [
        {"id": str(run.pk), "ok": True, "code": "", "error": ""},
        {"id": str(run.pk), "ok": False, "code": "run.repeated",
         "error": "this run is named earlier in the list"},
    ]  # fmt: skip
    assert drain(run).status == "cancelled"
