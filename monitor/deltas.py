"""What a run socket sends after its snapshot: the parts of the tree that changed.

The consumer computes a delta from the tree it last sent and the tree now; a client
applies it to what it holds (frontend/src/monitor/useRunLive.ts does what `apply` does).
A test holds the two together: every delta of a run, applied in order to the first
snapshot, gives the tree a fresh snapshot derives (tests/django/test_monitor__deltas.py).
"""

from __future__ import annotations

from typing import Any

# The parts keyed by node path; a path once shown stays (rows are never deleted).
KEYED = ("nodes", "colors", "reasons", "decisions")


def tree_delta(last: dict[str, Any], now: dict[str, Any]) -> dict[str, Any] | None:
    """Return the delta from `last` to `now` (whose `executions` are the changed ones),
    or None when nothing changed."""
    delta: dict[str, Any] = {"type": "delta", "status": now["status"]}
    changed = False
    for part in KEYED:
        before, after = last[part], now[part]
        delta[part] = {key: value for key, value in after.items() if before.get(key) != value}
        changed = changed or bool(delta[part])
    if now.get("executions"):
        delta["executions"] = now["executions"]
        changed = True
    if not changed and now["status"] == last["status"]:
        return None
    return delta


def apply(tree: dict[str, Any], delta: dict[str, Any]) -> dict[str, Any]:
    """Return a client's tree with a delta applied."""
    applied = {**tree, "status": delta["status"]}
    for part in KEYED:
        applied[part] = {**tree[part], **delta.get(part, {})}
    executions = {e["id"]: e for e in tree["executions"]}
    executions.update({e["id"]: e for e in delta.get("executions", [])})
    applied["executions"] = sorted(executions.values(), key=lambda e: place(e["id"]))
    return applied


def place(execution_id: str) -> tuple[tuple[str, int], ...]:
    """Return where an execution sorts: parents first, siblings by name and number."""
    parts = execution_id.split(":")
    return tuple((name, int(number)) for name, number in zip(parts[::2], parts[1::2], strict=True))
