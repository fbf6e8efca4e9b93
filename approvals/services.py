"""Approval requests: whose they are, who may decide them, and recording what people do.

A decision on a durable run goes into the run's inbox like every other event, keyed by
request and person, so a second identical decision records nothing. The engine applies
it with the run's next step, which also closes the request when its policy is met.

Who may decide (docs/approvals.md): a member of one of the request's groups, except the
run's starter (unless the node sets `allow_starter`) and except a person who delegated
their part to someone else; the person a part was delegated to; and, once an admin has
reassigned the request, only its assignee. One person has one vote (engine/core/seats.py):
a hand-over never gives anyone a second seat, never returns along its chain, and never
leaves a request that the people able to decide could not meet. Every step is audited
(approvals/audit.py).
"""

import contextlib
import datetime as dt
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth import models as auth
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db import transaction
from django.db.models import Q, QuerySet
from django.db.models.signals import post_delete
from django.utils import timezone

from approvals import audit, notify
from approvals.context import with_related
from approvals.models import (
    ApprovalEvent,
    ApprovalRequest,
    ApprovalStatus,
    EventKind,
    NoticeReason,
)
from approvals.refusals import (
    AlreadyDecided,
    ApprovalClosed,
    AssignedElsewhere,
    DecisionRefused,
    DelegatedAway,
    DelegateDecided,
    DelegateHoldsSeat,
    DelegateInactive,
    DelegateIsSelf,
    DelegateIsStarter,
    DelegateNotMember,
    DelegatePassedOn,
    DelegationCycle,
    NeedsMorePeople,
    NotAnApprover,
    RunsInProcess,
    StaleExecution,
    StarterMayNotDecide,
    WouldStrand,
)
from engine.core import graph as g
from engine.core import seats
from engine.core.events import ApprovalDecided, Decision
from engine.core.nodes.approval import approval_outcome
from engine.core.runtime import OpenApproval, choose_approval
from engine.models import Run, Runtime
from engine.runtime import attempts, clock, inbox
from web.auth import Role, group_names, has_role

User = AbstractBaseUser | AnonymousUser

# ---------------------------------------------------------------------------- who sees what


def visible_requests(user: User, groups: Sequence[str] | None = None) -> QuerySet[ApprovalRequest]:
    """Return the requests a user may see: of their groups, given to them, or all (admins).

    `groups` are the user's group names when the caller has them (saves a query).
    """
    requests = with_related()
    if has_role(user, Role.ADMINS, groups):
        return requests
    groups = list(group_names(user) if groups is None else groups)
    mine = Q(groups__overlaps=groups) | Q(assignee_id=user.pk)
    return requests.filter(mine | Q(delegated_to__overlaps=[user.get_username()]))


def actionable(user: User, groups: Sequence[str] | None = None) -> Q:
    """Return the condition for requests the user may decide now (open ones only)."""
    username = user.get_username()
    groups = list(group_names(user) if groups is None else groups)
    unassigned = Q(assignee__isnull=True) & (
        Q(groups__overlaps=groups) | Q(delegated_to__overlaps=[username])
    )
    not_away = ~Q(delegated_from__overlaps=[username])
    not_decided = ~Q(decided_by__overlaps=[username])
    not_starter = ~Q(starter_id=user.pk) | Q(allow_starter=True)
    return Q(status=ApprovalStatus.OPEN) & (
        (unassigned & not_away) | Q(assignee_id=user.pk)
    ) & not_decided & not_starter  # fmt: skip


def held_back_as_starter(user: User, groups: Sequence[str]) -> Q:
    """Return the condition for open requests of the user's groups on runs they started,
    which segregation of duties keeps them from deciding: listed read-only, with why."""
    return (
        Q(status=ApprovalStatus.OPEN, starter_id=user.pk, allow_starter=False)
        & Q(groups__overlaps=list(groups))
        & Q(assignee__isnull=True)
    )


