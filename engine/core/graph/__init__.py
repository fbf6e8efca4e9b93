"""The `braid.graph/1` model: frozen values for a flow's state, nodes and edges, and its codec.

Round trip: every optional field is stored exactly as given: `None` means "absent from the
document", and a field that is present keeps its value even when it equals the default. So
`decode(doc).to_json() == doc` for every document that decodes without issues, and defaults are
applied only by the read-only properties (`Edge.follows`, `ForeachNode.max_concurrency`, ...).

A `Graph` is locally well-formed (every field has its JSON type and range); whether it is a
runnable flow (references, reachability, scopes, CEL) is the validator's job.

The package: `vocabulary` (types, reducers, outcomes, codes), `nodes` (the frozen
values), `reading` (typed fields and format issues), `node_decoding` and `document`
(`Graph` and `decode_document`). Its public names are re-exported here: the engine, the
apps and the tests read them as `graph.X`.
"""

from __future__ import annotations

from engine.core.graph.document import (
    DecodedDocument,
    Graph,
    decode_document,
)
from engine.core.graph.nodes import (
    BODY_OUTCOMES,
    BRANCHING_TYPES,
    CONFIGURED_OUTCOME_TYPES,
    REDUCER_START,
    SCOPE_TYPES,
    STATIC_OUTCOMES,
    ApprovalNode,
    ApprovalPolicy,
    Assignment,
    BaseNode,
    Edge,
    EndNode,
    ExpressionSite,
    FailNode,
    ForeachNode,
    ForkNode,
    GatherNode,
    IfNode,
    LoopNode,
    Node,
    OutputMapping,
    RaceNode,
    Retry,
    SetNode,
    StartNode,
    StateField,
    StateWrite,
    SubflowNode,
    SwitchCase,
    SwitchNode,
    TaskNode,
    WaitNode,
)
from engine.core.graph.reading import (
    DamagedEdge,
    FormatIssue,
    GraphFormatError,
)
from engine.core.graph.vocabulary import (
    CEL_RESERVED,
    FORMAT,
    ID_RESERVED_CHARACTERS,
    IDENTIFIER,
    NO_ACTIONS,
    RESERVED_VARIABLES,
    SLUG,
    ConflictPolicy,
    ExpressionKind,
    FormatCode,
    ItemFailure,
    JsonObject,
    NodeType,
    Number,
    Outcome,
    PolicyKind,
    Reducer,
    copy_json,
    copy_object,
    is_json,
)

__all__ = [
    "BODY_OUTCOMES",
    "BRANCHING_TYPES",
    "CEL_RESERVED",
    "CONFIGURED_OUTCOME_TYPES",
    "FORMAT",
    "IDENTIFIER",
    "ID_RESERVED_CHARACTERS",
    "NO_ACTIONS",
    "REDUCER_START",
    "RESERVED_VARIABLES",
    "SCOPE_TYPES",
    "SLUG",
    "STATIC_OUTCOMES",
    "ApprovalNode",
    "ApprovalPolicy",
    "Assignment",
    "BaseNode",
    "ConflictPolicy",
    "DamagedEdge",
    "DecodedDocument",
    "Edge",
    "EndNode",
    "ExpressionKind",
    "ExpressionSite",
    "FailNode",
    "ForeachNode",
    "ForkNode",
    "FormatCode",
    "FormatIssue",
    "GatherNode",
    "Graph",
    "GraphFormatError",
    "IfNode",
    "ItemFailure",
    "JsonObject",
    "LoopNode",
    "Node",
    "NodeType",
    "Number",
    "Outcome",
    "OutputMapping",
    "PolicyKind",
    "RaceNode",
    "Reducer",
    "Retry",
    "SetNode",
    "StartNode",
    "StateField",
    "StateWrite",
    "SubflowNode",
    "SwitchCase",
    "SwitchNode",
    "TaskNode",
    "WaitNode",
    "copy_json",
    "copy_object",
    "decode_document",
    "is_json",
]
