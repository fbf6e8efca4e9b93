"""Segregation of duties survives delegation and reassignment (docs/approvals.md, "Who may
decide"): one person, one vote; a delegate passes every rule its delegator passes; a
delegation chain never returns; a hand-over never leaves a request nobody can meet."""

import io
from typing import Any

import pytest
from django.contrib.auth.models import Group, User
from django.core.management import call_command
from django.test import Client

from approvals import refusals, services
from approvals.models import ApprovalEvent, ApprovalRequest
from engine.models import Run
from runs import services as run_services
from tests.django.approval_helpers import (
    approval_graph,
    decide,
    footprint,
    post,
    publish,
    request_id,
    start,
)
from tests.django.durable_driver import drain
from tests.django.fixture_types import ClientFor, DemoUsers

pytestmark = pytest.mark.django_db


def member(name: str, *groups: str, active: bool = True) -> User:
    """Create a user in these groups."""
    user = User.objects.create_user(name, is_active=active)
    for group in groups:
        user.groups.add(Group.objects.get_or_create(name=group)[0])
    return user


def client_of(user: User) -> Client:
    """Return a client logged in as the user."""
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def people(demo: DemoUsers) -> dict[str, User]:
    """The demo users, two more of finance, one more of legal, and one of both."""
    return {
        **demo,
        "controller": member("controller", "finance"),
        "auditor": member("auditor", "finance"),
        "counsel": member("counsel", "legal"),
        "dual": member("dual", "finance", "legal"),
    }


def both_groups_graph() -> dict[str, Any]:
    """Return a flow whose one approval needs finance and legal (`all`)."""
    graph = approval_graph(policy="all")
    graph["nodes"][2]["groups"] = ["finance", "legal"]
    return graph


@pytest.fixture
def both(people: dict[str, User], client_for: ClientFor) -> Run:
    """A durable run started by the analyst, waiting on one request of finance and legal."""
    publish(client_for("analyst"), "both-groups", both_groups_graph())
    return start(client_for("analyst"), "both-groups", {"amount": 7})


def hand_over(approval_pk: int, user: User, to: str) -> refusals.DecisionRefused | None:
    """Delegate through the service; return the refusal (None when it was taken)."""
    try:
        services.delegate(ApprovalRequest.objects.get(pk=approval_pk), user, to)
    except refusals.DecisionRefused as refused:
        return refused
    return None


def seats(pk: int) -> tuple[Any, ...]:
    """Return what a refused hand-over must leave as it was: delegations, assignee, audit."""
    request = ApprovalRequest.objects.get(pk=pk)
    return (request.delegations, request.assignee_id, ApprovalEvent.objects.count())


# ------------------------------------------------------------------ one person, one vote


@pytest.mark.parametrize("second", ["finance", "legal"])
def test_a_member_of_both_groups_approving_alone_does_not_close_an_all_request(
    people: dict[str, User], both: Run, client_for: ClientFor, second: str
) -> None:
    pk, dual = request_id(both, "ask"), client_of(people["dual"])
    assert decide(dual, pk, "approve").status_code == 202
    run = drain(both)
    assert (run.status, ApprovalRequest.objects.get(pk=pk).status) == ("waiting", "open")
    assert dual.get(f"/api/approvals/{pk}/").json()["may_decide"] is False
    # The dual member's vote counts for whichever group the second person does not cover.
    assert decide(client_for(second), pk, "approve").status_code == 202
    run = drain(run)
    assert (run.status, run.state["decision"]) == ("completed", "approved")


def test_braid_decide_counts_a_dual_members_one_vote_once_on_an_in_process_run(
    people: dict[str, User],
) -> None:
    state = run_services.start_run(both_groups_graph(), "both", {"amount": 7},
                                      started_by=people["analyst"])  # fmt: skip
    out = io.StringIO()
    call_command("braid", "decide", state.run_id, "ask", "approve", user="dual", stdout=out)
    assert ApprovalRequest.objects.get(run_id=state.run_id).status == "open"
    call_command("braid", "decide", state.run_id, "ask", "approve", user="legal", stdout=out)
    request = ApprovalRequest.objects.get(run_id=state.run_id)
    assert (request.status, request.outcome, request.decided_by) == (
        "closed",
        "approved",
        ["dual", "legal"],
    )


# ------------------------------------------------------------------ the attacker's findings


def test_a_legal_member_cannot_hand_their_seat_to_a_finance_member(
    people: dict[str, User], both: Run, client_for: ClientFor
) -> None:
    pk, legal = request_id(both, "ask"), client_for("legal")
    before = footprint(both), seats(pk)
    refused = post(legal, f"/api/approvals/{pk}/delegate/", {"to": "finance"})
    assert (refused.status_code, refused.json()) == (
        400,
        {
            "code": "approval.delegate_holds_seat",
            "detail": "finance is in ['finance'], another group of the approval at ask: they "
            "hold a seat there already (one person, one vote)",
        },
    )
    assert (footprint(both), seats(pk)) == before
    # Handed to another member of legal instead, finance still needs a second person.
    assert post(legal, f"/api/approvals/{pk}/delegate/", {"to": "counsel"}).status_code == 200
    assert decide(client_for("finance"), pk, "approve").status_code == 202
    assert drain(both).status == "waiting"
    assert decide(client_of(people["counsel"]), pk, "approve").status_code == 202
    assert drain(both).status == "completed"


