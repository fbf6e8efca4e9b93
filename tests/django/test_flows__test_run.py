"""The designer's test run: the draft runs in-process on sample input; nothing is stored."""

import json

import pytest
from django.test import Client

from engine.models import Run
from tests.django.fixture_types import ClientFor, DemoUsers, TestResponse

INVOICE = {"invoice": {"id": "I-1", "amount": 5, "vendor": "V"}}


def post(client: Client, slug: str, body: object) -> TestResponse:
    return client.post(f"/api/flows/{slug}/test-run/", json.dumps(body),
                       content_type="application/json")  # fmt: skip


@pytest.mark.django_db
def test_a_test_run_colors_the_draft_and_stores_no_run(
    demo: DemoUsers, client_for: ClientFor
) -> None:
    response = post(client_for("analyst"), "b-and-d-or-e", {"input": {"urgent": True}})
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["status"] == "completed"
    assert body["colors"]["e"] == "skipped"
    assert body["reasons"]["e"] == "Not taken: `check` chose `true`"
    assert body["state"] == {"log": ["b", "d: urgent path"]}
    assert Run.objects.count() == 0


@pytest.mark.django_db
def test_a_test_run_takes_decisions_in_order_and_reports_what_waits(
    demo: DemoUsers, client_for: ClientFor
) -> None:
    client = client_for("analyst")
    waiting = post(client, "invoice-sign-off", {"input": INVOICE}).json()
    assert (waiting["status"], waiting["waiting_on"]) == ("waiting", ["fin", "leg"])
    assert waiting["reasons"]["fin"] == "Waiting for a decision by finance"
    decisions = [{"node": "fin", "decision": "approve"}, {"node": "leg", "decision": "reject"}]
    decided = post(client, "invoice-sign-off", {"input": INVOICE, "decisions": decisions}).json()
    assert decided["status"] == "failed"
    assert decided["colors"]["fin_ok"] == "completed"
    assert decided["colors"]["leg_no"] == "failed"
    assert decided["refused"] == []


@pytest.mark.django_db
def test_a_posted_graph_runs_instead_of_the_draft_and_an_invalid_one_is_refused(
    demo: DemoUsers, client_for: ClientFor
) -> None:
    client = client_for("analyst")
    graph = {"format": "braid.graph/1", "name": "tiny",
             "nodes": [{"id": "start", "type": "start"}, {"id": "done", "type": "end"}],
             "edges": [{"source": "start", "target": "done"}]}  # fmt: skip
    ran = post(client, "b-and-d-or-e", {"graph": graph}).json()
    assert ran["colors"] == {"start": "completed", "done": "completed"}
    broken = post(client, "b-and-d-or-e", {"graph": {**graph, "edges": []}})
    assert broken.status_code == 400
    assert broken.json()["code"] == "run.refused"
    assert broken.json()["errors"]
    assert post(client, "b-and-d-or-e", {"decisions": [{"node": "x"}]}).status_code == 400
    assert post(client_for("finance"), "b-and-d-or-e", {}).status_code == 403


@pytest.mark.django_db
def test_a_test_run_refuses_an_input_its_schema_refuses(
    demo: DemoUsers, client_for: ClientFor
) -> None:
    bad = {"invoice": {"id": "I-1", "amount": "lots", "vendor": "V"}}
    refused = post(client_for("analyst"), "invoice-sign-off", {"input": bad})
    assert refused.status_code == 400
    body = refused.json()
    assert body["code"] == "run.input"
    assert list(body["fields"]) == ["invoice.amount"]


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("policy", "groups"), [("all", ["finance", "legal"]), ({"quorum": 3}, ["finance"])]
)
def test_one_test_run_decision_stands_for_as_many_approvers_as_the_policy_needs(
    demo: DemoUsers, client_for: ClientFor, policy: str | dict[str, int], groups: list[str]
) -> None:
    from tests.django.approval_helpers import approval_graph

    graph = approval_graph(policy=policy)
    graph["nodes"][2]["groups"] = groups
    decisions = [{"node": "ask", "decision": "approve"}]
    ran = post(client_for("analyst"), "b-and-d-or-e",
               {"graph": graph, "input": {"amount": 4}, "decisions": decisions}).json()  # fmt: skip
    assert (ran["status"], ran["state"]["decision"]) == ("completed", "approved")
    assert ran["refused"] == []
    assert ran["nodes"]["ask"]["result"] == "approved"
