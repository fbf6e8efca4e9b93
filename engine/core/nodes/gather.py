"""The gather node: a barrier over named slots, merging its tokens' lineages when full."""

from __future__ import annotations

from engine.core import graph as g
from engine.core.events import RowStatus
from engine.core.execution_ids import common_prefix_text
from engine.core.gathers import DuplicateSlot, Token
from engine.core.lineages import LineageError, SizeExceeded
from engine.core.reducers import MergeConflict
from engine.core.state import Frame
from engine.core.stepper import NEXT, NodeKind, Stepper
from engine.core.values import JSON, summary


def execute(stepper: Stepper, frame: Frame, node: g.GatherNode) -> None:
    """A frame never stands on a gather: it arrives in a slot (`enter`)."""
    raise AssertionError(f"frame {frame.id} stands on gather {node.id} without arriving")


def enter(stepper: Stepper, frame: Frame, gather: g.GatherNode, edge: g.Edge) -> None:
    """Park the frame's token in the slot its edge names."""
    arrive(stepper, frame, gather, edge.slot or "")


def arrive(stepper: Stepper, frame: Frame, gather: g.GatherNode, slot: str) -> None:
    """Park the frame's token in its slot; fire the gather when every slot is filled."""
    barrier = stepper.state.gather(
        frame.scope, stepper.state.graph_of(frame), gather.id, gather.slots
    )
    token = Token(frame.lineage, frame.execution_id, frame.context, frame.activation,
                  tuple(frame.provenance or [frame.execution_id]))  # fmt: skip
    try:
        barrier.update(slot, token)
    except DuplicateSlot as duplicate:
        stepper.trace("gather.duplicate", frame, node=gather.id, slot=slot)
        stepper.fail(frame, f"gather {gather.id}: {duplicate}")
        return
    # Which slots are filled is read off the gather.waiting events of one context; a
    # "filled so far" list would record the interleaving, which must not reach the trace.
    stepper.trace("gather.waiting", frame, node=gather.id, slot=slot, context=frame.context)
    if not barrier.is_ready(frame.context):
        stepper.retire(frame)
        return
    fire(stepper, frame, gather, barrier.consume(frame.context))


def fire(stepper: Stepper, frame: Frame, gather: g.GatherNode, tokens: list[Token]) -> None:
    """Merge the tokens' lineages in declared-slot order into one continuation."""
    eid = common_prefix_text([t.execution_id for t in tokens])
    lineages = stepper.state.lineages
    try:
        base = lineages.merge_base([t.lineage for t in tokens])
        merged = lineages.merge([t.lineage for t in tokens], base)
    except (MergeConflict, LineageError, SizeExceeded) as conflict:
        stepper.row(
            frame,
            RowStatus.FAILED,
            summary(str(conflict)),
            node=gather.id,
            execution_id=eid,
        )
        stepper.fail(frame, f"gather {gather.id}: {conflict}")
        return
    lineages.abandon(t.lineage for t in tokens)
    lineages.release(t.lineage for t in tokens)
    provenance = [p for t in tokens for p in t.provenance]
    inputs = [[slot, t.execution_id] for slot, t in zip(gather.slots, tokens, strict=True)]
    order: JSON = list(gather.slots)
    stepper.trace("gather.merged", frame, gather.id, eid, inputs=inputs, order=order)  # type: ignore[arg-type]
    frame.lineage, frame.execution_id, frame.provenance = merged.id, eid, provenance
    frame.node = gather.id
    stepper.complete(frame, NEXT, summary([t.execution_id for t in tokens]))


KIND = NodeKind(execute=execute, enter=enter)
