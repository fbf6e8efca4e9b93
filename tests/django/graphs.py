"""Small graphs shared by the flow tests."""

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
