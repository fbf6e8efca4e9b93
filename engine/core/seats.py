"""Seats of an approval: one vote per person, counted against the request's policy.

Under `all`, a person's vote covers one group, never two, whatever groups they belong to or
were handed: the votes meet the policy when every group can be given a voter of its own
(a matching of voters to groups). A member of both finance and legal approves for one of
them, and the request still needs someone else for the other. `any` needs one person and
`{"quorum": n}` needs n different people, as before.
"""

from collections.abc import Iterable, Mapping, Sequence

from engine.core import graph as g


def matching(groups: Sequence[str], holders: Mapping[str, Iterable[str]]) -> dict[str, str]:
    """Return group -> person giving as many groups as possible a different person each.

    `holders` maps each person to the groups their one vote may count for; persons are
    tried in its order, and a later person may move an earlier one to another of their
    groups (augmenting paths), so the result does not depend on who voted first.
    """
    wanted = set(groups)
    held = {person: [grp for grp in dict.fromkeys(seats) if grp in wanted]
            for person, seats in holders.items()}  # fmt: skip
    owner: dict[str, str] = {}

    def seat(person: str, tried: set[str]) -> bool:
        for grp in held[person]:
            if grp in tried:
                continue
            tried.add(grp)
            if grp not in owner or seat(owner[grp], tried):
                owner[grp] = person
                return True
        return False

    for person in held:
        if len(owner) == len(wanted):
            break
        seat(person, set())
    return owner


def people_needed(
    policy: g.ApprovalPolicy, groups: Sequence[str], votes: Mapping[str, Iterable[str]]
) -> int:
    """Return how many more people must approve before the policy is met (0: it is met)."""
    if policy.kind is g.PolicyKind.ANY:
        return 0 if votes else 1
    if policy.kind is g.PolicyKind.QUORUM:
        return max(0, (policy.quorum or 1) - len(votes))
    return len(set(groups)) - len(matching(groups, votes))


def can_be_met(
    policy: g.ApprovalPolicy,
    groups: Sequence[str],
    votes: Mapping[str, Iterable[str]],
    able: Mapping[str, Iterable[str]],
) -> bool:
    """Return whether the votes recorded and the people still `able` to decide (person ->
    the groups their vote may count for) could together meet the policy."""
    everyone = {**{p: list(s) for p, s in able.items() if p not in votes}, **votes}
    return people_needed(policy, groups, everyone) == 0