def open_requests(user: User, groups: Sequence[str] | None = None) -> QuerySet[ApprovalRequest]:
    """Return the inbox: open requests the user may decide (admins: every open one), and,
    read-only, those of their groups on runs they started (segregation of duties)."""
    requests = with_related()
    requests = requests.filter(status=ApprovalStatus.OPEN)
    if not has_role(user, Role.ADMINS, groups):
        groups = list(group_names(user) if groups is None else groups)
        requests = requests.filter(actionable(user, groups) | held_back_as_starter(user, groups))
    return requests.order_by("-created_at", "-id")


def open_count(user: User) -> int:
    """Return how many open requests the user may decide (the navigation bar's count)."""
    if not user.is_authenticated:
        return 0
    return ApprovalRequest.objects.filter(actionable(user)).count()


def closed_requests(user: User, groups: Sequence[str] | None = None) -> QuerySet[ApprovalRequest]:
    """Return the archive: closed requests the user may see, most recently closed first."""
    requests = visible_requests(user, groups).filter(status=ApprovalStatus.CLOSED)
    return requests.order_by("-closed_at", "-id")


def open_request_at(run_id: str, node: str, execution_id: str | None = None) -> ApprovalRequest:
    """Return a run's one open request at a node path; see choose_approval for the errors."""
    waiting = ApprovalRequest.objects.filter(run_id=run_id, node=node, status=ApprovalStatus.OPEN)
    if execution_id is not None:
        # One request of a thousand open at a node (a foreach's items) is read alone; the
        # rest only to say what is open there when none matches.
        exact = list(waiting.filter(execution_id=execution_id)[:2])
        if len(exact) == 1:
            return exact[0]
    by_key = {r.key: r for r in waiting.order_by("id")}
    places = [OpenApproval(r.key, r.node, r.execution_id) for r in by_key.values()]
    return by_key[choose_approval(places, node, execution_id).key]


# ---------------------------------------------------------------------------- who may decide


def deciding_groups(
    approval: ApprovalRequest, user: AbstractBaseUser, groups: Sequence[str] | None = None
) -> tuple[str, ...]:
    """Return the groups a person's decision counts for; raise why they may not decide.

    An assignee (admin reassignment) decides for every group of the request; a delegate
    decides for the groups of the part they received, and their own. These are the
    groups the vote *may* count for: it counts for one of them under `all`. `groups`: the
    person's group names when the caller has read them.
    """
    username = user.get_username()
    if approval.assignee_id is not None:
        if approval.assignee_id == user.pk:
            return tuple(approval.groups)
        raise AssignedElsewhere(
            f"the approval at {approval.node} was reassigned to {assignee_name(approval)}"
        )
    given = [d for d in approval.delegations if d["from"] == username]
    if given:
        raise DelegatedAway(
            f"{username} delegated the approval at {approval.node} to {given[-1]['to']}"
        )
    own = set(group_names(user) if groups is None else groups) & set(approval.groups)
    received = {grp for d in approval.delegations if d["to"] == username for grp in d["groups"]}
    if not own | received:
        raise NotAnApprover(f"{username} is in none of the groups {approval.groups}")
    return tuple(sorted(own | received))


def assignee_name(approval: ApprovalRequest) -> str:
    """Return the assignee's user name ('' when none)."""
    return approval.assignee.get_username() if approval.assignee else ""


def starter_decides(
    approval: ApprovalRequest, user: AbstractBaseUser, run: Run | None = None
) -> bool:
    """Return whether the user started the request's run (refused unless the node allows it).

    Raise StarterMayNotDecide when the node does not say `allow_starter: true`. `run`: the
    request's run as the caller read it with `started_by_id`, else it is read here.
    """
    if run is None:
        found = Run.objects.filter(pk=approval.run_id).values_list("started_by_id", flat=True)
        started_by = found.first()
    else:
        started_by = run.started_by_id
    if started_by != user.pk:
        return False
    if not approval.allow_starter:
        raise StarterMayNotDecide(
            f"{user.get_username()} started run {approval.run_id} and so may not decide its "
            f"approval at {approval.node} (segregation of duties; the node does not set "
            "allow_starter)"
        )
    return True


