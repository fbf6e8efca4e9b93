"""/api/flows/: drafts, validation, publishing, versions, import/export and who may write."""

import json

import pytest
from django.test import Client

from designer.models import DraftRevision, Flow, FlowVersion
from tests.django.fixture_types import ClientFor, TestResponse
from tests.django.graphs import BROKEN, GRAPH


def post(client: Client, path: str, body: object = None) -> TestResponse:
    """POST a JSON body."""
    data = "" if body is None else json.dumps(body)
    return client.post(path, data, content_type="application/json")


@pytest.fixture
def analyst(client_for: ClientFor) -> Client:
    """A client logged in as the demo analyst."""
    return client_for("analyst")


@pytest.fixture
def tiny(analyst: Client) -> Client:
    """The analyst, with the flow `tiny` created."""
    assert post(analyst, "/api/flows/", {"slug": "tiny", "draft": GRAPH}).status_code == 201
    return analyst


def test_an_analyst_creates_a_flow_named_after_its_graph(analyst: Client) -> None:
    response = post(analyst, "/api/flows/", {"slug": "tiny", "draft": GRAPH})
    assert response.status_code == 201
    body = response.json()
    assert (body["slug"], body["name"], body["owner"], body["latest_version"]) == (
        "tiny",
        "Tiny",
        "analyst",
        None,
    )
    assert body["draft"] == GRAPH


def test_a_second_flow_with_the_same_slug_is_a_409_conflict(tiny: Client) -> None:
    response = post(tiny, "/api/flows/", {"slug": "tiny", "draft": GRAPH})
    assert (response.status_code, response.json()) == (
        409,
        {"code": "flow.slug_taken", "detail": "a flow with the slug 'tiny' already exists"},
    )


@pytest.mark.parametrize("user", ["finance", "legal"])
def test_approvers_may_read_flows_but_not_write_them(
    tiny: Client, client_for: ClientFor, user: str
) -> None:
    client = client_for(user)
    assert client.get("/api/flows/tiny/").status_code == 200
    assert post(client, "/api/flows/", {"slug": "x", "draft": GRAPH}).status_code == 403
    assert post(client, "/api/flows/tiny/publish/").status_code == 403
    assert client.delete("/api/flows/tiny/").status_code == 403
    assert Flow.objects.count() == 1


def test_validate_reports_every_error_of_a_posted_graph_without_saving_it(tiny: Client) -> None:
    response = post(tiny, "/api/flows/tiny/validate/", BROKEN)
    assert response.status_code == 200
    body = response.json()
    assert body["ok"] is False
    codes = sorted({error["code"] for error in body["errors"]})
    assert "edge.unknown_target" in codes
    assert Flow.objects.get(slug="tiny").draft == GRAPH


def test_validate_with_an_empty_body_checks_the_saved_draft(tiny: Client) -> None:
    body = post(tiny, "/api/flows/tiny/validate/").json()
    assert body == {"ok": True, "errors": [], "warnings": []}


def test_publishing_numbers_versions_and_an_unchanged_draft_returns_the_latest(
    tiny: Client,
) -> None:
    first = post(tiny, "/api/flows/tiny/publish/")
    assert first.status_code == 201
    assert (first.json()["number"], first.json()["published_by"]) == (1, "analyst")
    again = post(tiny, "/api/flows/tiny/publish/")
    assert (again.status_code, again.json()["number"]) == (200, 1)
    changed = {**GRAPH, "name": "Tiny, renamed"}
    assert (
        tiny.patch(
            "/api/flows/tiny/", {"draft": changed}, content_type="application/json"
        ).status_code
        == 200
    )
    second = post(tiny, "/api/flows/tiny/publish/")
    assert (second.status_code, second.json()["number"]) == (201, 2)
    versions = tiny.get("/api/flows/tiny/versions/").json()
    assert [v["number"] for v in versions["results"]] == [2, 1]
    assert tiny.get("/api/flows/tiny/versions/1/").json()["graph"] == GRAPH
    assert tiny.get("/api/flows/tiny/versions/9/").status_code == 404
    assert tiny.get("/api/flows/tiny/").json()["latest_version"] == 2


