"""What the trace says besides the rows: votes, rows cut short, older rounds, cancel words."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime

from engine.core.events import RowStatus, Trace
from engine.core.execution_ids import ExecutionId
from engine.core.rows import NodeRow


@dataclass(frozen=True, slots=True)
class Vote:
    """One person's decision at an approval, as the trace records it (approval.vote)."""

    node: str
    execution_id: str
    user: str
    groups: tuple[str, ...]
    decision: str
    comment: str = ""
    at: str = ""

    def to_json(self) -> dict[str, str | list[str]]:
        """Return the vote as the monitor's inspector shows it."""
        return {"user": self.user, "groups": list(self.groups), "decision": self.decision,
                "comment": self.comment, "at": self.at}  # fmt: skip

    def words(self) -> str:
        """Return "finance (dana): "fine"", as a reason names a voter."""
        said = f': "{self.comment}"' if self.comment else ""
        return f"{' and '.join(self.groups) or 'an approver'} ({self.user}){said}"


# The events that say a row's frame moved on or ended (frame.cancelled ends it).
FRAME_EVENTS = frozenset(
    {"frame.cancelled", "paused", "resumed", "action.dispatched", "action.redriven",
     "frame.retried"}
)  # fmt: skip


def rows_cut_short(trace: Iterable[Trace], rows: Mapping[str, NodeRow]) -> dict[str, str]:
    """Return "Cancelled: …" by node path for the running or waiting rows whose frame the
    trace last says was cancelled (an item its foreach let fail, a race lost in an earlier
    item). A retry of the run undoes the cancels its failure made (`action.redriven`)."""
    live = {path: row.execution_id for path, row in rows.items()
            if row.status in (RowStatus.RUNNING, RowStatus.WAITING)}  # fmt: skip
    last: dict[str, tuple[int, Trace]] = {}
    failed_at: dict[tuple[str | None, str], int] = {}
    for index, event in enumerate(trace):
        node, kind = event.node, event.event
        if kind == "action.failed":
            failed_at[(node, event.execution_id)] = index
        elif kind == "action.redriven":
            since = failed_at.get((node, event.execution_id), index)
            last = {path: seen for path, seen in last.items() if seen[0] < since}
        if kind in FRAME_EVENTS and node in live and event.execution_id == live[node]:
            last[node] = (index, event)
    return {
        path: cancelled_words(str(event.detail.get("reason", "")))
        for path, (_, event) in last.items()
        if event.event == "frame.cancelled"
    }


LOOP_EVENTS = frozenset({"iteration.started", "node.completed", "node.failed"})


def older_round_candidates(
    rows: Mapping[str, NodeRow], loops: frozenset[str]
) -> dict[str, tuple[str, str, int]]:
    """Return, by node path, the (loop path, execution, round) of each finished row written
    in a round of a loop whose own row another item or round has since overwritten: only
    the trace can say whether that loop is still running a later round there."""
    found: dict[str, tuple[str, str, int]] = {}
    for path, row in rows.items():
        if row.status not in (RowStatus.COMPLETED, RowStatus.FAILED):
            continue
        scope = path.rpartition("/")[0]
        prefix = scope + "/" if scope else ""
        segments = ExecutionId.parse(row.execution_id).segments
        for depth, segment in enumerate(segments):
            looped = rows.get(prefix + segment.name)
            if segment.name not in loops or looped is None:
                continue
            around = str(ExecutionId(segments[:depth]))
            if looped.execution_id != around:
                found[path] = (prefix + segment.name, around, segment.number)
    return found


def rows_in_older_rounds(
    trace: Iterable[Trace], candidates: Mapping[str, tuple[str, str, int]]
) -> dict[str, str]:
    """Return "Pending: loop `l` is in round n; …" by node path for the candidates whose
    loop the trace says is still running a later round in the row's own execution."""
    rounds: dict[tuple[str, str], int] = {}
    over: set[tuple[str, str]] = set()
    for event in trace:
        if event.event not in LOOP_EVENTS or event.node is None:
            continue
        if event.event == "iteration.started":
            number = event.detail.get("number")
            key = (event.node, parent_text(event.execution_id))
            if isinstance(number, int):
                rounds[key] = max(rounds.get(key, 0), number)
        else:
            over.add((event.node, event.execution_id))
    found = {}
    for path, (loop, around, number) in candidates.items():
        now = rounds.get((loop, around), 0)
        if (loop, around) not in over and now > number:
            name = loop.rpartition("/")[2]
            found[path] = (f"Pending: loop `{name}` is in round {now}; this last ran in "
                           f"round {number}")  # fmt: skip
    return found


def parent_text(execution_id: str) -> str:
    """Return the execution one segment up (the root's own id for the root)."""
    head = execution_id.rpartition(":")[0]
    return head.rpartition(":")[0] or execution_id


def cancelled_words(engine_text: str) -> str:
    """Return why a frame was cancelled in people's words, from the engine's reason ("run
    cancelled by admin", "race r won by b", a failure's message)."""
    text = engine_text.removeprefix("run ")
    race, won, winner = text.removeprefix("race ").partition(" won by ")
    if text.startswith("race ") and won:
        return f"Cancelled: race `{race}` was won by `{winner}`"
    who, colon, why = text.partition(": ")
    if who.startswith("cancelled by "):
        because = f" ({why})" if colon and why else ""
        return f"Cancelled by {who.removeprefix('cancelled by ')}{because}"
    return f"Cancelled: {text}" if text else "Cancelled"


def clock_time(at: str) -> str:
    """Return an RFC 3339 time as a wall-clock "14:02 UTC", or "" when it does not parse."""
    try:
        moment = datetime.fromisoformat(at.replace("Z", "+00:00"))
    except ValueError:
        return ""
    if moment.tzinfo is None:
        return ""
    return moment.astimezone(UTC).strftime("%H:%M UTC")


def cancel_time(trace: Iterable[Trace]) -> str:
    """Return when the trace says the run was cancelled ("14:02 UTC"), or ""."""
    for event in trace:
        if event.event == "run.cancelled":
            return clock_time(event.at)
    return ""


def run_cancelled_words(ended: str, at: str = "") -> str:
    """Return who cancelled a run, when, and why, from its error text ("cancelled by admin:
    duplicate invoice") and the clock time of the cancel ("14:02 UTC", or "" when unknown)."""
    who, _, why = ended.partition(": ")
    who = who.removeprefix("cancelled by ") or "an admin"
    if at:
        return f"Cancelled by {who} at {at}" + (f": {why}" if why else "")
    return f"Cancelled by {who}" + (f" ({why})" if why else "")


def votes_from(trace: Iterable[Trace]) -> dict[str, list[Vote]]:
    """Return the votes of a run's approval.vote events, by node path."""
    found: dict[str, list[Vote]] = {}
    for event in trace:
        if event.event != "approval.vote" or event.node is None:
            continue
        detail = event.detail
        groups = detail.get("groups")
        vote = Vote(event.node, event.execution_id, str(detail.get("user", "")),
                    tuple(str(g) for g in groups) if isinstance(groups, list) else (),
                    str(detail.get("decision", "")), str(detail.get("comment") or ""),
                    event.at)  # fmt: skip
        found.setdefault(event.node, []).append(vote)
    return found
