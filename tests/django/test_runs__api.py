"""/api/runs/: start, list with filters, tree with one SELECT of rows, trace, cancel."""

import itertools
import json
from typing import Any

import pytest
from django.test import Client
from django.utils import timezone
from pytest_django import DjangoAssertNumQueries

from engine.models import NodeState, Run
from tests.django.durable_driver import drain
from tests.django.fixture_types import ClientFor, DemoUsers


def start(client: Client, flow: str, input_value: object = None) -> dict[str, Any]:
    """POST a run and return its JSON."""
    body = {"flow": flow, "input": input_value or {}}
    response = client.post("/api/runs/", json.dumps(body), content_type="application/json")
    assert response.status_code == 201, response.content
    started: dict[str, Any] = response.json()
    return started


@pytest.mark.django_db
def test_a_started_run_is_stored_running_and_ends_when_advanced(
    demo: DemoUsers, client_for: ClientFor
) -> None:
    client = client_for("analyst")
    body = start(client, "b-and-d-or-e", {"urgent": True})
    assert (body["flow"], body["version"], body["status"], body["started_by"]) == (
        "b-and-d-or-e",
        1,
        "running",
        "analyst",
    )
    run = drain(Run.objects.get(pk=body["id"]))
    assert run.runtime == "durable"
    detail = client.get(f"/api/runs/{body['id']}/").json()
    assert (detail["status"], detail["state"]) == ("completed", {"log": ["b", "d: urgent path"]})


@pytest.mark.django_db
def test_the_tree_gives_rows_and_colors_from_one_select_of_rows(
    demo: DemoUsers, client_for: ClientFor, django_assert_num_queries: DjangoAssertNumQueries
) -> None:
    client = client_for("admin")
    body = start(client, "b-and-d-or-e", {"urgent": False})
    drain(Run.objects.get(pk=body["id"]))
    client.get("/api/runs/")  # warm the session and user caches
    with django_assert_num_queries(4):  # session, user, the run (admins: no filter), its rows
        tree = client.get(f"/api/runs/{body['id']}/tree/").json()
    assert tree["colors"] == {
        "start": "completed",
        "split": "completed",
        "b": "completed",
        "check": "completed",
        "d": "skipped",
        "e": "completed",
        "join": "completed",
        "done": "completed",
    }
    assert tree["nodes"]["e"] == {
        "status": "completed",
        "execution_id": "root:1:split.right:1",
        "result": '{"log": ["e: normal path"]}',
        "attempt": 1,
    }
    assert tree["reasons"]["d"] == "Not taken: `check` chose `false`"
    assert tree["reasons"]["e"] == "Completed"


@pytest.mark.django_db
def test_the_tree_of_a_run_with_10000_node_rows_is_one_select_of_rows(
    demo: DemoUsers, client_for: ClientFor, django_assert_num_queries: DjangoAssertNumQueries
) -> None:
    ids = [f"t{i}" for i in range(10_000)]
    names = ["start", *ids, "done"]
    document = {
        "format": "braid.graph/1",
        "name": "long",
        "nodes": [{"id": "start", "type": "start"},
                  *({"id": i, "type": "task", "action": "noop"} for i in ids),
                  {"id": "done", "type": "end"}],
        "edges": [{"source": a, "target": b} for a, b in itertools.pairwise(names)],
    }  # fmt: skip
    run = Run.objects.create(label="long", graphs={"main": document}, status="running")
    now = timezone.now()
    NodeState.objects.bulk_create(
        NodeState(run=run, node=name, status="completed", status_detail="root:0000000001",
                  execution_id="root:1", result=None, attempt=1, updated_at=now)
        for name in names[:-1]
    )  # fmt: skip
    client = client_for("admin")
    # The first tree in a process also reads the run's graphs once (then cached, as after
    # the run's first step); every later one is the run and one SELECT of its rows.
    assert client.get(f"/api/runs/{run.pk}/tree/").status_code == 200
    with django_assert_num_queries(4):  # session, user, the run, its rows
        tree = client.get(f"/api/runs/{run.pk}/tree/").json()
    assert len(tree["nodes"]) == 10_001
    assert tree["colors"]["t9999"] == "completed"
    assert tree["colors"]["done"] == "pending"
    assert tree["reasons"]["done"] == "Pending: not reached yet"