def test_delegating_back_to_the_delegator_is_refused_and_the_delegate_keeps_the_part(
    people: dict[str, User], both: Run, client_for: ClientFor
) -> None:
    pk, controller = request_id(both, "ask"), client_of(people["controller"])
    assert post(client_for("finance"), f"/api/approvals/{pk}/delegate/",
                {"to": "controller"}).status_code == 200  # fmt: skip
    before = footprint(both), seats(pk)
    back = post(controller, f"/api/approvals/{pk}/delegate/", {"to": "finance"})
    assert (back.status_code, back.json()) == (
        400,
        {
            "code": "approval.delegation_cycle",
            "detail": "finance -> controller -> finance: the part of the approval at ask would "
            "return to finance, who passed it on",
        },
    )
    assert (footprint(both), seats(pk)) == before
    assert controller.get(f"/api/approvals/{pk}/").json()["may_decide"] is True
    assert decide(controller, pk, "approve").status_code == 202


def test_a_longer_chain_never_returns_to_its_first_delegator(
    people: dict[str, User], both: Run
) -> None:
    pk = request_id(both, "ask")
    assert hand_over(pk, people["finance"], "controller") is None
    assert hand_over(pk, people["controller"], "auditor") is None
    before = seats(pk)
    refused = hand_over(pk, people["auditor"], "finance")
    assert refused is not None
    assert (refused.code, refused.http_status, str(refused)) == (
        "approval.delegation_cycle",
        400,
        "finance -> controller -> auditor -> finance: the part of the approval at ask would "
        "return to finance, who passed it on",
    )
    assert seats(pk) == before


# ------------------------------------------------------------------ every rule, through the service


def test_each_delegate_rule_refuses_with_its_code_and_changes_nothing(
    people: dict[str, User], both: Run, client_for: ClientFor
) -> None:
    pk = request_id(both, "ask")
    member("retired", "finance", active=False)
    assert decide(client_of(people["auditor"]), pk, "approve").status_code == 202
    assert hand_over(pk, people["legal"], "counsel") is None
    cases = [
        (people["finance"], "retired", "approval.delegate_inactive",
         "no active user is named 'retired'"),
        (people["finance"], "finance", "approval.delegate_self", "delegate to someone else"),
        (people["finance"], "analyst", "approval.delegate_is_starter",
         f"analyst started run {both.pk} and so may not decide its approvals (segregation "
         "of duties)"),
        (people["finance"], "auditor", "approval.delegate_decided",
         "auditor has already decided the approval at ask (one person, one vote)"),
        (people["finance"], "admin", "approval.delegate_not_member",
         "admin is in none of the groups ['finance']"),
        (people["finance"], "counsel", "approval.delegate_holds_seat",
         "counsel already holds a part of the approval at ask (one person, one vote)"),
        (people["controller"], "legal", "approval.delegate_passed_on",
         "legal delegated their part of the approval at ask away"),
        (people["auditor"], "controller", "approval.already_decided",
         "auditor has already decided the approval at ask"),
        (people["legal"], "dual", "approval.delegated", "legal delegated the approval at ask "
         "to counsel"),
    ]  # fmt: skip
    before = seats(pk)
    got = []
    for user, to, _, _ in cases:
        refused = hand_over(pk, user, to)
        got.append((user.username, to, refused and refused.code, refused and str(refused)))
    assert got == [(u.username, to, code, detail) for u, to, code, detail in cases]
    assert seats(pk) == before


def test_a_part_already_held_cannot_be_given_a_second_time(
    people: dict[str, User], both: Run
) -> None:
    pk = request_id(both, "ask")
    assert hand_over(pk, people["finance"], "controller") is None
    refused = hand_over(pk, people["auditor"], "controller")
    assert refused is not None
    assert (refused.code, str(refused)) == (
        "approval.delegate_holds_seat",
        "controller already holds a part of the approval at ask (one person, one vote)",
    )


def test_a_member_of_both_groups_cannot_receive_a_part_of_either(
    people: dict[str, User], both: Run
) -> None:
    pk = request_id(both, "ask")
    refused = hand_over(pk, people["finance"], "dual")
    assert refused is not None
    assert (refused.code, str(refused)) == (
        "approval.delegate_holds_seat",
        "dual is in ['legal'], another group of the approval at ask: they hold a seat there "
        "already (one person, one vote)",
    )


# ------------------------------------------------------------------ always someone to decide


@pytest.fixture
def board_vote(demo: DemoUsers, client_for: ClientFor) -> tuple[Run, dict[str, User]]:
    """A run waiting on a quorum of two of the board, which has exactly two members."""
    board = {name: member(name, "board") for name in ("ann", "bob")}
    graph = approval_graph(policy={"quorum": 2})
    graph["nodes"][2]["groups"] = ["board"]
    publish(client_for("analyst"), "board-vote", graph)
    return start(client_for("analyst"), "board-vote", {"amount": 1}), board


