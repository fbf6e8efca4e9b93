"""Why a decision, delegation or reassignment is refused: one exception per reason, each
with the sentence the person reads (the API answers it with a 409 or 400, the CLI prints it).
"""

from engine.core.runtime import EventRefused


class DecisionRefused(EventRefused):
    """A decision (or delegation) that was not recorded; `code` says why, for machines."""

    code = "approval.refused"
    http_status = 409


class NotAnApprover(DecisionRefused):
    """The person is in none of the request's groups and holds no part delegated to them."""

    code = "approval.not_an_approver"
    http_status = 403


class StarterMayNotDecide(DecisionRefused):
    """Segregation of duties: the run's starter may not decide its approvals."""

    code = "approval.starter"
    http_status = 403


class DelegatedAway(DecisionRefused):
    """The person delegated their part of the request to someone else."""

    code = "approval.delegated"
    http_status = 403


class AssignedElsewhere(DecisionRefused):
    """An admin reassigned the request to someone else."""

    code = "approval.assigned"
    http_status = 403


class BadDelegate(DecisionRefused):
    """The person named to receive a request may not receive it (subclasses say why)."""

    code = "approval.delegate_target"
    http_status = 400


class DelegateInactive(BadDelegate):
    """Nobody active has that name: a request given to them would wait on nobody."""

    code = "approval.delegate_inactive"


class DelegateIsSelf(BadDelegate):
    """A person cannot delegate to themselves."""

    code = "approval.delegate_self"


class DelegateNotMember(BadDelegate):
    """The delegate is in none of the groups the delegated part counts for."""

    code = "approval.delegate_not_member"


class DelegateIsStarter(BadDelegate):
    """Segregation of duties: the run's starter may not receive its requests."""

    code = "approval.delegate_is_starter"


class DelegateDecided(BadDelegate):
    """The person already decided the request: one person, one vote."""

    code = "approval.delegate_decided"


class DelegateHoldsSeat(BadDelegate):
    """The delegate already holds a seat on the request: they are a member of another of
    its groups, or already received someone's part. One person, one vote."""

    code = "approval.delegate_holds_seat"


class DelegationCycle(BadDelegate):
    """The part would return to someone earlier in its delegation chain."""

    code = "approval.delegation_cycle"


class DelegatePassedOn(BadDelegate):
    """The delegate passed their own part of the request on, so cannot decide it."""

    code = "approval.delegate_passed_on"


class WouldStrand(DecisionRefused):
    """After the hand-over, the people able to decide could no longer meet the policy."""

    code = "approval.would_strand"


class NeedsMorePeople(DecisionRefused):
    """Reassigning to one person: the request still needs more than one person's vote."""

    code = "approval.needs_people"


class ApprovalClosed(DecisionRefused):
    """The request was decided, or its step was cancelled."""

    code = "approval.closed"


class AlreadyDecided(DecisionRefused):
    """The person's decision on this request is already recorded."""

    code = "approval.already_decided"


class StaleExecution(DecisionRefused):
    """The decision names an execution id that is not the request's."""

    code = "approval.stale"


class RunsInProcess(DecisionRefused):
    """The run is driven by `braid run` in one process: only `braid decide` can resume it."""

    code = "approval.in_process"