def check_may_decide(approval: ApprovalRequest, user: AbstractBaseUser) -> bool:
    """Refuse a person who may not decide the request; return whether they are its starter."""
    deciding_groups(approval, user)
    return starter_decides(approval, user)


def may_decide(approval: ApprovalRequest, user: AbstractBaseUser, groups: Sequence[str]) -> bool:
    """Return whether the user may decide an open request, without queries (for listings).

    `groups` are the user's group names; the request's run must be loaded with it.
    """
    if approval.status != ApprovalStatus.OPEN:
        return False
    username = user.get_username()
    if approval.run.started_by_id == user.pk and not approval.allow_starter:
        return False
    if username in approval.decided_by:
        return False
    if approval.assignee_id is not None:
        return bool(approval.assignee_id == user.pk)
    if username in approval.delegated_from:
        return False
    return bool(set(groups) & set(approval.groups)) or username in approval.delegated_to


@dataclass(frozen=True, slots=True)
class WhyNot:
    """Why a person sees an open request they may not decide: a code and a sentence."""

    code: str
    text: str


def starter_sentence(approval: ApprovalRequest, groups: Sequence[str]) -> str:
    """Return 'You started this run, so another finance member must decide' for the seats
    the starter would hold (their groups among the request's)."""
    seats = [grp for grp in approval.groups if grp in set(groups)]
    return f"You started this run, so another {' or '.join(seats)} member must decide"


def why_not(
    approval: ApprovalRequest, user: AbstractBaseUser, groups: Sequence[str]
) -> WhyNot | None:
    """Return why the user may not decide an open request they see (None: they may, or it is
    closed), without queries: the request's run must be loaded with it (for listings)."""
    if approval.status != ApprovalStatus.OPEN or may_decide(approval, user, groups):
        return None
    username = user.get_username()
    starter = approval.run.started_by_id == user.pk and not approval.allow_starter
    if starter and set(groups) & set(approval.groups):
        # Only a starter who would hold a seat is kept out by segregation of duties; one
        # outside the request's groups reads why anyone outside them may not decide.
        return WhyNot("approval.starter", starter_sentence(approval, groups))
    if username in approval.decided_by:
        return WhyNot(
            "approval.already_decided", "You have decided this one; others still owe theirs."
        )
    if approval.assignee_id is not None:
        name = assignee_name(approval)
        return WhyNot("approval.assigned", f"Reassigned to {name}; only they decide it.")
    if username in approval.delegated_from:
        given = [d["to"] for d in approval.delegations if d["from"] == username] or ["someone"]
        return WhyNot("approval.delegated", f"You delegated your part to {given[-1]}.")
    if Role.ADMINS.value in groups or getattr(user, "is_superuser", False):
        return WhyNot(
            "approval.not_an_approver", "You see this as an admin; its approvers decide it."
        )
    return WhyNot(
        "approval.not_an_approver",
        f"Waiting on {', '.join(approval.groups)}; you are in none of these groups.",
    )


# ---------------------------------------------------------------------------- deciding


def policy_of(approval: ApprovalRequest) -> g.ApprovalNode:
    """Return an approval node with the request's groups and policy (to count votes)."""
    raw = approval.policy
    if isinstance(raw, dict):
        policy = g.ApprovalPolicy(kind=g.PolicyKind.QUORUM, quorum=int(raw["quorum"]))
    else:
        policy = g.ApprovalPolicy(kind=g.PolicyKind(raw))
    return g.ApprovalNode(id=approval.node, groups=tuple(approval.groups), policy=policy)


def recorded_votes(run: Run, approval: ApprovalRequest) -> dict[str, dict[str, Any]]:
    """Return the decisions recorded for the request (applied or not), by user."""
    events = run.pending_events.filter(key__startswith=f"{approval.key}|").order_by("id")
    return {
        e.event["user"]: {"decision": e.event["decision"], "groups": e.event["groups"]}
        for e in events
        if e.event.get("kind") == ApprovalDecided.kind
    }


