"""Context by default and segregation of duties explained (docs/approvals.md, "What an
approver sees"): without `show`, a request says who started its run, when, the flow and
version, and a bounded view of the input; a starter sees their own run's request,
read-only, with the reason."""

from typing import Any

import pytest
from pytest_django import DjangoAssertNumQueries

from approvals.context import compact_input, compact_text
from approvals.models import ApprovalRequest
from tests.django.approval_helpers import INVOICE, approval_graph, publish, request_id, start
from tests.django.fixture_types import ClientFor, DemoUsers

pytestmark = pytest.mark.django_db


def inbox(client: Any) -> list[dict[str, Any]]:
    """Return the caller's open requests from the API."""
    response = client.get("/api/approvals/")
    assert response.status_code == 200, response.content
    results: list[dict[str, Any]] = response.json()["results"]
    return results


def test_a_long_string_is_cut_to_eighty_characters_with_an_ellipsis() -> None:
    assert compact_text("x" * 100) == "x" * 79 + "…"
    assert compact_text("short") == "short"


def test_a_long_list_shows_three_items_and_says_how_many_more() -> None:
    assert compact_text([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]) == "[1, 2, 3, … 7 more]"


def test_nested_objects_are_cut_at_two_levels_and_four_keys() -> None:
    value = {"a": 1, "b": {"c": {"d": 1}, "e": [[1, 2]]}, "f": None, "g": True, "h": "x"}
    assert compact_text(value) == (
        "{a: 1, b: {c: {… 1 key}, e: [… 1 item]}, f: null, g: true, … 1 more}"
    )


def test_fields_and_keys_are_shown_by_name_whatever_order_the_store_kept() -> None:
    # PostgreSQL's jsonb keeps no key order; SQLite keeps the order written.
    value = {"vendor": "Acme", "amount": 3, "id": {"z": 1, "b": 2}}
    assert compact_text(value) == "{amount: 3, id: {b: 2, z: 1}, vendor: Acme}"
    assert [f["field"] for f in compact_input(value).fields] == ["amount", "id", "vendor"]


def test_an_input_with_ten_fields_shows_eight_and_counts_the_rest() -> None:
    compact = compact_input({f"k{i}": i for i in range(10)})
    assert compact.fields == [{"field": f"k{i}", "text": str(i)} for i in range(8)]
    assert compact.more == 2


def test_a_non_object_input_is_one_field_and_no_input_is_none() -> None:
    assert compact_input([1, 2]).fields == [{"field": "input", "text": "[1, 2]"}]
    assert compact_input(None).fields == []


def test_without_show_a_request_says_who_started_it_when_the_flow_version_and_input(
    demo: DemoUsers, client_for: ClientFor
) -> None:
    lines = [{"sku": f"S-{n}", "qty": n} for n in range(1, 8)]
    publish(client_for("analyst"), "no-show", approval_graph())
    run = start(client_for("analyst"), "no-show", {"amount": 300, **INVOICE, "lines": lines})
    pk = request_id(run, "ask")
    [listed] = [r for r in inbox(client_for("finance")) if r["id"] == pk]
    assert ApprovalRequest.objects.get(pk=pk).shown == []
    context = listed["context"]
    assert context["started_at"] == run.created_at.isoformat().replace("+00:00", "Z")
    del context["started_at"]
    assert context == {
        "started_by": "analyst",
        "flow": "no-show",
        "flow_name": "One approval",
        "version": 1,
        "input": [
            {"field": "amount", "text": "300"},
            {"field": "invoice", "text": "{amount: 300, id: I-3, vendor: Acme}"},
            {"field": "lines", "text": "[{qty: 1, sku: S-1}, {qty: 2, sku: S-2}, "
                                       "{qty: 3, sku: S-3}, … 4 more]"},
        ],
        "input_more": 0,
    }  # fmt: skip


def test_with_show_the_chosen_fields_replace_the_input_and_the_rest_stays(
    demo: DemoUsers, client_for: ClientFor
) -> None:
    publish(client_for("analyst"), "shows-total", approval_graph(show=["state.total"]))
    run = start(client_for("analyst"), "shows-total", {"amount": 42, "note": "n"})
    [listed] = inbox(client_for("finance"))
    assert listed["shown"] == [{"field": "state.total", "value": 42}]
    assert listed["context"]["input"] is None
    assert listed["context"]["started_by"] == "analyst"
    assert listed["context"]["flow"] == "shows-total"
    assert listed["id"] == request_id(run, "ask")


