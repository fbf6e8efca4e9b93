"""Approval node config: title and instructions interpolate CEL, `show`, `due_in_s`."""

import datetime as dt

import pytest
from django.utils import timezone

from approvals.models import ApprovalRequest
from tests.django.approval_helpers import approval_graph, post, publish, request_id, start
from tests.django.fixture_types import ClientFor, DemoUsers

pytestmark = pytest.mark.django_db

CONFIG = {
    "title": "Approve ${string(state.total)} for ${input.vendor}",
    "instructions": "<b>${input.vendor}</b> asks; see ${input.ref}",
    "show": ["state.total", "input.vendor", "input.lines.size()"],
    "due_in_s": 3600,
}


def test_title_instructions_and_shown_values_come_from_the_run_as_text(
    demo: DemoUsers, client_for: ClientFor
) -> None:
    publish(client_for("analyst"), "configured", approval_graph(**CONFIG))
    inputs = {"amount": 1200, "vendor": "Acme <Ltd>", "ref": "PO-7", "lines": [1, 2, 3]}
    run = start(client_for("analyst"), "configured", inputs)
    listed = client_for("finance").get("/api/approvals/").json()["results"]
    assert len(listed) == 1
    row = listed[0]
    assert (row["title"], row["instructions"]) == (
        "Approve 1200 for Acme <Ltd>",
        "<b>Acme <Ltd></b> asks; see PO-7",
    )
    assert row["shown"] == [
        {"field": "state.total", "value": 1200},
        {"field": "input.vendor", "value": "Acme <Ltd>"},
        {"field": "input.lines.size()", "value": 3},
    ]
    approval = ApprovalRequest.objects.get(pk=request_id(run, "ask"))
    assert approval.due_at is not None
    assert (approval.due_at - approval.created_at).total_seconds() == pytest.approx(3600, abs=5)
    assert row["overdue"] is False
    assert client_for("finance").get("/api/approvals/count/").json() == {"open": 1, "overdue": 0}


def test_a_request_past_its_due_time_is_overdue_in_the_list_filters_and_count(
    demo: DemoUsers, client_for: ClientFor
) -> None:
    analyst, finance = client_for("analyst"), client_for("finance")
    publish(analyst, "configured", approval_graph(**CONFIG))
    late = start(analyst, "configured", {"amount": 1, "vendor": "Late", "ref": "", "lines": []})
    start(analyst, "configured", {"amount": 2, "vendor": "Early", "ref": "", "lines": []})
    ApprovalRequest.objects.filter(run=late).update(due_at=timezone.now() - dt.timedelta(minutes=5))
    rows = finance.get("/api/approvals/").json()["results"]
    assert [(r["title"], r["overdue"]) for r in rows] == [
        ("Approve 2 for Early", False),
        ("Approve 1 for Late", True),
    ]
    only = finance.get("/api/approvals/?overdue=true").json()["results"]
    assert [r["title"] for r in only] == ["Approve 1 for Late"]
    others = finance.get("/api/approvals/?overdue=false").json()["results"]
    assert [r["title"] for r in others] == ["Approve 2 for Early"]
    assert finance.get("/api/approvals/count/").json() == {"open": 2, "overdue": 1}
    assert finance.get("/api/approvals/?overdue=maybe").status_code == 400


@pytest.mark.parametrize(
    ("config", "problem"),
    [
        ({"show": ["state.nothing"]}, ("state.read_undeclared", "show[0]")),
        ({"show": "state.total"}, ("field.type", "show")),
        ({"show": ["state.total +"]}, ("expression.syntax", "show[0]")),
        ({"due_in_s": 0}, ("field.value", "due_in_s")),
        ({"due_in_s": "soon"}, ("field.type", "due_in_s")),
        ({"allow_starter": 1}, ("field.type", "allow_starter")),
    ],
)
def test_bad_approval_config_is_refused_with_the_field_at_fault(
    demo: DemoUsers, client_for: ClientFor, config: dict[str, object], problem: tuple[str, str]
) -> None:
    analyst = client_for("analyst")
    assert (
        post(analyst, "/api/flows/", {"slug": "bad", "draft": approval_graph(**config)}).status_code
        == 201
    )
    report = post(analyst, "/api/flows/bad/validate/", {}).json()
    assert [(p["code"], p.get("field")) for p in report["errors"]] == [problem]