def test_a_flows_versions_are_listed_without_reading_its_draft_once_per_version(
    tiny: Client,
) -> None:
    """A version shows its flow's slug only; the draft, as large as the flow, was read and
    decoded again with every version listed."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    post(tiny, "/api/flows/tiny/publish/")
    tiny.patch("/api/flows/tiny/", {"draft": {**GRAPH, "name": "Tiny, renamed"}},
               content_type="application/json")  # fmt: skip
    post(tiny, "/api/flows/tiny/publish/")
    for path in ("/api/flows/tiny/versions/", "/api/flows/tiny/versions/1/"):
        with CaptureQueriesContext(connection) as captured:
            assert tiny.get(path).status_code == 200
        read = [q["sql"] for q in captured.captured_queries]
        (listing,) = [sql for sql in read if '"designer_flowversion"."graph"' in sql]
        assert '"designer_flow"."draft"' not in listing
        assert sum('"designer_flow"."draft"' in sql for sql in read) == 1  # the flow's own row


def test_the_flows_page_lists_names_and_latest_versions_without_reading_a_graph(
    tiny: Client,
) -> None:
    """The list shows names, owners and the latest version's number: reading each draft
    and every version's graph for it read every graph ever published on each visit."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    post(tiny, "/api/flows/tiny/publish/")
    tiny.patch("/api/flows/tiny/", {"draft": {**GRAPH, "name": "Tiny, renamed"}},
               content_type="application/json")  # fmt: skip
    post(tiny, "/api/flows/tiny/publish/")
    with CaptureQueriesContext(connection) as captured:
        html = tiny.get("/flows/").content.decode()
    read = " ".join(q["sql"] for q in captured.captured_queries)
    assert '"designer_flow"."draft"' not in read
    assert '"designer_flowversion"."graph"' not in read
    assert '"latest_version": 2' in html and '"published_by": "analyst"' in html


def test_publishing_a_draft_with_errors_is_refused_and_lists_them(tiny: Client) -> None:
    tiny.patch("/api/flows/tiny/", {"draft": BROKEN}, content_type="application/json")
    response = post(tiny, "/api/flows/tiny/publish/")
    assert response.status_code == 400
    body = response.json()
    assert body["code"] == "flow.invalid"
    assert "edge.unknown_target" in {error["code"] for error in body["errors"]}
    assert FlowVersion.objects.count() == 0


def test_a_published_version_cannot_be_changed() -> None:
    from designer.models import ImmutableVersionError

    version = FlowVersion(number=1)
    version.pk = 1
    with pytest.raises(ImmutableVersionError):
        version.save()


def test_export_returns_the_draft_or_a_version_as_a_file(tiny: Client) -> None:
    post(tiny, "/api/flows/tiny/publish/")
    tiny.patch(
        "/api/flows/tiny/", {"draft": {**GRAPH, "name": "New"}}, content_type="application/json"
    )
    draft = tiny.get("/api/flows/tiny/export/")
    assert draft["Content-Disposition"] == 'attachment; filename="tiny.json"'
    assert draft.json()["name"] == "New"
    assert tiny.get("/api/flows/tiny/export/?version=1").json() == GRAPH
    assert tiny.get("/api/flows/tiny/export/?version=7").status_code == 404


def test_import_creates_or_replaces_a_draft_and_can_publish(analyst: Client) -> None:
    response = post(analyst, "/api/flows/import/", {"graph": GRAPH, "publish": True})
    assert response.status_code == 201
    assert (response.json()["slug"], response.json()["latest_version"]) == ("tiny", 1)
    refused = post(
        analyst,
        "/api/flows/import/",
        {"graph": BROKEN, "slug": "tiny", "publish": True, "replace": True},
    )
    assert refused.status_code == 400
    assert Flow.objects.get(slug="tiny").draft == GRAPH  # the refused import changed nothing


def test_importing_onto_an_existing_slug_is_a_409_unless_asked_to_replace(
    analyst: Client,
) -> None:
    post(analyst, "/api/flows/import/", {"graph": GRAPH})
    changed = {**GRAPH, "name": "Tiny, changed"}
    clash = post(analyst, "/api/flows/import/", {"graph": changed, "slug": "tiny"})
    assert (clash.status_code, clash.json()) == (
        409,
        {
            "code": "flow.slug_taken",
            "detail": "a flow with the slug 'tiny' exists; import with replace to make this "
            "its draft (the current draft is kept in its history), or choose another slug",
        },
    )
    assert Flow.objects.get(slug="tiny").draft == GRAPH
    assert DraftRevision.objects.count() == 0

    replaced = post(
        analyst, "/api/flows/import/", {"graph": changed, "slug": "tiny", "replace": True}
    )
    assert replaced.status_code == 201
    assert Flow.objects.get(slug="tiny").draft == changed
    kept = DraftRevision.objects.get()
    assert kept.replaced_by is not None
    assert (kept.draft, kept.reason, kept.replaced_by.username) == (GRAPH, "import", "analyst")


def test_delete_removes_a_flow_and_its_versions(tiny: Client) -> None:
    post(tiny, "/api/flows/tiny/publish/")
    assert tiny.delete("/api/flows/tiny/").status_code == 204
    assert (Flow.objects.count(), FlowVersion.objects.count()) == (0, 0)


@pytest.mark.parametrize(
    ("body", "status", "fragment"),
    [
        ("{not json", 400, "not valid JSON at line 1, column 2"),
        ('{"slug": "a", "draft": {"format": 1, "format": 2}}', 400, "appears twice"),
        ('{"slug": "a", "draft": [1, 2]}', 400, "a graph must be a JSON object"),
        ('{"slug": "not a slug!", "draft": {}}', 400, "slug"),
        ('{"draft": {}}', 400, "slug"),
    ],
)
def test_malformed_payloads_get_a_clear_400_and_store_nothing(
    analyst: Client, body: str, status: int, fragment: str
) -> None:
    response = analyst.post("/api/flows/", body, content_type="application/json")
    assert response.status_code == status
    assert fragment in response.content.decode()
    assert Flow.objects.count() == 0