def test_a_starter_sees_their_own_runs_request_read_only_with_the_reason(
    demo: DemoUsers, client_for: ClientFor
) -> None:
    finance = client_for("finance")
    run = start(finance, "invoice-sign-off", INVOICE)
    pk = request_id(run, "fin")
    [listed] = [r for r in inbox(finance) if r["run"] == str(run.pk)]
    assert (listed["id"], listed["may_decide"], listed["why_not"]) == (
        pk,
        False,
        {
            "code": "approval.starter",
            "text": "You started this run, so another finance member must decide",
        },
    )
    assert finance.get("/api/approvals/count/").json() == {"open": 0, "overdue": 0}


def test_the_reason_names_the_starters_own_seat_on_a_request_of_two_groups(
    demo: DemoUsers, client_for: ClientFor
) -> None:
    graph = approval_graph(policy="all")
    graph["nodes"][2]["groups"] = ["finance", "legal"]
    publish(client_for("analyst"), "two-seats", graph)
    run = start(client_for("legal"), "two-seats", {"amount": 1})
    [listed] = inbox(client_for("legal"))
    assert listed["why_not"]["text"] == "You started this run, so another legal member must decide"
    [other] = inbox(client_for("finance"))
    assert (other["may_decide"], other["why_not"]) == (True, None)
    assert other["id"] == listed["id"] == request_id(run, "ask")


def test_a_starter_outside_the_groups_does_not_get_the_request_in_their_inbox(
    demo: DemoUsers, client_for: ClientFor
) -> None:
    start(client_for("analyst"), "invoice-sign-off", INVOICE)
    assert inbox(client_for("analyst")) == []


def test_a_node_that_allows_the_starter_lists_it_as_decidable(
    demo: DemoUsers, client_for: ClientFor
) -> None:
    publish(client_for("analyst"), "self-ok", approval_graph(allow_starter=True))
    start(client_for("finance"), "self-ok", {"amount": 3})
    [listed] = inbox(client_for("finance"))
    assert (listed["may_decide"], listed["why_not"]) == (True, None)


def test_an_admin_sees_why_they_may_not_decide(demo: DemoUsers, client_for: ClientFor) -> None:
    start(client_for("analyst"), "invoice-sign-off", INVOICE)
    listed = {r["node"]: r for r in inbox(client_for("admin"))}
    assert listed["fin"]["why_not"] == {
        "code": "approval.not_an_approver",
        "text": "You see this as an admin; its approvers decide it.",
    }


def test_an_admin_who_started_the_run_outside_its_groups_reads_the_admins_reason(
    demo: DemoUsers, client_for: ClientFor
) -> None:
    start(client_for("admin"), "invoice-sign-off", INVOICE)
    listed = {r["node"]: r for r in inbox(client_for("admin"))}
    assert listed["fin"]["why_not"] == {
        "code": "approval.not_an_approver",
        "text": "You see this as an admin; its approvers decide it.",
    }


def test_the_inbox_lists_with_as_many_queries_for_four_requests_as_for_one(
    demo: DemoUsers, client_for: ClientFor, django_assert_num_queries: DjangoAssertNumQueries
) -> None:
    finance = client_for("finance")
    start(finance, "invoice-sign-off", INVOICE)
    inbox(finance)
    with django_assert_num_queries(6):
        assert len(inbox(finance)) == 1
    for _ in range(3):
        start(client_for("analyst"), "invoice-sign-off", INVOICE)
    with django_assert_num_queries(6):
        assert len(inbox(finance)) == 4


def test_the_inbox_reads_no_graph_draft_snapshot_or_state_of_what_it_lists(
    demo: DemoUsers, client_for: ClientFor
) -> None:
    """Those columns grow with the flow and the run, and the inbox shows none of them:
    loaded with each request, a page of 500 requests of a 150-node flow took 0.35-0.5 s
    to read instead of 0.09 s (they were decoded once per request)."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    start(client_for("analyst"), "invoice-sign-off", INVOICE)
    with CaptureQueriesContext(connection) as captured:
        (listed,) = inbox(client_for("finance"))
    read = " ".join(q["sql"] for q in captured.captured_queries)
    unread = ['"engine_run"."graphs"', '"engine_run"."snapshot"', '"engine_run"."state"',
              '"engine_run"."redrive"', '"designer_flowversion"."graph"',
              '"designer_flow"."draft"']  # fmt: skip
    assert [column for column in unread if column in read] == []
    assert '"engine_run"."input"' in read
    assert {k: listed["context"][k] for k in ("started_by", "flow", "flow_name", "version")} == {
        "started_by": "analyst", "flow": "invoice-sign-off", "flow_name": "Invoice sign-off",
        "version": 1,
    }  # fmt: skip