# What a request's life may change: every column but its id and its run, read again under
# the run's lock before a decision.
CHANGING = tuple(
    f.name for f in ApprovalRequest._meta.concrete_fields if f.name not in ("id", "run")
)


def decide_request(
    approval: ApprovalRequest, user: AbstractBaseUser, decision: Decision, comment: str = "",
    execution_id: str | None = None, user_groups: Sequence[str] | None = None,
) -> str:  # fmt: skip
    """Record one person's decision on a durable run's request; return its inbox key.

    Under the run's lock, so the status checked is the one the last step left, one
    person's two decisions cannot both be recorded, and once the recorded decisions meet
    the policy (one, for `any`) every later one is refused, though not yet applied.
    `user_groups`: the person's group names when the caller has read them.

    The request is read again under the lock, but for its run: the run a reader loaded it
    with (approvals.context.with_related, without the run's graphs and snapshot) stays, and
    the answer's serializer does not load the whole run again.
    """
    username = user.get_username()
    with attempts.holding_run(str(approval.run_id), "runtime", "started_by_id",
                              submits=True) as run:  # fmt: skip
        approval.refresh_from_db(fields=CHANGING)
        if execution_id is not None and execution_id != approval.execution_id:
            raise StaleExecution(
                f"the approval {approval.pk} is for execution {approval.execution_id}, "
                f"not {execution_id}"
            )
        if approval.status == ApprovalStatus.CLOSED:
            raise ApprovalClosed(f"the approval at {approval.node} is closed: {approval.outcome}")
        groups = deciding_groups(approval, user, user_groups)
        starter = starter_decides(approval, user, run)
        if run.runtime != Runtime.DURABLE:
            raise RunsInProcess(
                f"run {run.pk} runs in-process (braid run): decide it with braid decide"
            )
        inbox_key = f"{approval.key}|{username}"
        votes = recorded_votes(run, approval)
        if username in votes:
            raise AlreadyDecided(f"{username} has already decided the approval at {approval.node}")
        if approval_outcome(policy_of(approval), votes) is not None:
            raise ApprovalClosed(
                f"the approval at {approval.node} is already decided by "
                f"{', '.join(sorted(votes))}; the run is applying it"
            )
        event = ApprovalDecided(at=clock.now_text(), key=approval.key, user=username,
                                groups=groups, decision=decision, comment=comment)  # fmt: skip
        inbox.submit(str(run.pk), inbox_key, event)
        approval.decided_by = sorted({*approval.decided_by, username})
        approval.save(update_fields=["decided_by"])
        audit.record(EventKind.DECIDED, approval, username, decision=decision.value,
                     comment=comment, starter=starter, groups=list(groups))  # fmt: skip
        transaction.on_commit(lambda: changed([approval]))
    return inbox_key


@dataclass(frozen=True, slots=True)
class BulkResult:
    """What happened to one request of a bulk decision."""

    id: int
    result: str  # "done" or "refused"
    code: str = ""
    detail: str = ""


def bulk_decide(
    ids: Sequence[int], user: AbstractBaseUser, decision: Decision, comment: str = ""
) -> list[BulkResult]:
    """Decide many requests, each recorded on its own; return one result per id, in order.

    The person's groups are read once, for what they see and for every decision."""
    groups = group_names(user)
    found = {r.pk: r for r in visible_requests(user, groups).filter(pk__in=list(ids))}
    results = []
    for pk in ids:
        approval = found.get(pk)
        if approval is None:
            results.append(BulkResult(pk, "refused", "not_found", f"no request {pk} of yours"))
            continue
        try:
            decide_request(approval, user, decision, comment, user_groups=groups)
        except DecisionRefused as refused:
            results.append(BulkResult(pk, "refused", refused.code, str(refused)))
        else:
            results.append(BulkResult(pk, "done"))
    return results


