"""One vote per person: under `all` a vote covers one group, however many its voter holds."""

from typing import Any

import pytest

from engine.core import graph as g
from engine.core.seats import can_be_met, matching, people_needed
from tests.core.harness import Driver, append, edge, flow

ALL = g.ApprovalPolicy(kind=g.PolicyKind.ALL)
BOTH = ("finance", "legal")
START, END = {"id": "start", "type": "start"}, {"id": "done", "type": "end"}


def two_group_flow() -> dict[str, Any]:
    """Return a flow with one approval by finance and legal under `all`."""
    return flow(
        [
            START,
            {"id": "ask", "type": "approval", "groups": list(BOTH), "policy": "all"},
            append("yes", "log", "['yes']"),
            END,
        ],
        [edge("start", "ask"), edge("ask", "yes", outcome="approved"), edge("yes", "done")],
        {"log": "append"},
    )


def test_a_member_of_both_groups_approving_alone_leaves_the_request_waiting() -> None:
    driver = Driver(two_group_flow())
    driver.decide("ask", "dual", BOTH, "approve")
    assert (driver.status, driver.refused) == ("waiting", [])
    driver.decide("ask", "dual", BOTH, "approve")
    assert driver.refused[-1].reason == "dual has already decided"
    driver.decide("ask", "lena", ("legal",), "approve")
    assert (driver.status, driver.result) == ("completed", {"log": ["yes"]})


def test_a_later_voter_moves_a_dual_member_to_the_group_nobody_else_covers() -> None:
    # dual took finance first; fred can only cover finance, so dual is moved to legal.
    assert matching(BOTH, {"dual": BOTH, "fred": ("finance",)}) == {
        "finance": "fred",
        "legal": "dual",
    }
    assert people_needed(ALL, BOTH, {"dual": BOTH, "fred": ("finance",)}) == 0


@pytest.mark.parametrize(
    ("votes", "needed"),
    [
        ({}, 2),
        ({"dual": BOTH}, 1),
        ({"delegate": ("finance", "legal", "finance")}, 1),
        ({"fred": ("finance",), "fiona": ("finance",)}, 1),
        ({"fred": ("finance",), "lena": ("legal",)}, 0),
        ({"dual": BOTH, "other": BOTH}, 0),
    ],
)
def test_people_needed_under_all_counts_one_group_per_voter(
    votes: dict[str, tuple[str, ...]], needed: int
) -> None:
    assert people_needed(ALL, BOTH, votes) == needed


def test_people_needed_under_any_and_quorum_counts_people() -> None:
    any_ = g.ApprovalPolicy(kind=g.PolicyKind.ANY)
    quorum = g.ApprovalPolicy(kind=g.PolicyKind.QUORUM, quorum=3)
    assert people_needed(any_, ("finance",), {}) == 1
    assert people_needed(any_, ("finance",), {"a": ()}) == 0
    assert people_needed(quorum, ("finance",), {"a": ("finance",)}) == 2


def test_a_policy_can_be_met_only_by_enough_different_people() -> None:
    quorum = g.ApprovalPolicy(kind=g.PolicyKind.QUORUM, quorum=2)
    assert can_be_met(quorum, ("finance",), {"ann": ("finance",)}, {"bob": ("finance",)}) is True
    assert can_be_met(quorum, ("finance",), {"ann": ("finance",)}, {"ann": ("finance",)}) is False
    assert can_be_met(ALL, BOTH, {}, {"dual": BOTH}) is False
    assert can_be_met(ALL, BOTH, {"dual": BOTH}, {"fred": ("finance",)}) is True