def test_unicode_and_markup_in_names_are_stored_as_given_and_escaped_on_pages(
    analyst: Client,
) -> None:
    name = "Rechnung <script>alert('ü')</script> ✓"
    graph = {**GRAPH, "name": name}
    assert post(analyst, "/api/flows/", {"slug": "xss", "draft": graph}).status_code == 201
    assert Flow.objects.get(slug="xss").name == name
    html = analyst.get("/flows/").content.decode()
    assert "<script>alert" not in html
    assert "Rechnung &lt;script&gt;alert(&#x27;ü&#x27;)&lt;/script&gt; ✓" in html
    detail = analyst.get("/flows/xss/").content.decode()
    assert "<script>alert" not in detail


def test_the_openapi_schema_describes_the_graph_document(analyst: Client) -> None:
    response = analyst.get("/api/schema/", HTTP_ACCEPT="application/json")
    assert response.status_code == 200
    schema = json.loads(response.content)
    assert "/api/flows/{slug}/validate/" in schema["paths"]
    assert "/api/flows/{slug}/publish/" in schema["paths"]
    assert "/api/flows/{slug}/versions/{number}/" in schema["paths"]
    assert "/api/flows/import/" in schema["paths"]
    graph = schema["components"]["schemas"]["Flow"]["properties"]["draft"]
    assert graph["properties"]["format"]["enum"] == ["braid.graph/1"]


def test_deleting_a_flow_that_runs_reference_is_refused_with_409(tiny: Client) -> None:
    from runs.services import latest_version, start_run

    post(tiny, "/api/flows/tiny/publish/")
    version = latest_version("tiny")
    start_run(version.graph, "tiny v1", {}, flow_version=version)
    response = tiny.delete("/api/flows/tiny/")
    assert response.status_code == 409
    assert response.json() == {
        "code": "flow.in_use",
        "detail": "runs reference tiny; it cannot be deleted",
    }
    assert Flow.objects.filter(slug="tiny").exists()


def put(client: Client, path: str, body: object) -> TestResponse:
    """PUT a JSON body."""
    return client.put(path, json.dumps(body), content_type="application/json")


def test_each_save_counts_a_revision_and_a_save_from_an_older_one_is_a_409(tiny: Client) -> None:
    assert tiny.get("/api/flows/tiny/").json()["revision"] == 1
    renamed = {**GRAPH, "name": "First tab"}
    first = put(tiny, "/api/flows/tiny/", {"draft": renamed, "base_revision": 1})
    assert (first.status_code, first.json()["revision"]) == (200, 2)
    second = put(
        tiny, "/api/flows/tiny/", {"draft": {**GRAPH, "name": "Second tab"}, "base_revision": 1}
    )
    assert second.status_code == 409
    body = second.json()
    assert (body["code"], body["revision"], body["draft"]) == ("flow.draft_conflict", 2, renamed)
    assert body["detail"] == (
        "tiny was saved elsewhere (revision 2) since revision 1 that this edit started from"
    )
    assert Flow.objects.get(slug="tiny").draft == renamed


def test_overwriting_after_a_conflict_keeps_the_other_draft_in_the_history(tiny: Client) -> None:
    theirs = {**GRAPH, "name": "Theirs"}
    assert put(tiny, "/api/flows/tiny/", {"draft": theirs}).json()["revision"] == 2
    mine = {**GRAPH, "name": "Mine"}
    response = put(
        tiny, "/api/flows/tiny/", {"draft": mine, "base_revision": 2, "keep_replaced": True}
    )
    assert (response.status_code, response.json()["revision"]) == (200, 3)
    kept = DraftRevision.objects.get(flow__slug="tiny")
    assert kept.replaced_by is not None
    assert (kept.draft, kept.reason, kept.replaced_by.username) == (
        theirs,
        "overwritten",
        "analyst",
    )


def test_the_action_catalog_lists_each_action_with_outcomes_and_params(analyst: Client) -> None:
    response = analyst.get("/api/actions/")
    assert response.status_code == 200
    actions = {action["name"]: action for action in response.json()}
    assert actions["sleep"] == {
        "name": "sleep",
        "outcomes": ["next"],
        "params": [{"name": "seconds", "types": ["int", "float"], "required": True}],
    }
    assert list(actions) == sorted(actions)


def test_checking_a_document_before_import_reports_without_storing(analyst: Client) -> None:
    response = post(analyst, "/api/flows/import/check/", {"graph": BROKEN})
    assert response.status_code == 200
    assert response.json()["ok"] is False
    assert post(analyst, "/api/flows/import/check/", GRAPH).json() == {
        "ok": True,
        "errors": [],
        "warnings": [],
    }
    assert Flow.objects.count() == 0