# ---------------------------------------------------------------------------- seats


def votes_of(approval: ApprovalRequest) -> dict[str, list[str]]:
    """Return who decided the request and the groups each vote may count for.

    Read from the audit's `decided` entries, which both runtimes write with the decision.
    """
    decided = ApprovalEvent.objects.filter(request_id=approval.pk, kind=EventKind.DECIDED)
    return {e.actor: list(e.detail.get("groups", [])) for e in decided.order_by("seq")}


def starter_name(approval: ApprovalRequest) -> str | None:
    """Return the user name of the run's starter (None when nobody started it)."""
    field = f"started_by__{get_user_model().USERNAME_FIELD}"
    return Run.objects.filter(pk=approval.run_id).values_list(field, flat=True).first()


def chain_to(approval: ApprovalRequest, username: str) -> list[str]:
    """Return the delegation chain that reached a person, first delegator first, them last."""
    chain = [username]
    while True:
        given = [d["from"] for d in approval.delegations if d["to"] == chain[0]]
        if not given or given[-1] in chain:
            return chain
        chain.insert(0, given[-1])


def able_to_decide(
    approval: ApprovalRequest, delegations: list[dict[str, Any]], assignee: AbstractBaseUser | None
) -> dict[str, list[str]]:
    """Return who could decide the request under these delegations and assignee, with the
    groups each one's vote may count for: active people only, never the run's starter
    (unless the node allows it), nobody who passed their part on."""
    users = get_user_model().objects.filter(is_active=True)
    name = get_user_model().USERNAME_FIELD
    able: dict[str, list[str]] = {}
    if assignee is not None:
        if assignee.is_active:
            able[assignee.get_username()] = list(approval.groups)
    else:
        members = users.filter(groups__name__in=approval.groups)
        for person, grp in members.values_list(name, "groups__name"):
            able.setdefault(person, []).append(grp)
        received: dict[str, list[str]] = {}
        for d in delegations:
            received.setdefault(d["to"], []).extend(d["groups"])
        active = set(users.filter(**{f"{name}__in": list(received)}).values_list(name, flat=True))
        for person in active:
            able.setdefault(person, []).extend(received[person])
        for d in delegations:
            able.pop(d["from"], None)
    if not approval.allow_starter:
        able.pop(starter_name(approval) or "", None)
    return able


def refuse_stranding(
    approval: ApprovalRequest, delegations: list[dict[str, Any]], votes: dict[str, list[str]]
) -> None:
    """Refuse a hand-over after which the people able to decide could no longer meet the
    request's policy (a quorum of two left with one person, for instance)."""
    policy = policy_of(approval).decision_policy
    now = able_to_decide(approval, approval.delegations, approval.assignee)
    then = able_to_decide(approval, delegations, approval.assignee)
    if seats.can_be_met(policy, approval.groups, votes, now) and not seats.can_be_met(
        policy, approval.groups, votes, then
    ):
        raise WouldStrand(
            f"after this delegation too few people could decide the approval at "
            f"{approval.node} to meet its policy {json.dumps(approval.policy)}"
        )


# ---------------------------------------------------------------------------- delegation


def active_user(username: str) -> auth.User:
    """Return the active user of a name; raise DelegateInactive."""
    found = get_user_model().objects.filter(username=username, is_active=True).first()
    if found is None:
        raise DelegateInactive(f"no active user is named {username!r}")
    return found


def refuse_starter_target(approval: ApprovalRequest, target: AbstractBaseUser) -> None:
    """Refuse to give a request to its run's starter unless the node allows it."""
    started_by = Run.objects.filter(pk=approval.run_id).values_list("started_by_id", flat=True)
    if started_by.first() == target.pk and not approval.allow_starter:
        raise DelegateIsStarter(
            f"{target.get_username()} started run {approval.run_id} and so may not decide "
            "its approvals (segregation of duties)"
        )


