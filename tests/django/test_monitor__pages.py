"""The Runs page and the run view: the shells the React entries mount into, and their data."""

import json
import re
from pathlib import Path
from typing import Any

import pytest
from django.test import Client

from engine.models import Run
from tests.django.durable_driver import drain
from tests.django.fixture_types import ClientFor, DemoUsers

DEMO = Path(__file__).resolve().parents[2] / "designer" / "demo_flows"


def page_data(html: str, script_id: str) -> dict[str, Any]:
    """Return the JSON a page's json_script wrote under `script_id`."""
    match = re.search(
        rf'<script id="{script_id}" type="application/json">(.*?)</script>', html, re.S
    )
    assert match is not None, f"no #{script_id} in the page"
    decoded: dict[str, Any] = json.loads(match.group(1))
    return decoded


def start(client: Client, flow: str, input_value: object) -> str:
    response = client.post(
        "/api/runs/",
        json.dumps({"flow": flow, "input": input_value}),
        content_type="application/json",
    )
    assert response.status_code == 201, response.content
    return str(response.json()["id"])


@pytest.mark.django_db
def test_the_runs_page_mounts_the_runs_entry_with_the_viewer_and_published_flows(
    demo: DemoUsers, client_for: ClientFor
) -> None:
    response = client_for("admin").get("/runs/?start=vendor-payment")
    html = response.content.decode()
    assert response.status_code == 200
    assert 'id="runs-app"' in html
    assert re.search(r'<script type="module" [^>]*src="/static/dist/assets/runs-[^"]+\.js"', html)
    data = page_data(html, "runs-page")
    assert data["viewer"] == {
        "username": "admin",
        "groups": ["admins"],
        "can_start": True,
        "can_administer": True,
    }
    assert data["start"] == "vendor-payment"
    slugs = [flow["slug"] for flow in data["flows"]]
    assert slugs == sorted(slugs)
    assert {"approval-or-timeout", "b-and-d-or-e", "vendor-payment"} <= set(slugs)
    assert all(flow["version"] == 1 for flow in data["flows"])
    # Each flow's `input` schema, as its demo file declares it (the start form's template).
    schemas = {p.stem: json.loads(p.read_text())["input"] for p in DEMO.glob("*.json")}
    assert {flow["slug"]: flow["input"] for flow in data["flows"]} == schemas


@pytest.mark.django_db
def test_an_approver_may_start_runs_but_not_administer_them(
    demo: DemoUsers, client_for: ClientFor
) -> None:
    data = page_data(client_for("finance").get("/runs/").content.decode(), "runs-page")
    assert data["viewer"] == {
        "username": "finance",
        "groups": ["finance"],
        "can_start": True,
        "can_administer": False,
    }


@pytest.mark.django_db
def test_the_run_view_carries_the_run_and_its_main_graph(
    demo: DemoUsers, client_for: ClientFor
) -> None:
    admin = client_for("admin")
    run_id = start(admin, "b-and-d-or-e", {"urgent": True})
    drain(Run.objects.get(pk=run_id))
    response = admin.get(f"/runs/{run_id}/")
    html = response.content.decode()
    assert response.status_code == 200
    assert re.search(r'src="/static/dist/assets/run-view-[^"]+\.js"', html)
    data = page_data(html, "run-page")
    assert data["run"]["id"] == run_id
    assert (data["run"]["flow"], data["run"]["version"], data["run"]["status"]) == (
        "b-and-d-or-e",
        1,
        "completed",
    )
    assert data["run"]["started_by"] == "admin"
    assert data["graph"]["format"] == "braid.graph/1"
    assert [node["id"] for node in data["graph"]["nodes"]][:3] == ["start", "split", "b"]
    assert data["viewer"]["can_administer"] is True


@pytest.mark.django_db
def test_the_run_view_carries_every_graph_of_a_run_with_a_subflow(
    demo: DemoUsers, client_for: ClientFor
) -> None:
    admin = client_for("admin")
    run_id = start(admin, "vendor-payment", {"vendor": "Acme", "amount": 2000, "new_vendor": False})
    data = page_data(admin.get(f"/runs/{run_id}/").content.decode(), "run-page")
    assert sorted(data["graphs"]) == ["a-risk-score@latest", "main"]
    assert data["graphs"]["main"] == data["graph"]
    child = data["graphs"]["a-risk-score@latest"]
    assert [node["id"] for node in child["nodes"]] == ["start", "score", "done"]
    assert [node["flow"] for node in data["graph"]["nodes"] if node["type"] == "subflow"] == [
        "a-risk-score"
    ]


@pytest.mark.django_db
def test_someone_elses_run_is_a_404_and_no_run_is_a_404(
    demo: DemoUsers, client_for: ClientFor
) -> None:
    run_id = start(client_for("admin"), "b-and-d-or-e", {})
    analyst = client_for("analyst")
    assert analyst.get(f"/runs/{run_id}/").status_code == 404
    assert analyst.get("/runs/00000000-0000-0000-0000-000000000000/").status_code == 404
    assert client_for("admin").get(f"/runs/{run_id}/").status_code == 200


@pytest.mark.django_db
def test_a_published_flow_page_links_to_starting_a_run(
    demo: DemoUsers, client_for: ClientFor
) -> None:
    html = client_for("analyst").get("/flows/b-and-d-or-e/").content.decode()
    assert 'href="/runs/?start=b-and-d-or-e"' in html


@pytest.mark.django_db
def test_the_runs_page_reads_the_graphs_of_the_latest_versions_only_and_no_draft(
    demo: DemoUsers, client_for: ClientFor
) -> None:
    """The start form needs each flow's latest input schema: reading every version's graph
    and every draft for it read every graph ever published on each visit."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    analyst = client_for("analyst")
    draft = analyst.get("/api/flows/vendor-payment/").json()["draft"]
    schema = {**draft["input"], "required": ["vendor", "amount"]}
    changed = analyst.patch("/api/flows/vendor-payment/", {"draft": {**draft, "input": schema}},
                            content_type="application/json")  # fmt: skip
    assert changed.status_code == 200, changed.content
    assert analyst.post("/api/flows/vendor-payment/publish/").status_code == 201
    with CaptureQueriesContext(connection) as captured:
        html = client_for("admin").get("/runs/").content.decode()
    read = [q["sql"] for q in captured.captured_queries]
    assert [sql for sql in read if '"designer_flow"."draft"' in sql] == []
    (graphs,) = [sql for sql in read if '"designer_flowversion"."graph"' in sql]
    assert '"designer_flowversion"."id" IN (' in graphs
    flows = {flow["slug"]: flow for flow in page_data(html, "runs-page")["flows"]}
    assert (flows["vendor-payment"]["version"], flows["vendor-payment"]["input"]) == (2, schema)
    assert flows["b-and-d-or-e"]["version"] == 1
