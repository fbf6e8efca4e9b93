"""The approval node: ask people in groups to decide, and count their votes."""

from __future__ import annotations

from typing import Any

from engine.core import expression_limits, seats
from engine.core import graph as g
from engine.core.events import ApprovalDecided, CloseApproval, Decision, RequestApproval, RowStatus
from engine.core.state import Frame, FrameState
from engine.core.stepper import FlowFailure, NodeKind, Stepper
from engine.core.timestamps import shift_time
from engine.core.values import JSON, json_size


def execute(stepper: Stepper, frame: Frame, node: g.ApprovalNode) -> None:
    """Render what people see, suspend the frame and request the approval."""
    title = stepper.render(frame, node.title, "title") or node.id
    instructions = stepper.render(frame, node.instructions, "instructions")
    bounded_text(stepper, frame, title, "the title")
    bounded_text(stepper, frame, instructions, "the instructions")
    shown = tuple((source, stepper.evaluate(frame, source, "show")) for source in node.show)
    bounded_text(stepper, frame, [value for _, value in shown], "the shown values")
    due = None if node.due_in_s is None else shift_time(stepper.state.now, float(node.due_in_s))
    key = stepper.wait_key(frame, "approval")
    frame.state = FrameState.SUSPENDED
    frame.wait = {"keys": [key], "votes": {}, "approval": key}
    stepper.state.waits[key] = frame.id
    stepper.row(frame, RowStatus.WAITING)
    stepper.trace("paused", frame, reason="approval", groups=list(node.groups))
    stepper.commands.append(RequestApproval(
        key=key, node=stepper.state.path(frame), execution_id=frame.execution_id,
        groups=node.groups, policy=node.decision_policy.to_json(), title=title,
        instructions=instructions, shown=shown, due=due, allow_starter=node.allow_starter,
    ))  # fmt: skip


def bounded_text(stepper: Stepper, frame: Frame, value: JSON, what: str) -> None:
    """Fail the node when an approval's text or shown values are over their limit."""
    limit = expression_limits.limits().max_approval_text_bytes
    size = json_size(value)
    if size > limit:
        raise FlowFailure(
            f"node `{frame.node}`: {what} is {size:,} bytes of JSON; the limit is "
            f"{limit:,} (BRAID_APPROVAL_TEXT_MAX_BYTES)"
        )


def approval_decided(stepper: Stepper, frame: Frame, event: ApprovalDecided, key: str) -> None:
    """Count one person's vote; continue once the policy is decided."""
    node = stepper.state.node_of(frame)
    assert isinstance(node, g.ApprovalNode)
    groups = [group for group in node.groups if group in event.groups]
    votes: dict[str, Any] = frame.wait["votes"]
    if not groups:
        stepper.refuse(event, f"{event.user} is in none of the groups {list(node.groups)}")
        return
    if event.user in votes:
        stepper.refuse(event, f"{event.user} has already decided")
        return
    most = expression_limits.limits().max_approval_text_bytes
    if json_size(event.comment) > most:
        stepper.refuse(event, f"the comment is over {most:,} bytes (BRAID_APPROVAL_TEXT_MAX_BYTES)")
        return
    votes[event.user] = {"decision": event.decision.value, "groups": groups}
    stepper.trace("approval.vote", frame, user=event.user, decision=event.decision.value,
               comment=event.comment, groups=list(event.groups))  # fmt: skip
    outcome = approval_outcome(node, votes)
    if outcome is None:
        return
    stepper.commands.append(CloseApproval(key=event.key, reason=outcome))
    stepper.clear_wait(frame)
    frame.state = FrameState.READY
    stepper.trace("resumed", frame, decision=outcome, by=event.user)
    stepper.complete(frame, outcome, outcome)


def approval_outcome(node: g.ApprovalNode, votes: dict[str, Any]) -> str | None:
    """Return `approved`/`rejected` once the policy is decided, else None."""
    if any(vote["decision"] == Decision.REJECT.value for vote in votes.values()):
        return g.Outcome.REJECTED.value
    # One vote per person: under `all` a vote covers one group, whatever groups its voter
    # holds (engine/core/seats.py).
    holders = {user: vote["groups"] for user, vote in votes.items()}
    done = seats.people_needed(node.decision_policy, node.groups, holders) == 0
    return g.Outcome.APPROVED.value if done else None


KIND = NodeKind(execute=execute)