def refuse_decided_target(
    approval: ApprovalRequest, target: AbstractBaseUser, votes: dict[str, list[str]]
) -> None:
    """Refuse to give a request to someone who already decided it (one person, one vote)."""
    to = target.get_username()
    if to in votes or to in approval.decided_by:
        raise DelegateDecided(
            f"{to} has already decided the approval at {approval.node} (one person, one vote)"
        )


def refuse_delegate(
    approval: ApprovalRequest, user: AbstractBaseUser, target: AbstractBaseUser,
    groups: Sequence[str], votes: dict[str, list[str]],
) -> None:  # fmt: skip
    """Refuse a delegate who fails a rule the delegator passes, or would hold two seats."""
    to, node = target.get_username(), approval.node
    if target.pk == user.pk:
        raise DelegateIsSelf("delegate to someone else")
    refuse_starter_target(approval, target)
    refuse_decided_target(approval, target, votes)
    chain = chain_to(approval, user.get_username())
    if to in chain:
        raise DelegationCycle(
            f"{' -> '.join([*chain, to])}: the part of the approval at {node} would return "
            f"to {to}, who passed it on"
        )
    if to in approval.delegated_from:
        raise DelegatePassedOn(f"{to} delegated their part of the approval at {node} away")
    if to in approval.delegated_to:
        raise DelegateHoldsSeat(
            f"{to} already holds a part of the approval at {node} (one person, one vote)"
        )
    own = set(group_names(target)) & set(approval.groups)
    if own - set(groups):
        raise DelegateHoldsSeat(
            f"{to} is in {sorted(own - set(groups))}, another group of the approval at {node}: "
            "they hold a seat there already (one person, one vote)"
        )
    if not own:
        raise DelegateNotMember(f"{to} is in none of the groups {sorted(groups)}")


@contextlib.contextmanager
def locked_open(approval: ApprovalRequest) -> Iterator[None]:
    """Hold the request's run for a transaction (attempts.holding_run), reload the
    request and refuse when it is closed."""
    with attempts.holding_run(str(approval.run_id), "pk"):
        approval.refresh_from_db()
        if approval.status == ApprovalStatus.CLOSED:
            raise ApprovalClosed(f"the approval at {approval.node} is closed: {approval.outcome}")
        yield


def delegate(
    approval: ApprovalRequest, user: AbstractBaseUser, to: str, comment: str = ""
) -> ApprovalRequest:
    """Pass the caller's part of a request to a person who may take it (docs/approvals.md)."""
    username = user.get_username()
    with locked_open(approval):
        groups = deciding_groups(approval, user)
        if approval.assignee_id is not None:
            raise AssignedElsewhere(
                f"the approval at {approval.node} was reassigned to {assignee_name(approval)} "
                "by an admin: only an admin moves it on"
            )
        starter_decides(approval, user)
        votes = votes_of(approval)
        if username in votes or username in approval.decided_by:
            raise AlreadyDecided(f"{username} has already decided the approval at {approval.node}")
        target = active_user(to)
        refuse_delegate(approval, user, target, groups, votes)
        given = {"from": username, "to": to, "groups": list(groups)}
        refuse_stranding(approval, [*approval.delegations, given], votes)
        approval.delegations = [*approval.delegations, given]
        approval.delegated_from = sorted({*approval.delegated_from, username})
        approval.delegated_to = sorted({*approval.delegated_to, to})
        approval.save(update_fields=["delegations", "delegated_from", "delegated_to"])
        audit.record(EventKind.DELEGATED, approval, username, to=to, groups=list(groups),
                     comment=comment)  # fmt: skip
        transaction.on_commit(lambda: changed([approval]))
        notify.after_commit_handed_over(approval.pk, to, NoticeReason.DELEGATED, username)
    return approval


