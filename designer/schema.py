"""The OpenAPI description of a `braid.graph/1` document (CONTRACT.md §1)."""

NODE_TYPES = [
    "start", "end", "task", "set", "if", "switch", "fork", "gather",
    "foreach", "loop", "race", "approval", "wait", "subflow", "fail",
]  # fmt: skip
REDUCERS = ["overwrite", "append", "sum", "min", "max", "merge", "union"]

GRAPH_SCHEMA = {
    "type": "object",
    "description": (
        "A flow graph in the braid.graph/1 format. Node config fields depend on `type`; "
        "validation reports every problem with a stable code and the node or edge."
    ),
    "required": ["format", "nodes", "edges"],
    "properties": {
        "format": {"type": "string", "enum": ["braid.graph/1"]},
        "name": {"type": "string"},
        "state": {
            "type": "object",
            "additionalProperties": {
                "type": "object",
                "required": ["reducer"],
                "properties": {"reducer": {"type": "string", "enum": REDUCERS}, "default": {}},
            },
        },
        "nodes": {
            "type": "array",
            "maxItems": 5000,
            "items": {
                "type": "object",
                "required": ["id", "type"],
                "properties": {
                    "id": {"type": "string", "minLength": 1},
                    "type": {"type": "string", "enum": NODE_TYPES},
                },
                "additionalProperties": True,
            },
        },
        "edges": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["source", "target"],
                "properties": {
                    "id": {"type": "string"},
                    "source": {"type": "string"},
                    "target": {"type": "string"},
                    "outcome": {"type": "string", "default": "next"},
                    "branch": {"type": "string"},
                    "slot": {"type": "string"},
                },
                "additionalProperties": False,
            },
        },
        "layout": {
            "type": "object",
            "additionalProperties": {
                "type": "object",
                "properties": {"x": {"type": "number"}, "y": {"type": "number"}},
            },
        },
    },
}

PROBLEM_SCHEMA = {
    "type": "object",
    "properties": {
        "code": {"type": "string", "example": "gather.slot_unfed"},
        "message": {"type": "string"},
        "node": {"type": "string", "nullable": True},
        "edge": {"type": "string", "nullable": True},
        "severity": {"type": "string", "enum": ["error", "warning"]},
    },
}

REPORT_SCHEMA = {
    "type": "object",
    "properties": {
        "ok": {"type": "boolean"},
        "errors": {"type": "array", "items": PROBLEM_SCHEMA},
        "warnings": {"type": "array", "items": PROBLEM_SCHEMA},
    },
}
