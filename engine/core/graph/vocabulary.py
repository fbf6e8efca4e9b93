"""The words of `braid.graph/1`: node types, reducers, outcomes, policies, format
codes and id rules; and JSON copies for the model's values."""

from __future__ import annotations

import re
from collections.abc import Mapping
from enum import StrEnum
from typing import Final, TypeGuard

from engine.core.values import JSON as JsonValue
from engine.core.values import not_json

FORMAT: Final = "braid.graph/1"

type Number = int | float
type JsonObject = dict[str, JsonValue]

# Execution ids (`root:1:split.legal:1`) and node paths (`sub/child`) are built from ids.
ID_RESERVED_CHARACTERS: Final = ":./"
IDENTIFIER: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
SLUG: Final = re.compile(r"[-a-zA-Z0-9_]+\Z")
# CEL reserves these words; none can be a state field read as `state.<name>` or a variable.
_RESERVED_WORDS: Final = (
    "true false null in as break const continue else for function if import let loop "
    "package namespace return var void while"
)
CEL_RESERVED: Final = frozenset(_RESERVED_WORDS.split())
RESERVED_VARIABLES: Final = frozenset({"state", "input"}) | CEL_RESERVED


class NodeType(StrEnum):
    """The fifteen node types of `braid.graph/1`."""

    START = "start"
    END = "end"
    TASK = "task"
    SET = "set"
    IF = "if"
    SWITCH = "switch"
    FORK = "fork"
    GATHER = "gather"
    FOREACH = "foreach"
    LOOP = "loop"
    RACE = "race"
    APPROVAL = "approval"
    WAIT = "wait"
    SUBFLOW = "subflow"
    FAIL = "fail"


class Reducer(StrEnum):
    """How concurrent or repeated writes to a state field combine."""

    OVERWRITE = "overwrite"
    APPEND = "append"
    SUM = "sum"
    MIN = "min"
    MAX = "max"
    MERGE = "merge"
    UNION = "union"


class Outcome(StrEnum):
    """The fixed outcome names; task, switch and race outcomes are named by the flow."""

    NEXT = "next"
    TRUE = "true"
    FALSE = "false"
    ITEM = "item"
    DONE = "done"
    BODY = "body"
    EXHAUSTED = "exhausted"
    APPROVED = "approved"
    REJECTED = "rejected"


class ItemFailure(StrEnum):
    """What a foreach does when one item fails."""

    FAIL = "fail"
    SKIP = "skip"
    COLLECT = "collect"


class ConflictPolicy(StrEnum):
    """What a gather does when two slots' writes conflict."""

    ERROR = "error"


class PolicyKind(StrEnum):
    """How many approvers an approval needs."""

    ALL = "all"
    ANY = "any"
    QUORUM = "quorum"


class ExpressionKind(StrEnum):
    """A config string is either one CEL expression or text with `${CEL}` parts."""

    CEL = "cel"
    TEMPLATE = "template"


class FormatCode(StrEnum):
    """Codes of local format issues; each value is also a `validation.ProblemCode`."""

    DOCUMENT_NOT_OBJECT = "document.not_object"
    DOCUMENT_FORMAT = "document.format"
    FIELD_UNKNOWN = "field.unknown"
    FIELD_MISSING = "field.missing"
    FIELD_TYPE = "field.type"
    FIELD_VALUE = "field.value"
    NODE_ID_INVALID = "node.id_invalid"
    NODE_ID_DUPLICATE = "node.id_duplicate"
    NODE_TYPE_UNKNOWN = "node.type_unknown"
    EDGE_ID_INVALID = "edge.id_invalid"
    EDGE_ID_DUPLICATE = "edge.id_duplicate"
    EDGE_BRANCH_WITH_OUTCOME = "edge.branch_with_outcome"
    STATE_NAME_INVALID = "state.name_invalid"
    STATE_REDUCER_UNKNOWN = "state.reducer_unknown"
    STATE_DEFAULT_INVALID = "state.default_invalid"
    GATHER_CONFLICTS_INVALID = "gather.conflicts_invalid"
    APPROVAL_POLICY_INVALID = "approval.policy_invalid"
    FOREACH_CONCURRENCY_INVALID = "foreach.concurrency_invalid"
    LOOP_MAX_ITERATIONS_INVALID = "loop.max_iterations_invalid"
    WAIT_TIMING_INVALID = "wait.timing_invalid"
    SUBFLOW_FLOW_INVALID = "subflow.flow_invalid"


NO_ACTIONS: Final[Mapping[str, frozenset[str]]] = {}
NEXT: Final = Outcome.NEXT.value  # a plain str: `follows` is on every hot path
NODE_TYPES: Final[Mapping[str, NodeType]] = {member.value: member for member in NodeType}
# Each type's name as a plain str: a run stores its graphs' documents when it starts, and an
# enum's `value` is a property call per node.
TYPE_NAMES: Final[Mapping[NodeType, str]] = {member: member.value for member in NodeType}


def copy_json(value: JsonValue) -> JsonValue:
    """Return a deep copy of a JSON value (lists and dicts are copied, scalars shared)."""
    if isinstance(value, list):
        return [copy_json(item) for item in value]
    if isinstance(value, dict):
        return copy_object(value)
    return value


def copy_object(value: JsonObject) -> JsonObject:
    """Return a deep copy of a JSON object."""
    return {key: copy_json(item) for key, item in value.items()}


def is_json(value: object) -> TypeGuard[JsonValue]:
    """Return whether a Python value is plain JSON (finite floats, string keys)."""
    return not_json(value) is None
