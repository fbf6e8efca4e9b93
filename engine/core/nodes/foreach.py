"""The foreach node: run its body once per item, at most `concurrency` at a time."""

from __future__ import annotations

from engine.core import expression_limits
from engine.core import graph as g
from engine.core.events import RowStatus
from engine.core.execution_ids import iteration_text
from engine.core.inputs import json_type
from engine.core.lineages import SizeExceeded
from engine.core.reducers import MergeConflict
from engine.core.state import Frame, FrameState
from engine.core.stepper import ITEM, FlowFailure, NodeKind, Stepper, topology
from engine.core.values import JSON, summary


def execute(stepper: Stepper, frame: Frame, node: g.ForeachNode) -> None:
    """Evaluate the items, open the barrier and admit the first items."""
    items = stepper.evaluate(frame, node.items, "items")
    if not isinstance(items, list):
        raise FlowFailure(
            f"node `{frame.node}` items: `{node.items}` gave {json_type(items)}, not a list"
        )
    limit = expression_limits.limits().max_foreach_items
    if len(items) > limit:
        raise FlowFailure(
            f"items: {len(items):,} items; a foreach takes at most {limit:,} "
            "(BRAID_FOREACH_MAX_ITEMS)"
        )
    stepper.bounded(frame, items, "items")  # the barrier keeps them in the snapshot
    frame.state = FrameState.BLOCKED
    frame.barrier = {"kind": "foreach", "items": items, "admitted": 0, "running": 0,
                     "done": {}, "failed": {}, "policy": node.failure_policy.value}  # fmt: skip
    stepper.row(frame, RowStatus.RUNNING, {"items": len(items)})
    admit(stepper, frame, node)


def admit(stepper: Stepper, frame: Frame, node: g.ForeachNode) -> None:
    """Start items while fewer than `concurrency` run; finish when all are done."""
    barrier = frame.barrier
    items = barrier["items"]
    count, most = len(items), node.max_concurrency
    edge = topology(stepper.state.graph_of(frame)).successor(node.id, ITEM)
    while barrier["running"] < most and barrier["admitted"] < count:
        barrier["admitted"] += 1
        barrier["running"] += 1
        number = barrier["admitted"]
        eid = iteration_text(frame.execution_id, node.id, number)
        variables = {**frame.variables, node.variable: items[number - 1]}
        if edge is None:
            item_finished(stepper, frame, number, stepper.state.lineages.child(frame.lineage).id)
            continue
        stepper.trace("item.started", frame, node=node.id, index=number - 1, execution=eid)
        stepper.own(frame, str(number), node.id, eid, eid, variables, edge)
        if frame.id not in stepper.state.frames:
            return
    if barrier["running"] == 0 and barrier["admitted"] == count:
        foreach_done(stepper, frame, node)


def child_finished(stepper: Stepper, frame: Frame, key: str, lineage: int) -> None:
    """Item `key` returned by the back-edge."""
    item_finished(stepper, frame, int(key), lineage)


def child_failed(stepper: Stepper, frame: Frame, key: str, message: str) -> bool:
    """Item `key` failed: under `skip` or `collect` the foreach goes on; under `fail` it fails."""
    if frame.barrier["policy"] == "fail":
        return False
    item_failed(stepper, frame, int(key), message)
    return True


def item_finished(stepper: Stepper, frame: Frame, number: int, lineage: int) -> None:
    """One item returned; admit the next."""
    frame.barrier["running"] -= 1
    frame.barrier["done"][str(number)] = lineage
    item = iteration_text(frame.execution_id, frame.node, number)
    stepper.trace("item.finished", frame, execution=item, index=number - 1)
    admit(stepper, frame, stepper.state.node_of(frame))  # type: ignore[arg-type]


def item_failed(stepper: Stepper, frame: Frame, number: int, message: str) -> None:
    """One item failed under `skip` or `collect`: drop its writes and go on."""
    frame.barrier["running"] -= 1
    frame.barrier["failed"][str(number)] = message
    item = iteration_text(frame.execution_id, frame.node, number)
    stepper.trace("item.failed", frame, execution=item, index=number - 1, error=message)
    frame.state = FrameState.BLOCKED
    admit(stepper, frame, stepper.state.node_of(frame))  # type: ignore[arg-type]


def foreach_done(stepper: Stepper, frame: Frame, node: g.ForeachNode) -> None:
    """Merge the items' writes in item order, record failures, and continue `done`."""
    barrier = frame.barrier
    done = [barrier["done"][k] for k in sorted(barrier["done"], key=int)]
    lineages = stepper.state.lineages
    try:
        merged = lineages.merge(done, frame.lineage) if done else lineages.child(frame.lineage)
    except (MergeConflict, SizeExceeded) as conflict:
        why = "items conflict" if isinstance(conflict, MergeConflict) else "merging the items"
        message = f"foreach {node.id}: {why}: {conflict}"
        stepper.row(frame, RowStatus.FAILED, summary(message))
        stepper.fail(frame, message)
        return
    lineages.abandon(done)
    lineages.release(done)
    frame.lineage = merged.id
    failed = sorted(barrier["failed"], key=int)
    errors: dict[str, JSON] = {}
    if node.errors and barrier["policy"] == "collect" and failed:
        records: JSON = [{"index": int(k) - 1, "item": barrier["items"][int(k) - 1],
                          "error": barrier["failed"][k]} for k in failed]  # fmt: skip
        stepper.write(frame, node.errors, records)
        errors[node.errors] = summary(records)
    result: JSON = {"items": len(barrier["items"]), "failed": len(failed)}
    frame.barrier = {}
    frame.state = FrameState.READY
    stepper.complete(frame, g.Outcome.DONE.value, result, errors)


KIND = NodeKind(execute=execute, child_finished=child_finished, child_failed=child_failed)
