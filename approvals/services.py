"""Approval requests: whose they are, which one a person means, and recording a decision.

A decision on a durable run goes into the run's inbox like every other event, keyed by
request and person, so a second identical decision records nothing. The engine applies
it with the run's next step, which also closes the request when its policy is met.
"""

import datetime as dt

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone

from approvals import audit
from approvals.models import ApprovalEvent, ApprovalRequest, ApprovalStatus, EventKind
from braid.auth import Role, group_names, has_role
from engine import durable
from engine.core.events import ApprovalDecided, Decision
from engine.core.runtime import EventRefused, OpenApproval, choose_approval
from engine.models import Run, Runtime

User = AbstractBaseUser | AnonymousUser


class DecisionRefused(EventRefused):
    """A decision that was not recorded; `code` says why, for machines."""

    code = "approval.refused"


class NotAnApprover(DecisionRefused):
    """The person is in none of the request's groups."""

    code = "approval.not_an_approver"


class StarterMayNotDecide(DecisionRefused):
    """Segregation of duties: the run's starter may not decide its approvals."""

    code = "approval.starter"


class ApprovalClosed(DecisionRefused):
    """The request was decided, or its step was cancelled."""

    code = "approval.closed"


class AlreadyDecided(DecisionRefused):
    """The person's decision on this request is already recorded."""

    code = "approval.already_decided"


class RunsInProcess(DecisionRefused):
    """The run is driven by `braid run` in one process: only `braid decide` can resume it."""

    code = "approval.in_process"


def visible_requests(user: User) -> QuerySet[ApprovalRequest]:
    """Return the requests a user may see: of their groups, or every one for admins."""
    requests = ApprovalRequest.objects.select_related("run__flow_version__flow")
    if has_role(user, Role.ADMINS):
        return requests
    return requests.filter(groups__overlaps=list(group_names(user)))


def open_requests(user: User) -> QuerySet[ApprovalRequest]:
    """Return the open requests a user may see (the inbox), newest first."""
    return visible_requests(user).filter(status=ApprovalStatus.OPEN).order_by("-created_at", "-id")


def open_request_at(run_id: str, node: str, execution_id: str | None = None) -> ApprovalRequest:
    """Return a run's one open request at a node path; see choose_approval for the errors."""
    waiting = ApprovalRequest.objects.filter(run_id=run_id, node=node, status=ApprovalStatus.OPEN)
    by_key = {r.key: r for r in waiting.order_by("id")}
    places = [OpenApproval(r.key, r.node, r.execution_id) for r in by_key.values()]
    return by_key[choose_approval(places, node, execution_id).key]


def starter_decides(approval: ApprovalRequest, user: AbstractBaseUser) -> bool:
    """Return whether the user started the request's run (refused unless the node allows it).

    Raise StarterMayNotDecide when the node does not say `allow_starter: true`.
    """
    started_by = Run.objects.filter(pk=approval.run_id).values_list("started_by_id", flat=True)
    if started_by.first() != user.pk:
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
    username, groups = user.get_username(), group_names(user)
    if not set(groups) & set(approval.groups):
        raise NotAnApprover(f"{username} is in none of the groups {approval.groups}")
    return starter_decides(approval, user)


def decide_request(
    approval: ApprovalRequest, user: AbstractBaseUser, decision: Decision, comment: str = ""
) -> str:
    """Record one person's decision on a durable run's request; return its inbox key.

    Under the run's lock, so the status checked is the one the last step left, and one
    person's two decisions cannot both be recorded.
    """
    username, groups = user.get_username(), group_names(user)
    starter = check_may_decide(approval, user)
    with transaction.atomic():
        run = Run.objects.select_for_update(no_key=True).only("runtime").get(pk=approval.run_id)
        if run.runtime != Runtime.DURABLE:
            raise RunsInProcess(
                f"run {run.pk} runs in-process (braid run): decide it with braid decide"
            )
        approval.refresh_from_db()
        if approval.status == ApprovalStatus.CLOSED:
            raise ApprovalClosed(f"the approval at {approval.node} is closed: {approval.outcome}")
        inbox_key = f"{approval.key}|{username}"
        if run.pending_events.filter(key=inbox_key).exists():
            raise AlreadyDecided(f"{username} has already decided the approval at {approval.node}")
        event = ApprovalDecided(at=durable.now_text(), key=approval.key, user=username,
                                groups=groups, decision=decision, comment=comment)  # fmt: skip
        durable.submit(str(run.pk), inbox_key, event)
        audit.record(EventKind.DECIDED, approval, username, decision=decision.value,
                     comment=comment, starter=starter)  # fmt: skip
    return inbox_key


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