def test_a_delegation_that_leaves_too_few_people_for_the_quorum_is_refused(
    board_vote: tuple[Any, dict[str, User]],
) -> None:
    run, board = board_vote
    pk = request_id(run, "ask")
    before = footprint(run), seats(pk)
    refused = post(client_of(board["ann"]), f"/api/approvals/{pk}/delegate/", {"to": "bob"})
    assert (refused.status_code, refused.json()) == (
        409,
        {
            "code": "approval.would_strand",
            "detail": "after this delegation too few people could decide the approval at ask to "
            'meet its policy {"quorum": 2}',
        },
    )
    assert (footprint(run), seats(pk)) == before
    member("cy", "board")
    assert hand_over(pk, board["ann"], "bob") is None  # cy and bob still make two


def test_a_deactivated_delegate_gives_the_part_back_to_its_delegator(
    people: dict[str, User], both: Run
) -> None:
    pk = request_id(both, "ask")
    assert hand_over(pk, people["finance"], "controller") is None
    assert hand_over(pk, people["controller"], "auditor") is None
    people["auditor"].is_active = False
    people["auditor"].save()
    request = ApprovalRequest.objects.get(pk=pk)
    assert (request.delegations, request.delegated_from, request.delegated_to) == (
        [{"from": "finance", "to": "controller", "groups": ["finance"]}],
        ["finance"],
        ["controller"],
    )
    returned = ApprovalEvent.objects.get(request_id=pk, kind="returned")
    assert (returned.actor, returned.detail) == (
        "",
        {"from": "auditor", "to": "controller", "reason": "the delegate can no longer decide"},
    )
    assert services.may_decide(request, people["controller"], ["finance"]) is True
    people["controller"].delete()
    request.refresh_from_db()
    assert (request.delegations, services.may_decide(request, people["finance"], ["finance"])) == (
        [],
        True,
    )


# ------------------------------------------------------------------ reassignment


def test_a_request_that_needs_two_people_is_not_reassigned_to_one(
    people: dict[str, User], both: Run, client_for: ClientFor
) -> None:
    pk, admin = request_id(both, "ask"), client_for("admin")
    before = footprint(both), seats(pk)
    refused = post(admin, f"/api/approvals/{pk}/reassign/", {"to": "dual"})
    assert (refused.status_code, refused.json()) == (
        409,
        {
            "code": "approval.needs_people",
            "detail": 'the approval at ask still needs 2 people (policy "all" over finance, '
            "legal): one person cannot decide it; delegate parts instead",
        },
    )
    assert (footprint(both), seats(pk)) == before
    # Once finance has decided, one person is all it needs: the admin may name them.
    assert decide(client_for("finance"), pk, "approve").status_code == 202
    taken = post(admin, f"/api/approvals/{pk}/reassign/", {"to": "finance"})
    assert (taken.status_code, taken.json()["code"]) == (400, "approval.delegate_decided")
    assert post(admin, f"/api/approvals/{pk}/reassign/", {"to": "counsel"}).status_code == 200
    assert decide(client_of(people["counsel"]), pk, "approve").status_code == 202
    assert drain(both).state["decision"] == "approved"


def test_an_assignee_cannot_pass_a_reassigned_request_on(
    people: dict[str, User], both: Run, client_for: ClientFor
) -> None:
    pk = request_id(both, "ask")
    assert decide(client_for("legal"), pk, "approve").status_code == 202
    assert post(client_for("admin"), f"/api/approvals/{pk}/reassign/",
                {"to": "controller"}).status_code == 200  # fmt: skip
    refused = post(client_of(people["controller"]), f"/api/approvals/{pk}/delegate/",
                   {"to": "auditor"})  # fmt: skip
    assert (refused.status_code, refused.json()) == (
        403,
        {
            "code": "approval.assigned",
            "detail": "the approval at ask was reassigned to controller by an admin: only an "
            "admin moves it on",
        },
    )


# ------------------------------------------------------------------ both runtimes


def test_an_in_process_decision_counts_for_the_one_vote_rule_of_delegation(
    people: dict[str, User],
) -> None:
    state = run_services.start_run(both_groups_graph(), "both", {"amount": 7},
                                      started_by=people["analyst"])  # fmt: skip
    call_command("braid", "decide", state.run_id, "ask", "approve", user="controller",
                 stdout=io.StringIO())  # fmt: skip
    pk = ApprovalRequest.objects.get(run_id=state.run_id).pk
    refused = hand_over(pk, people["finance"], "controller")
    assert refused is not None
    assert (refused.code, str(refused)) == (
        "approval.delegate_decided",
        "controller has already decided the approval at ask (one person, one vote)",
    )
    refused = hand_over(pk, people["controller"], "auditor")
    assert refused is not None
    assert refused.code == "approval.already_decided"
