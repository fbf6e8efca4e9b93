"""Property test of the fence: any interleaving of deliver, duplicate, delay and crash.

The messages are the node-row writes of a run whose loop iterations retry failed
attempts. Hypothesis draws the run and a sequence of operations on the messages in
flight: deliver one (or a batch, as one step writes), deliver a duplicate and keep it in
flight, delay one behind all the others (a stale writer), or crash: write a batch in a
transaction that dies, so the batch stays in flight. After every operation the stored
rows must equal the pure fence (`engine.core.rows.apply_write`) folded over what was
delivered, and no row may have moved back; once everything is delivered, every row
holds the newest iteration's last write.

Each test run executes BRAID_FENCE_OPERATIONS operations or a few more (10,000 by default,
in well under a minute; every operation writes, since once all messages arrived an
operation delivers a late duplicate); `make chaos` runs it with more.
"""

import os
from dataclasses import dataclass, field

import pytest
from django.db import transaction
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.core.events import RowStatus, WriteRow
from engine.core.execution_ids import ExecutionId
from engine.core.rows import NodeRow, apply_write
from engine.models import Run
from engine.runtime.store import DjangoStore, write_rows

OPERATIONS = int(os.environ.get("BRAID_FENCE_OPERATIONS", "10000"))
PER_EXAMPLE = 200
EXAMPLES = -(-OPERATIONS // PER_EXAMPLE)
NODES = ("check", "count")


class Crash(Exception):
    """The transaction of a writer that dies before its commit."""


@st.composite
def messages(draw: st.DrawFn) -> list[WriteRow]:
    """Every write of a run: per iteration and node, running then final, with retries."""
    writes = []
    for iteration in range(1, draw(st.integers(1, 8)) + 1):
        for node in NODES:
            execution = f"root:1:poll:{iteration}"
            attempts = draw(st.integers(1, 3))
            for attempt in range(1, attempts + 1):
                final = RowStatus.COMPLETED if attempt == attempts else RowStatus.FAILED
                writes.append(WriteRow(node=node, status=RowStatus.RUNNING,
                                       execution_id=execution, attempt=attempt))  # fmt: skip
                result = f"{iteration}.{attempt}"
                writes.append(WriteRow(node=node, status=final, execution_id=execution,
                                       result=result, attempt=attempt))  # fmt: skip
    return writes


OPERATION = st.tuples(
    st.sampled_from(["deliver", "deliver", "batch", "duplicate", "delay", "crash"]),
    st.integers(0, 1000),
    st.integers(1, 4),
)


def order(row: NodeRow) -> tuple[str, int, bool]:
    """A row's place in the fence's order: execution, attempt, then finished."""
    return ExecutionId.parse(row.execution_id).encode(), row.attempt, row.status.terminal


@dataclass
class Flight:
    """The messages in flight, the pure fence's rows, and how many operations ran."""

    run_id: str
    in_flight: list[WriteRow]
    expected: dict[str, NodeRow] = field(default_factory=dict)
    seen: dict[str, NodeRow] = field(default_factory=dict)
    delivered: list[WriteRow] = field(default_factory=list)

    def deliver(self, batch: list[WriteRow]) -> None:
        write_rows(self.run_id, batch)
        self.delivered.extend(batch)
        for write in batch:
            apply_write(self.expected, write)

    def operate(self, kind: str, index: int, size: int) -> None:
        if not self.in_flight:  # all arrived: what comes now is a late duplicate
            self.deliver([self.delivered[index % len(self.delivered)]])
            return
        at = index % len(self.in_flight)
        if kind == "deliver":
            self.deliver([self.in_flight.pop(at)])
        elif kind == "batch":
            batch = self.in_flight[at : at + size]
            del self.in_flight[at : at + size]
            self.deliver(batch)
        elif kind == "duplicate":
            self.deliver([self.in_flight[at]])
        elif kind == "delay":
            self.in_flight.append(self.in_flight.pop(at))
        else:
            try:
                with transaction.atomic():
                    write_rows(self.run_id, self.in_flight[at : at + size])
                    raise Crash
            except Crash:
                pass

    def check(self) -> None:
        stored = DjangoStore().rows(self.run_id)
        assert stored == self.expected
        for node, row in stored.items():
            before = self.seen.get(node)
            assert before is None or order(row) >= order(before), (before, row)
            self.seen[node] = row


@pytest.mark.django_db
@settings(max_examples=EXAMPLES, deadline=None, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                 HealthCheck.data_too_large])  # fmt: skip
@given(messages(), st.lists(OPERATION, min_size=PER_EXAMPLE, max_size=PER_EXAMPLE))
def test_any_interleaving_of_deliver_duplicate_delay_and_crash_leaves_fenced_rows(
    writes: list[WriteRow], operations: list[tuple[str, int, int]]
) -> None:
    run = Run.objects.create(label="fence", graphs={}, status="running")
    flight = Flight(str(run.pk), list(writes))
    for kind, index, size in operations:
        flight.operate(kind, index, size)
        flight.check()
    while flight.in_flight:  # everything arrives in the end
        flight.deliver([flight.in_flight.pop()])
    flight.check()
    last = {w.node: w for w in writes}  # the newest iteration's last write, per node
    assert len(flight.delivered) >= len(writes)
    assert {n: (r.status, r.execution_id, r.attempt) for n, r in flight.expected.items()} == {
        n: (w.status, w.execution_id, w.attempt) for n, w in last.items()
    }
