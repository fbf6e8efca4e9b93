"""/api/runs/<id>/executions/ and /execution/?id=: the execution tree and one execution's
colors, derived in the core from the durable run's trace (the browser infers none)."""

import json

import pytest

from engine.models import Run
from tests.django.approval_helpers import publish, start
from tests.django.durable_driver import drain
from tests.django.fixture_types import ClientFor, DemoUsers

LINES = [{"id": "a", "amount": 5}, {"id": "b", "amount": 50000}, {"id": "c", "amount": 60000}]


def cancelled_batch(client_for: ClientFor) -> str:
    """Start batch-line-approval as admin, let items 2 and 3 wait for finance, cancel."""
    admin = client_for("admin")
    body = {"flow": "batch-line-approval", "input": {"lines": LINES}}
    started = admin.post("/api/runs/", json.dumps(body), content_type="application/json")
    run_id = started.json()["id"]
    assert drain(Run.objects.get(pk=run_id)).status == "waiting"
    reason = json.dumps({"reason": "duplicate batch"})
    assert admin.post(f"/api/runs/{run_id}/cancel/", reason,
                      content_type="application/json").status_code == 202  # fmt: skip
    assert drain(Run.objects.get(pk=run_id)).status == "cancelled"
    return str(run_id)


@pytest.mark.django_db
def test_the_executions_of_a_cancelled_foreach_say_what_became_of_each_item(
    demo: DemoUsers, client_for: ClientFor
) -> None:
    run_id = cancelled_batch(client_for)
    body = client_for("admin").get(f"/api/runs/{run_id}/executions/").json()
    assert body["status"] == "cancelled"
    assert [
        (e["id"], e["kind"], e["owner"], e["label"], e["status"]) for e in body["executions"]
    ] == [
        ("root:1", "root", "", "run", "cancelled"),
        ("root:1:lines:1", "item", "lines", "1", "completed"),
        ("root:1:lines:2", "item", "lines", "2", "cancelled"),
        ("root:1:lines:3", "item", "lines", "3", "cancelled"),
    ]


@pytest.mark.django_db
def test_one_items_view_colors_its_own_path(demo: DemoUsers, client_for: ClientFor) -> None:
    run_id = cancelled_batch(client_for)
    admin = client_for("admin")
    first = admin.get(f"/api/runs/{run_id}/execution/?id=root:1:lines:1").json()
    assert {p: first["colors"][p] for p in ("big", "small", "review", "ok", "done")} == {
        "big": "completed", "small": "completed", "review": "skipped", "ok": "skipped",
        "done": "skipped",
    }  # fmt: skip
    assert first["reasons"]["review"] == "Not taken: `big` chose `false`"
    third = admin.get(f"/api/runs/{run_id}/execution/?id=root:1:lines:3").json()
    assert third["colors"]["review"] == "cancelled"
    assert third["colors"]["small"] == "skipped"


@pytest.mark.django_db
def test_an_unknown_execution_is_a_clear_400_and_a_stranger_gets_404(
    demo: DemoUsers, client_for: ClientFor
) -> None:
    run_id = cancelled_batch(client_for)
    admin = client_for("admin")
    missing = admin.get(f"/api/runs/{run_id}/execution/?id=root:1:lines:9")
    assert (missing.status_code, missing.json()) == (
        400, {"code": "run.execution", "detail": "this run has no execution 'root:1:lines:9'"},
    )  # fmt: skip
    assert admin.get(f"/api/runs/{run_id}/execution/").json()["detail"] == "name one: ?id=root:1"
    for path in ("executions/", "execution/?id=root:1"):
        assert client_for("legal").get(f"/api/runs/{run_id}/{path}").status_code == 404