@pytest.mark.django_db
def test_users_see_their_own_runs_and_admins_see_all_with_filters(
    demo: DemoUsers, client_for: ClientFor
) -> None:
    analyst, admin = client_for("analyst"), client_for("admin")
    mine = start(analyst, "staged-gathers")
    theirs = start(admin, "b-and-d-or-e", {"urgent": True})
    for run_id in (mine["id"], theirs["id"]):
        drain(Run.objects.get(pk=run_id))

    def ids(client: Client, query: str = "") -> list[str]:
        return [r["id"] for r in client.get(f"/api/runs/{query}").json()["results"]]

    assert ids(analyst) == [mine["id"]]
    assert analyst.get(f"/api/runs/{theirs['id']}/").status_code == 404
    assert ids(admin) == [theirs["id"], mine["id"]]
    assert ids(admin, "?flow=staged-gathers") == [mine["id"]]
    assert ids(admin, "?started_by=admin&status=completed") == [theirs["id"]]
    # A value that is JSON compares as JSON: the number 3 is not the text "3".
    assert ids(admin, "?state=count:3") == [mine["id"]]
    assert ids(admin, '?state=count:"3"') == []
    assert ids(admin, "?state=count:NaN") == []  # the text "NaN", not a number jsonb lacks
    assert admin.get("/api/runs/?status=nope").status_code == 400
    assert admin.get("/api/runs/?state=oops").status_code == 400


@pytest.mark.django_db
def test_the_list_reads_no_graph_snapshot_or_flow_document(
    demo: DemoUsers, client_for: ClientFor
) -> None:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    admin = client_for("admin")
    run = start(admin, "staged-gathers")
    with CaptureQueriesContext(connection) as queries:
        listed = admin.get("/api/runs/").json()["results"]
    selects = [q["sql"] for q in queries if '"engine_run"."id"' in q["sql"]]
    assert len(selects) == 1
    for column in ('"engine_run"."graphs"', '"engine_run"."snapshot"', '"engine_run"."redrive"',
                   '"designer_flowversion"."graph"'):  # fmt: skip
        assert column not in selects[0]
    assert [(r["id"], r["flow"], r["version"], r["started_by"], r["input"]) for r in listed] == [
        (run["id"], "staged-gathers", 1, "admin", {})
    ]


@pytest.mark.django_db
def test_the_list_shows_each_run_as_the_run_serializer_does(
    demo: DemoUsers, client_for: ClientFor
) -> None:
    from runs.api import RunSerializer

    admin = client_for("admin")
    done = start(admin, "b-and-d-or-e", {"urgent": True})
    drain(Run.objects.get(pk=done["id"]))
    start(client_for("analyst"), "staged-gathers", {"note": "ünïcode"})
    # A run with no flow version and no starter (as `braid run` stores one), failed.
    Run.objects.create(label="bare", graphs={}, input=None, status="failed", error="boom",
                       state={"n": [1, {"a": None}]})  # fmt: skip
    listed = admin.get("/api/runs/").json()["results"]
    serialized = RunSerializer(Run.objects.order_by("-created_at"), many=True).data
    assert listed == json.loads(json.dumps(serialized))
    assert [(r["flow"], r["version"], r["started_by"], r["status"]) for r in listed] == [
        (None, None, None, "failed"),
        ("staged-gathers", 1, "analyst", "running"),
        ("b-and-d-or-e", 1, "admin", "completed"),
    ]
    assert listed[0]["created_at"].endswith("Z")