def reassign(
    approval: ApprovalRequest, admin: AbstractBaseUser, to: str, comment: str = ""
) -> ApprovalRequest:
    """An admin gives the whole request to one person, who then alone decides it.

    Only when one more person's vote is all the request still needs: one person never
    decides for two seats, an admin's choice or not.
    """
    with locked_open(approval):
        target = active_user(to)
        refuse_starter_target(approval, target)
        votes = votes_of(approval)
        refuse_decided_target(approval, target, votes)
        needed = seats.people_needed(policy_of(approval).decision_policy, approval.groups, votes)
        if needed > 1:
            raise NeedsMorePeople(
                f"the approval at {approval.node} still needs {needed} people (policy "
                f"{json.dumps(approval.policy)} over {', '.join(approval.groups)}): one person "
                "cannot decide it; delegate parts instead"
            )
        before = assignee_name(approval)
        approval.assignee = target
        approval.save(update_fields=["assignee"])
        audit.record(EventKind.REASSIGNED, approval, admin.get_username(), to=to,
                     previous=before, comment=comment)  # fmt: skip
        transaction.on_commit(lambda: changed([approval]))
        notify.after_commit_handed_over(
            approval.pk, to, NoticeReason.REASSIGNED, admin.get_username()
        )
    return approval


def return_parts(username: str) -> int:
    """Give each open part delegated to a person back to whoever delegated it to them.

    For a person who can no longer decide (deactivated or deleted): the part would
    otherwise wait on nobody. A chain A -> B -> C whose C leaves goes back to B, with A's
    part. Return how many requests changed; each change is audited as `returned`.
    """
    held = ApprovalRequest.objects.filter(
        status=ApprovalStatus.OPEN, delegated_to__overlaps=[username]
    )
    changed_requests = []
    for approval in held.order_by("id"):
        with locked_open(approval):
            back = [d for d in approval.delegations if d["to"] == username]
            if not back:
                continue
            kept = [d for d in approval.delegations if d["to"] != username]
            approval.delegations = kept
            approval.delegated_from = sorted({d["from"] for d in kept})
            approval.delegated_to = sorted({d["to"] for d in kept})
            approval.save(update_fields=["delegations", "delegated_from", "delegated_to"])
            audit.append([audit.Entry(EventKind.RETURNED, approval,
                                      detail={"from": username, "to": d["from"],
                                              "reason": "the delegate can no longer decide"})
                          for d in back])  # fmt: skip
            changed_requests.append(approval)
    if changed_requests:
        transaction.on_commit(lambda: changed(changed_requests))
    return len(changed_requests)


def return_parts_of_leaving_user(sender: object, instance: Any, **kwargs: Any) -> None:
    """post_save/post_delete receiver on the user model: a deactivated or deleted user's
    delegated parts go back to their delegators."""
    if kwargs.get("signal") is post_delete or not instance.is_active:
        return_parts(instance.get_username())


# ---------------------------------------------------------------------------- audit helpers


def record_view(approval: ApprovalRequest, user: AbstractBaseUser) -> None:
    """Audit a person's first look at an open request (later looks add nothing)."""
    username = user.get_username()
    if approval.status != ApprovalStatus.OPEN:
        return
    seen = ApprovalEvent.objects.filter(
        request_id=approval.pk, kind=EventKind.VIEWED, actor=username
    )
    if not seen.exists():
        audit.record(EventKind.VIEWED, approval, username)


def record_expired(now: dt.datetime | None = None) -> int:
    """Audit each open request whose due time passed, once; return how many."""
    now = now or timezone.now()
    overdue = ApprovalRequest.objects.filter(status=ApprovalStatus.OPEN, due_at__lte=now)
    noted = ApprovalEvent.objects.filter(kind=EventKind.EXPIRED).values("request_id")
    fresh = list(overdue.exclude(pk__in=noted).order_by("id")[:500])
    audit.append([audit.Entry(EventKind.EXPIRED, r, detail={"due_at": r.due_at.isoformat()})
                  for r in fresh if r.due_at])  # fmt: skip
    return len(fresh)


def changed(requests: Sequence[ApprovalRequest]) -> None:
    """Tell live inboxes that these requests moved (approvals/live.py)."""
    from approvals import live

    live.requests_changed(requests)
