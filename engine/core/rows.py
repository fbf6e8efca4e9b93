"""Node rows and the fenced write (CONTRACT §3), as the in-memory store applies it.

A write lands unless the stored execution id supersedes the incoming one. With equal
ids a terminal status is replaced only by a higher attempt, and no write goes back to
a lower attempt. The SQL stores express the same rule in one conditional statement.
"""

from __future__ import annotations

from typing import NamedTuple

from engine.core.events import RowStatus, WriteRow
from engine.core.execution_ids import encoded
from engine.core.values import JSON


class NodeRow(NamedTuple):
    """The row of one node path in one run (a tuple: the monitor's tree builds 10,000 at a
    time, and a frozen dataclass costs three times as much to make)."""

    node: str
    status: RowStatus
    execution_id: str
    result: JSON
    attempt: int

    @property
    def status_detail(self) -> str:
        """Return the execution id in its comparable encoding."""
        return encoded(self.execution_id)

    def to_json(self) -> dict[str, JSON]:
        """Return the row as the CLI and API show it."""
        # The status is a StrEnum member: a str that JSON writes as its value, without the
        # enum's `value` property (a tree of 10,000 rows asked it 10,000 times).
        return {"status": self.status, "execution_id": self.execution_id,
                "result": self.result, "attempt": self.attempt}  # fmt: skip


def lands(stored: NodeRow | None, write: WriteRow) -> bool:
    """Return whether a fenced write applies over the stored row."""
    if stored is None:
        return True
    if write.execution_id != stored.execution_id:  # equal texts encode equally
        incoming, held = encoded(write.execution_id), stored.status_detail
        if incoming != held:
            return incoming > held
    if write.attempt != stored.attempt:
        return write.attempt > stored.attempt
    return not stored.status.terminal


def apply_write(rows: dict[str, NodeRow], write: WriteRow) -> None:
    """Apply one fenced write to a dict of rows (the writer never learns whether it landed)."""
    if lands(rows.get(write.node), write):
        rows[write.node] = NodeRow(write.node, write.status, write.execution_id, write.result,
                                   write.attempt)  # fmt: skip
