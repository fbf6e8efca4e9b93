"""Delegation (an approver passes their part on) and reassignment (an admin moves it all)."""

import pytest
from django.contrib.auth.models import Group, User
from django.test import Client

from approvals.models import ApprovalEvent
from tests.django.approval_helpers import (
    INVOICE,
    decide,
    footprint,
    post,
    request_id,
    start,
)
from tests.django.durable_driver import drain
from tests.django.fixture_types import ClientFor, DemoUsers

pytestmark = pytest.mark.django_db


@pytest.fixture
def controller(demo: DemoUsers) -> Client:
    """A second member of finance, logged in."""
    user = User.objects.create_user("controller", password="braid-controller-pw")
    user.groups.add(Group.objects.get(name="finance"))
    client = Client()
    client.force_login(user)
    return client


def inbox_nodes(client: Client) -> list[str]:
    """Return the nodes of the caller's open requests."""
    return [r["node"] for r in client.get("/api/approvals/").json()["results"]]


def count(client: Client) -> int:
    """Return the caller's navigation count."""
    open_count: int = client.get("/api/approvals/count/").json()["open"]
    return open_count


def test_a_delegated_request_moves_to_the_delegate_and_the_delegator_loses_it(
    demo: DemoUsers, client_for: ClientFor, controller: Client
) -> None:
    finance = client_for("finance")
    run = start(client_for("analyst"), "invoice-sign-off", INVOICE)
    fin = request_id(run, "fin")
    assert (inbox_nodes(finance), inbox_nodes(controller)) == (["fin"], ["fin"])
    handed = post(
        finance, f"/api/approvals/{fin}/delegate/", {"to": "controller", "comment": "away"}
    )
    assert handed.status_code == 200, handed.content
    assert handed.json()["delegations"] == [
        {"from": "finance", "to": "controller", "groups": ["finance"]}
    ]
    assert (inbox_nodes(finance), count(finance)) == ([], 0)
    assert (inbox_nodes(controller), count(controller)) == (["fin"], 1)
    before = footprint(run)
    refused = decide(finance, fin, "approve")
    assert (refused.status_code, refused.json()) == (
        403,
        {
            "code": "approval.delegated",
            "detail": "finance delegated the approval at fin to controller",
        },
    )
    again = post(finance, f"/api/approvals/{fin}/delegate/", {"to": "controller"})
    assert (again.status_code, again.json()["code"]) == (403, "approval.delegated")
    assert footprint(run) == before
    assert decide(controller, fin, "approve", "ok for finance").status_code == 202
    assert decide(client_for("legal"), request_id(run, "leg"), "approve").status_code == 202
    run = drain(run)
    assert run.status == "completed"
    delegated = ApprovalEvent.objects.get(request_id=fin, kind="delegated")
    assert (delegated.actor, delegated.detail) == (
        "finance",
        {"to": "controller", "groups": ["finance"], "comment": "away"},
    )


@pytest.mark.parametrize(
    ("to", "code", "detail"),
    [
        ("legal", "approval.delegate_not_member", "legal is in none of the groups ['finance']"),
        ("finance", "approval.delegate_self", "delegate to someone else"),
        ("ghost", "approval.delegate_inactive", "no active user is named 'ghost'"),
    ],
)
def test_a_request_is_delegated_only_to_another_active_member_of_its_groups(
    demo: DemoUsers, client_for: ClientFor, to: str, code: str, detail: str
) -> None:
    run = start(client_for("analyst"), "invoice-sign-off", INVOICE)
    before = footprint(run)
    refused = post(
        client_for("finance"), f"/api/approvals/{request_id(run, 'fin')}/delegate/", {"to": to}
    )
    assert (refused.status_code, refused.json()) == (
        400,
        {"code": code, "detail": detail},
    )
    assert footprint(run) == before


def test_the_starter_can_neither_delegate_nor_receive_their_runs_request(
    demo: DemoUsers, client_for: ClientFor, controller: Client
) -> None:
    run = start(controller, "invoice-sign-off", INVOICE)
    fin = request_id(run, "fin")
    refused = post(client_for("finance"), f"/api/approvals/{fin}/delegate/", {"to": "controller"})
    assert (refused.status_code, refused.json()["code"]) == (400, "approval.delegate_is_starter")
    own = post(controller, f"/api/approvals/{fin}/delegate/", {"to": "finance"})
    assert (own.status_code, own.json()["code"]) == (403, "approval.starter")
    # Listed read-only with the reason (segregation of duties), never counted as theirs.
    assert (inbox_nodes(controller), count(controller)) == (["fin"], 0)


def test_an_admin_reassigns_a_request_to_anyone_who_then_alone_decides_it(
    demo: DemoUsers, client_for: ClientFor, controller: Client
) -> None:
    finance, legal, admin = client_for("finance"), client_for("legal"), client_for("admin")
    run = start(client_for("analyst"), "invoice-sign-off", INVOICE)
    fin = request_id(run, "fin")
    refused = post(finance, f"/api/approvals/{fin}/reassign/", {"to": "legal"})
    assert refused.status_code == 403
    moved = post(admin, f"/api/approvals/{fin}/reassign/", {"to": "legal", "comment": "cover"})
    assert (moved.status_code, moved.json()["assignee"]) == (200, "legal")
    assert sorted(inbox_nodes(legal)) == ["fin", "leg"]
    assert inbox_nodes(finance) == inbox_nodes(controller) == []
    before = footprint(run)
    taken = decide(finance, fin, "approve")
    assert (taken.status_code, taken.json()) == (
        403,
        {"code": "approval.assigned", "detail": "the approval at fin was reassigned to legal"},
    )
    assert footprint(run) == before
    assert decide(legal, fin, "approve").status_code == 202
    assert decide(legal, request_id(run, "leg"), "approve").status_code == 202
    run = drain(run)
    assert (run.status, run.state["log"]) == ("completed", ["finance approved", "legal approved"])
    event = ApprovalEvent.objects.get(request_id=fin, kind="reassigned")
    assert (event.actor, event.detail) == (
        "admin",
        {"to": "legal", "previous": "", "comment": "cover"},
    )


def test_a_closed_request_cannot_be_delegated_or_reassigned(
    demo: DemoUsers, client_for: ClientFor
) -> None:
    run = start(client_for("analyst"), "invoice-sign-off", INVOICE)
    fin = request_id(run, "fin")
    assert decide(client_for("finance"), fin, "approve").status_code == 202
    drain(run)
    for client, verb in ((client_for("finance"), "delegate"), (client_for("admin"), "reassign")):
        late = post(client, f"/api/approvals/{fin}/{verb}/", {"to": "legal"})
        assert (late.status_code, late.json()) == (
            409,
            {"code": "approval.closed", "detail": "the approval at fin is closed: approved"},
        )
