"""Small graphs shared by the flow tests."""

from typing import Any

GRAPH = {
    "format": "braid.graph/1",
    "name": "Tiny",
    "state": {"log": {"reducer": "append"}},
    "nodes": [
        {"id": "start", "type": "start"},
        {"id": "note", "type": "set", "values": {"log": "['hi']"}},
        {"id": "done", "type": "end"},
    ],
    "edges": [{"source": "start", "target": "note"}, {"source": "note", "target": "done"}],
}
BROKEN = {**GRAPH, "edges": [{"source": "start", "target": "nowhere"}]}


def task(node_id: str, action: str, **params: Any) -> dict[str, Any]:
    """Return a task node running `action` with these params."""
    return {"id": node_id, "type": "task", "action": action, "params": params}


CHAIN: dict[str, Any] = {
    "format": "braid.graph/1",
    "name": "Two noops",
    "nodes": [{"id": "start", "type": "start"}, task("one", "noop"), task("two", "noop"),
              {"id": "done", "type": "end"}],
    "edges": [{"source": "start", "target": "one"}, {"source": "one", "target": "two"},
              {"source": "two", "target": "done"}],
}  # fmt: skip
ALWAYS_FAILS: dict[str, Any] = {
    "format": "braid.graph/1",
    "name": "Always fails",
    "nodes": [{"id": "start", "type": "start"}, task("flaky", "fail_sometimes", rate=1.0),
              {"id": "done", "type": "end"}],
    "edges": [{"source": "start", "target": "flaky"}, {"source": "flaky", "target": "done"}],
}  # fmt: skip