@pytest.mark.django_db
def test_the_tree_says_who_approved_and_what_they_said(
    demo: DemoUsers, client_for: ClientFor
) -> None:
    admin = client_for("admin")
    body = {
        "flow": "invoice-sign-off",
        "input": {"invoice": {"id": "I", "amount": 5, "vendor": "V"}},
    }
    run_id = admin.post("/api/runs/", json.dumps(body), content_type="application/json").json()[
        "id"
    ]
    assert drain(Run.objects.get(pk=run_id)).status == "waiting"
    for user, comment in (("finance", "fine"), ("legal", "")):
        client = client_for(user)
        (request,) = client.get("/api/approvals/").json()["results"]
        decided = client.post(f"/api/approvals/{request['id']}/decide/",
                              json.dumps({"decision": "approve", "comment": comment}),
                              content_type="application/json")  # fmt: skip
        assert decided.status_code in (200, 202), decided.content
        drain(Run.objects.get(pk=run_id))
    tree = admin.get(f"/api/runs/{run_id}/tree/").json()
    assert tree["status"] == "completed"
    assert tree["reasons"]["fin"] == 'Approved by finance (finance): "fine"'
    assert tree["reasons"]["leg"] == "Approved by legal (legal)"
    assert [
        (v["user"], v["groups"], v["decision"], v["comment"]) for v in tree["decisions"]["fin"]
    ] == [
        ("finance", ["finance"], "approve", "fine"),
    ]
    assert tree["decisions"]["fin"][0]["at"].endswith("Z")


def item_cut_short_graph() -> dict[str, object]:
    """A `skip` foreach of [1, 2]: item 1 forks into `ask` (finance) and `boom` (fails the
    item, cutting `ask` short); item 2 waits at `later` (legal)."""
    nodes = [
        {"id": "start", "type": "start"},
        {"id": "each", "type": "foreach", "items": "[1, 2]", "as": "it", "concurrency": 2,
         "on_item_failure": "skip"},
        {"id": "first", "type": "if", "condition": "it == 1"},
        {"id": "split", "type": "fork", "branches": ["a", "b"]},
        {"id": "ask", "type": "approval", "groups": ["finance"], "policy": "any", "title": "t"},
        {"id": "boom", "type": "fail", "error": "item one is bad"},
        {"id": "join", "type": "gather", "slots": ["a"]},
        {"id": "later", "type": "approval", "groups": ["legal"], "policy": "any", "title": "t"},
        {"id": "done", "type": "end"},
    ]  # fmt: skip
    edges = [
        {"source": "start", "target": "each"},
        {"source": "each", "outcome": "item", "target": "first"},
        {"source": "first", "outcome": "true", "target": "split"},
        {"source": "first", "outcome": "false", "target": "later"},
        {"source": "split", "branch": "a", "target": "ask"},
        {"source": "split", "branch": "b", "target": "boom"},
        {"source": "ask", "outcome": "approved", "target": "join", "slot": "a"},
        {"source": "ask", "outcome": "rejected", "target": "join", "slot": "a"},
        {"source": "join", "target": "each"},
        {"source": "later", "outcome": "approved", "target": "each"},
        {"source": "later", "outcome": "rejected", "target": "each"},
        {"source": "each", "outcome": "done", "target": "done"},
    ]
    return {"format": "braid.graph/1", "name": "Cut short", "state": {}, "nodes": nodes,
            "edges": edges}  # fmt: skip


@pytest.mark.django_db
def test_a_row_its_item_left_waiting_reads_cancelled_while_the_foreach_goes_on(
    demo: DemoUsers, client_for: ClientFor
) -> None:
    publish(client_for("analyst"), "cut-short", item_cut_short_graph())
    admin = client_for("admin")
    run = start(admin, "cut-short", {})
    assert run.status == "waiting"
    tree = admin.get(f"/api/runs/{run.pk}/tree/").json()
    assert tree["nodes"]["ask"]["status"] == "waiting"  # the row stays as item 1 left it
    assert (tree["colors"]["ask"], tree["reasons"]["ask"]) == (
        "cancelled", "Cancelled: item one is bad while waiting for finance",
    )  # fmt: skip
    assert tree["colors"]["later"] == "waiting"
    executions = admin.get(f"/api/runs/{run.pk}/executions/").json()["executions"]
    assert [(e["id"], e["status"]) for e in executions] == [
        ("root:1", "waiting"), ("root:1:each:1", "failed"),
        ("root:1:each:1:split.a:1", "cancelled"), ("root:1:each:1:split.b:1", "failed"),
        ("root:1:each:2", "waiting"),
    ]  # fmt: skip