@pytest.mark.django_db
def test_only_admins_cancel_and_a_cancelled_run_stops_waiting(
    demo: DemoUsers, client_for: ClientFor
) -> None:
    analyst, admin = client_for("analyst"), client_for("admin")
    body = start(analyst, "invoice-sign-off", {"invoice": {"id": "1", "amount": 2, "vendor": "V"}})
    run = drain(Run.objects.get(pk=body["id"]))
    assert run.status == "waiting"
    url = f"/api/runs/{body['id']}/cancel/"
    assert analyst.post(url, "{}", content_type="application/json").status_code == 403
    reply = admin.post(
        url, json.dumps({"reason": "duplicate invoice"}), content_type="application/json"
    )
    assert reply.status_code == 202
    run = drain(run)
    assert (run.status, run.error) == ("cancelled", "cancelled by admin: duplicate invoice")
    trace = admin.get(f"/api/runs/{body['id']}/trace/").json()["results"]
    assert {"event": "run.cancelled", "detail": {"by": "admin", "reason": "duplicate invoice"}} in [
        {"event": e["event"], "detail": e["detail"]} for e in trace
    ]
    assert admin.post(url, "{}", content_type="application/json").status_code == 409


@pytest.mark.django_db
def test_starting_an_unknown_or_unpublished_flow_is_a_clear_400(
    demo: DemoUsers, client_for: ClientFor
) -> None:
    client = client_for("analyst")
    response = client.post(
        "/api/runs/", json.dumps({"flow": "nope"}), content_type="application/json"
    )
    assert (response.status_code, response.json()) == (
        400,
        {"code": "run.refused", "detail": "no flow has the slug 'nope'"},
    )
    bad = client.post("/api/runs/", json.dumps({"input": {}}), content_type="application/json")
    assert bad.status_code == 400 and "flow" in bad.json()


@pytest.mark.django_db
def test_waiting_on_me_lists_the_runs_with_an_open_approval_for_my_groups(
    demo: DemoUsers, client_for: ClientFor
) -> None:
    admin = client_for("admin")
    invoice = {"invoice": {"id": "I-1", "amount": 5, "vendor": "V"}}
    asking = start(admin, "invoice-sign-off", invoice)
    drain(Run.objects.get(pk=asking["id"]))
    done = start(admin, "b-and-d-or-e", {"urgent": True})
    drain(Run.objects.get(pk=done["id"]))
    finance = client_for("finance").get("/api/runs/?waiting_on_me=true").json()
    assert [r["id"] for r in finance["results"]] == [asking["id"]]
    assert client_for("admin").get("/api/runs/?waiting_on_me=true").json()["results"] == []
    both = client_for("admin").get("/api/runs/?waiting_on_me=false").json()
    assert {r["id"] for r in both["results"]} == {asking["id"], done["id"]}
    refused = client_for("finance").get("/api/runs/?waiting_on_me=maybe")
    assert refused.status_code == 400
    assert refused.json()["waiting_on_me"] == "use true or false"


@pytest.mark.django_db
def test_writes_gives_the_state_writes_of_a_nodes_lineage_from_the_trace(
    demo: DemoUsers, client_for: ClientFor
) -> None:
    client = client_for("analyst")
    body = start(client, "b-and-d-or-e", {"urgent": False})
    drain(Run.objects.get(pk=body["id"]))
    answer = client.get(f"/api/runs/{body['id']}/writes/?node=done").json()
    assert (answer["node"], answer["execution_id"]) == ("done", "root:1")
    assert [(w["node"], w["execution_id"], w["field"], w["value"], w["via"])
            for w in answer["writes"]] == [
        ("b", "root:1:split.left:1", "log", '["b"]', "gather `join` (slot b)"),
        ("e", "root:1:split.right:1", "log", '["e: normal path"]', "gather `join` (slot d_or_e)"),
    ]  # fmt: skip
    branch = client.get(f"/api/runs/{body['id']}/writes/?node=e").json()
    assert [(w["node"], w["via"]) for w in branch["writes"]] == [("e", None)]


@pytest.mark.django_db
def test_writes_of_a_node_without_a_row_or_without_a_node_is_a_json_400(
    demo: DemoUsers, client_for: ClientFor
) -> None:
    client = client_for("analyst")
    body = start(client, "b-and-d-or-e", {"urgent": False})
    drain(Run.objects.get(pk=body["id"]))
    for query, detail in (("?node=d", "no node 'd' has run in this run"),
                          ("", "name a node: ?node=")):  # fmt: skip
        response = client.get(f"/api/runs/{body['id']}/writes/{query}")
        assert (response.status_code, response.json()) == (
            400, {"code": "run.node", "detail": detail},
        )  # fmt: skip
