"""The `braid.graph/1` model: frozen values for a flow's state, nodes and edges, and its codec.

Round trip: every optional field is stored exactly as given: `None` means "absent from the
document", and a field that is present keeps its value even when it equals the default. So
`decode(doc).to_json() == doc` for every document that decodes without issues, and defaults are
applied only by the read-only properties (`Edge.follows`, `ForeachNode.max_concurrency`, ...).

A `Graph` is locally well-formed (every field has its JSON type and range); whether it is a
runnable flow (references, reachability, scopes, CEL) is the validator's job.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from functools import cached_property
from typing import ClassVar, Final, TypeGuard

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
_NEXT: Final = Outcome.NEXT.value  # a plain str: `follows` is on every hot path
_NODE_TYPES: Final[Mapping[str, NodeType]] = {member.value: member for member in NodeType}
# Each type's name as a plain str: a run stores its graphs' documents when it starts, and an
# enum's `value` is a property call per node.
_TYPE_NAMES: Final[Mapping[NodeType, str]] = {member: member.value for member in NodeType}


@dataclass(frozen=True, slots=True)
class ExpressionSite:
    """One expression in a node's config: its field path, its text and its kind."""

    field: str
    source: str
    kind: ExpressionKind = ExpressionKind.CEL


@dataclass(frozen=True, slots=True)
class StateWrite:
    """A config field that writes a state field."""

    field: str
    state_field: str


@dataclass(frozen=True, kw_only=True)
class StateField:
    """A declared state field: its reducer and, when `has_default`, its declared default."""

    name: str
    reducer: Reducer
    default: JsonValue = None
    has_default: bool = False

    @property
    def initial(self) -> JsonValue:
        """Return the value the field starts with: the default, else the reducer's empty value."""
        if self.has_default:
            return copy_json(self.default)
        return copy_json(REDUCER_START[self.reducer])

    def to_json(self) -> JsonObject:
        """Return the declaration as in the document."""
        declaration: JsonObject = {"reducer": self.reducer.value}
        if self.has_default:
            declaration["default"] = copy_json(self.default)
        return declaration


REDUCER_START: Final[Mapping[Reducer, JsonValue]] = {
    Reducer.OVERWRITE: None,
    Reducer.APPEND: [],
    Reducer.SUM: 0,
    Reducer.MIN: None,
    Reducer.MAX: None,
    Reducer.MERGE: {},
    Reducer.UNION: [],
}


@dataclass(frozen=True, kw_only=True)
class Edge:
    """A directed edge; `outcome`, `branch`, `slot` and `id` are `None` when absent."""

    source: str
    target: str
    id: str | None = None
    outcome: str | None = None
    branch: str | None = None
    slot: str | None = None

    @property
    def follows(self) -> str | None:
        """Return the outcome this edge continues (`next` when absent), or None for a branch."""
        if self.branch is not None:
            return None
        return self.outcome if self.outcome is not None else _NEXT

    def reference(self) -> str:
        """Return how problems name this edge: its id, else `source->target`."""
        return self.id if self.id is not None else f"{self.source}->{self.target}"

    def to_json(self) -> JsonObject:
        """Return the edge as in the document."""
        document: JsonObject = {}
        if self.id is not None:
            document["id"] = self.id
        document["source"] = self.source
        document["target"] = self.target
        if self.outcome is not None:
            document["outcome"] = self.outcome
        if self.branch is not None:
            document["branch"] = self.branch
        if self.slot is not None:
            document["slot"] = self.slot
        return document


@dataclass(frozen=True, kw_only=True)
class BaseNode:
    """Fields and behaviour every node shares; `type` is fixed per subclass."""

    type: ClassVar[NodeType]
    id: str
    label: str | None = None

    def outcomes(self, actions: Mapping[str, frozenset[str]] = NO_ACTIONS) -> frozenset[str]:
        """Return the ordinary outcomes this node can produce."""
        return frozenset({Outcome.NEXT.value})

    @property
    def branches(self) -> tuple[str, ...]:
        """Return the declared branches (fork and race only)."""
        return ()

    def expressions(self) -> tuple[ExpressionSite, ...]:
        """Return every expression in this node's config."""
        return ()

    def state_writes(self) -> tuple[StateWrite, ...]:
        """Return the state fields this node's config writes."""
        return ()

    def to_json(self) -> JsonObject:
        """Return the node as in the document."""
        document: JsonObject = {"id": self.id, "type": _TYPE_NAMES[self.type]}
        if self.label is not None:
            document["label"] = self.label
        for key, value in self.config_json().items():
            if value is not None:
                document[key] = value
        return document

    def config_json(self) -> JsonObject:
        """Return the type-specific fields; `None` values are left out."""
        return {}


@dataclass(frozen=True, kw_only=True)
class StartNode(BaseNode):
    """Where a run begins."""

    type: ClassVar[NodeType] = NodeType.START


@dataclass(frozen=True, kw_only=True)
class EndNode(BaseNode):
    """Ends its scope: the run, or a subflow call."""

    type: ClassVar[NodeType] = NodeType.END

    def outcomes(self, actions: Mapping[str, frozenset[str]] = NO_ACTIONS) -> frozenset[str]:
        """Return no outcomes: nothing follows an end."""
        return frozenset()


@dataclass(frozen=True, kw_only=True)
class Retry:
    """How often a task is retried and how long to wait between attempts."""

    max_attempts: int
    backoff_s: Number | None = None

    def to_json(self) -> JsonObject:
        """Return the retry object as in the document."""
        document: JsonObject = {"max_attempts": self.max_attempts}
        if self.backoff_s is not None:
            document["backoff_s"] = self.backoff_s
        return document


@dataclass(frozen=True, kw_only=True)
class TaskNode(BaseNode):
    """Runs a registered action."""

    type: ClassVar[NodeType] = NodeType.TASK
    action: str
    params: JsonObject | None = None
    output: str | None = None
    retry: Retry | None = None
    timeout_s: Number | None = None

    def outcomes(self, actions: Mapping[str, frozenset[str]] = NO_ACTIONS) -> frozenset[str]:
        """Return `next` plus the outcomes the action declares."""
        return frozenset({Outcome.NEXT.value}) | actions.get(self.action, frozenset())

    def state_writes(self) -> tuple[StateWrite, ...]:
        """Return the output field."""
        return () if self.output is None else (StateWrite("output", self.output),)

    def config_json(self) -> JsonObject:
        """Return action, params, output, retry and timeout."""
        return {
            "action": self.action,
            "params": None if self.params is None else copy_object(self.params),
            "output": self.output,
            "retry": None if self.retry is None else self.retry.to_json(),
            "timeout_s": self.timeout_s,
        }


@dataclass(frozen=True, slots=True)
class Assignment:
    """`field: CEL` in `set.values` and `subflow.input`."""

    field: str
    expression: str


def _assignments_json(assignments: tuple[Assignment, ...] | None) -> JsonObject | None:
    """Return assignments as a JSON object, or None when absent."""
    if assignments is None:
        return None
    return {item.field: item.expression for item in assignments}


@dataclass(frozen=True, kw_only=True)
class SetNode(BaseNode):
    """Writes CEL results to state fields."""

    type: ClassVar[NodeType] = NodeType.SET
    values: tuple[Assignment, ...]

    def expressions(self) -> tuple[ExpressionSite, ...]:
        """Return one expression per assigned field."""
        return tuple(ExpressionSite(f"values.{a.field}", a.expression) for a in self.values)

    def state_writes(self) -> tuple[StateWrite, ...]:
        """Return the assigned fields."""
        return tuple(StateWrite(f"values.{a.field}", a.field) for a in self.values)

    def config_json(self) -> JsonObject:
        """Return the values object."""
        return {"values": _assignments_json(self.values)}


@dataclass(frozen=True, kw_only=True)
class IfNode(BaseNode):
    """Chooses `true` or `false` by a CEL condition."""

    type: ClassVar[NodeType] = NodeType.IF
    condition: str

    def outcomes(self, actions: Mapping[str, frozenset[str]] = NO_ACTIONS) -> frozenset[str]:
        """Return `true` and `false`."""
        return frozenset({Outcome.TRUE.value, Outcome.FALSE.value})

    def expressions(self) -> tuple[ExpressionSite, ...]:
        """Return the condition."""
        return (ExpressionSite("condition", self.condition),)

    def config_json(self) -> JsonObject:
        """Return the condition."""
        return {"condition": self.condition}


@dataclass(frozen=True, slots=True)
class SwitchCase:
    """One switch case: the outcome taken when `when` is true."""

    when: str
    outcome: str


@dataclass(frozen=True, kw_only=True)
class SwitchNode(BaseNode):
    """Takes the first case whose condition holds, else the default outcome."""

    type: ClassVar[NodeType] = NodeType.SWITCH
    cases: tuple[SwitchCase, ...]
    default: str

    def outcomes(self, actions: Mapping[str, frozenset[str]] = NO_ACTIONS) -> frozenset[str]:
        """Return every case's outcome and the default."""
        return frozenset(case.outcome for case in self.cases) | {self.default}

    def expressions(self) -> tuple[ExpressionSite, ...]:
        """Return each case's condition."""
        return tuple(ExpressionSite(f"cases[{i}].when", c.when) for i, c in enumerate(self.cases))

    def config_json(self) -> JsonObject:
        """Return cases and default."""
        cases: list[JsonValue] = [{"when": c.when, "outcome": c.outcome} for c in self.cases]
        return {"cases": cases, "default": self.default}


@dataclass(frozen=True, kw_only=True)
class ForkNode(BaseNode):
    """Starts one concurrent branch per declared branch."""

    type: ClassVar[NodeType] = NodeType.FORK
    branch_names: tuple[str, ...]

    def outcomes(self, actions: Mapping[str, frozenset[str]] = NO_ACTIONS) -> frozenset[str]:
        """Return no ordinary outcomes: a fork leaves only by branch edges."""
        return frozenset()

    @property
    def branches(self) -> tuple[str, ...]:
        """Return the declared branches."""
        return self.branch_names

    def config_json(self) -> JsonObject:
        """Return the branches."""
        return {"branches": list(self.branch_names)}


@dataclass(frozen=True, kw_only=True)
class GatherNode(BaseNode):
    """Waits for one token per slot of one activation, merges them and continues once."""

    type: ClassVar[NodeType] = NodeType.GATHER
    slots: tuple[str, ...]
    conflicts: ConflictPolicy | None = None

    @property
    def conflict_policy(self) -> ConflictPolicy:
        """Return the conflict policy (`error` when absent)."""
        return self.conflicts or ConflictPolicy.ERROR

    def config_json(self) -> JsonObject:
        """Return slots and conflicts."""
        conflicts = None if self.conflicts is None else self.conflicts.value
        return {"slots": list(self.slots), "conflicts": conflicts}


@dataclass(frozen=True, kw_only=True)
class ForeachNode(BaseNode):
    """Runs its body once per item of a CEL list, binding the item to `variable` (`as`)."""

    type: ClassVar[NodeType] = NodeType.FOREACH
    items: str
    variable: str
    concurrency: int | None = None
    on_item_failure: ItemFailure | None = None
    errors: str | None = None

    @property
    def max_concurrency(self) -> int:
        """Return how many items may run at once (1 when absent)."""
        return self.concurrency if self.concurrency is not None else 1

    @property
    def failure_policy(self) -> ItemFailure:
        """Return the item failure policy (`fail` when absent)."""
        return self.on_item_failure or ItemFailure.FAIL

    def outcomes(self, actions: Mapping[str, frozenset[str]] = NO_ACTIONS) -> frozenset[str]:
        """Return `item` (into the body) and `done`."""
        return frozenset({Outcome.ITEM.value, Outcome.DONE.value})

    def expressions(self) -> tuple[ExpressionSite, ...]:
        """Return the items expression."""
        return (ExpressionSite("items", self.items),)

    def state_writes(self) -> tuple[StateWrite, ...]:
        """Return the errors field."""
        return () if self.errors is None else (StateWrite("errors", self.errors),)

    def config_json(self) -> JsonObject:
        """Return items, as, concurrency, on_item_failure and errors."""
        failure = None if self.on_item_failure is None else self.on_item_failure.value
        return {
            "items": self.items,
            "as": self.variable,
            "concurrency": self.concurrency,
            "on_item_failure": failure,
            "errors": self.errors,
        }


@dataclass(frozen=True, kw_only=True)
class LoopNode(BaseNode):
    """Runs its body while a CEL condition holds, at most `max_iterations` times."""

    type: ClassVar[NodeType] = NodeType.LOOP
    condition: str
    max_iterations: int
    variable: str | None = None

    def outcomes(self, actions: Mapping[str, frozenset[str]] = NO_ACTIONS) -> frozenset[str]:
        """Return `body`, `done` and `exhausted` (taken when `max_iterations` runs out)."""
        return frozenset({Outcome.BODY.value, Outcome.DONE.value, Outcome.EXHAUSTED.value})

    def expressions(self) -> tuple[ExpressionSite, ...]:
        """Return the while condition."""
        return (ExpressionSite("while", self.condition),)

    def config_json(self) -> JsonObject:
        """Return while, max_iterations and as."""
        return {"while": self.condition, "max_iterations": self.max_iterations, "as": self.variable}


@dataclass(frozen=True, kw_only=True)
class RaceNode(BaseNode):
    """Runs its branches concurrently; the first to return wins and the rest are cancelled."""

    type: ClassVar[NodeType] = NodeType.RACE
    branch_names: tuple[str, ...]

    def outcomes(self, actions: Mapping[str, frozenset[str]] = NO_ACTIONS) -> frozenset[str]:
        """Return each branch name (the winner) and `next`."""
        return frozenset(self.branch_names) | {Outcome.NEXT.value}

    @property
    def branches(self) -> tuple[str, ...]:
        """Return the declared branches."""
        return self.branch_names

    def config_json(self) -> JsonObject:
        """Return the branches."""
        return {"branches": list(self.branch_names)}


@dataclass(frozen=True, kw_only=True)
class ApprovalPolicy:
    """`all`, `any`, or `{"quorum": n}`."""

    kind: PolicyKind
    quorum: int | None = None

    def to_json(self) -> JsonValue:
        """Return the policy as in the document."""
        if self.kind is PolicyKind.QUORUM:
            return {"quorum": self.quorum}
        return self.kind.value


@dataclass(frozen=True, kw_only=True)
class ApprovalNode(BaseNode):
    """Suspends its frame until the groups decide."""

    type: ClassVar[NodeType] = NodeType.APPROVAL
    groups: tuple[str, ...]
    policy: ApprovalPolicy | None = None
    title: str | None = None
    instructions: str | None = None
    show: tuple[str, ...] = ()
    due_in_s: Number | None = None
    allow_starter: bool = False

    @property
    def decision_policy(self) -> ApprovalPolicy:
        """Return the policy (`all` when absent)."""
        return self.policy or ApprovalPolicy(kind=PolicyKind.ALL)

    def outcomes(self, actions: Mapping[str, frozenset[str]] = NO_ACTIONS) -> frozenset[str]:
        """Return `approved` and `rejected`."""
        return frozenset({Outcome.APPROVED.value, Outcome.REJECTED.value})

    def expressions(self) -> tuple[ExpressionSite, ...]:
        """Return title and instructions as templates."""
        texts = (("title", self.title), ("instructions", self.instructions))
        templates = tuple(
            ExpressionSite(k, v, ExpressionKind.TEMPLATE) for k, v in texts if v is not None
        )
        return templates + tuple(ExpressionSite(f"show[{i}]", v) for i, v in enumerate(self.show))

    def config_json(self) -> JsonObject:
        """Return groups, policy, title, instructions, show, due_in_s and allow_starter."""
        return {
            "groups": list(self.groups),
            "policy": None if self.policy is None else self.policy.to_json(),
            "title": self.title,
            "instructions": self.instructions,
            "show": list(self.show) or None,
            "due_in_s": self.due_in_s,
            "allow_starter": self.allow_starter or None,
        }


@dataclass(frozen=True, kw_only=True)
class WaitNode(BaseNode):
    """Suspends its frame for `seconds`, or until the CEL timestamp `until`."""

    type: ClassVar[NodeType] = NodeType.WAIT
    seconds: Number | None = None
    until: str | None = None

    def expressions(self) -> tuple[ExpressionSite, ...]:
        """Return the until expression."""
        return () if self.until is None else (ExpressionSite("until", self.until),)

    def config_json(self) -> JsonObject:
        """Return seconds or until."""
        return {"seconds": self.seconds, "until": self.until}


@dataclass(frozen=True, slots=True)
class OutputMapping:
    """`parent_field: child_field` in `subflow.output`."""

    parent_field: str
    child_field: str


@dataclass(frozen=True, kw_only=True)
class SubflowNode(BaseNode):
    """Runs another published flow as a child scope."""

    type: ClassVar[NodeType] = NodeType.SUBFLOW
    flow: str
    version: int | None = None
    input: tuple[Assignment, ...] | None = None
    output: tuple[OutputMapping, ...] | None = None

    def expressions(self) -> tuple[ExpressionSite, ...]:
        """Return one expression per input field."""
        return tuple(ExpressionSite(f"input.{a.field}", a.expression) for a in self.input or ())

    def state_writes(self) -> tuple[StateWrite, ...]:
        """Return the parent fields the output mapping writes."""
        pairs = self.output or ()
        return tuple(StateWrite(f"output.{m.parent_field}", m.parent_field) for m in pairs)

    def config_json(self) -> JsonObject:
        """Return flow, version, input and output."""
        output: JsonObject | None = None
        if self.output is not None:
            output = {m.parent_field: m.child_field for m in self.output}
        return {
            "flow": self.flow,
            "version": self.version,
            "input": _assignments_json(self.input),
            "output": output,
        }


@dataclass(frozen=True, kw_only=True)
class FailNode(BaseNode):
    """Fails its activation with a message."""

    type: ClassVar[NodeType] = NodeType.FAIL
    error: str

    def outcomes(self, actions: Mapping[str, frozenset[str]] = NO_ACTIONS) -> frozenset[str]:
        """Return no outcomes: a fail never continues."""
        return frozenset()

    def config_json(self) -> JsonObject:
        """Return the error message."""
        return {"error": self.error}


Node = (
    StartNode
    | EndNode
    | TaskNode
    | SetNode
    | IfNode
    | SwitchNode
    | ForkNode
    | GatherNode
    | ForeachNode
    | LoopNode
    | RaceNode
    | ApprovalNode
    | WaitNode
    | SubflowNode
    | FailNode
)

SCOPE_TYPES: Final = frozenset({NodeType.FOREACH, NodeType.LOOP, NodeType.RACE})
BRANCHING_TYPES: Final = frozenset({NodeType.FORK, NodeType.RACE})
# Outcomes of these types depend on the node's config (or the action catalog), not its type.
CONFIGURED_OUTCOME_TYPES: Final = frozenset({NodeType.TASK, NodeType.SWITCH, NodeType.RACE})
STATIC_OUTCOMES: Final[Mapping[NodeType, frozenset[str]]] = {
    NodeType.START: frozenset({"next"}),
    NodeType.END: frozenset(),
    NodeType.SET: frozenset({"next"}),
    NodeType.IF: frozenset({"true", "false"}),
    NodeType.FORK: frozenset(),
    NodeType.GATHER: frozenset({"next"}),
    NodeType.FOREACH: frozenset({"item", "done"}),
    NodeType.LOOP: frozenset({"body", "done", "exhausted"}),
    NodeType.APPROVAL: frozenset({"approved", "rejected"}),
    NodeType.WAIT: frozenset({"next"}),
    NodeType.SUBFLOW: frozenset({"next"}),
    NodeType.FAIL: frozenset(),
}
BODY_OUTCOMES: Final[Mapping[NodeType, str]] = {
    NodeType.FOREACH: Outcome.ITEM.value,
    NodeType.LOOP: Outcome.BODY.value,
}


@dataclass(frozen=True, kw_only=True)
class Graph:
    """One flow version; `name`, `state` and `layout` are None when absent from the document."""

    nodes: tuple[Node, ...]
    edges: tuple[Edge, ...]
    name: str | None = None
    state: tuple[StateField, ...] | None = None
    layout: JsonObject | None = field(default=None, compare=True)
    # The optional JSON Schema of the run's input (engine/core/inputs.py checks runs by it).
    input: JsonObject | None = None

    @classmethod
    def from_json(cls, document: object) -> Graph:
        """Return the graph of a document; raise GraphFormatError listing every format issue."""
        decoded = decode_document(document)
        if decoded.issues:
            raise GraphFormatError(decoded.issues)
        return decoded.graph

    @cached_property
    def nodes_by_id(self) -> Mapping[str, Node]:
        """Return every node by id."""
        return {node.id: node for node in self.nodes}

    @cached_property
    def state_fields(self) -> Mapping[str, StateField]:
        """Return every declared state field by name."""
        return {declared.name: declared for declared in self.state or ()}

    @cached_property
    def _outgoing(self) -> Mapping[str, tuple[Edge, ...]]:
        """Return the edges leaving each node, in document order."""
        grouped: dict[str, list[Edge]] = {}
        for edge in self.edges:
            grouped.setdefault(edge.source, []).append(edge)
        return {source: tuple(edges) for source, edges in grouped.items()}

    def node(self, node_id: str) -> Node:
        """Return the node with this id; raise KeyError if there is none."""
        return self.nodes_by_id[node_id]

    def outgoing(self, node_id: str) -> tuple[Edge, ...]:
        """Return the edges leaving a node, in document order."""
        return self._outgoing.get(node_id, ())

    def successor(self, node_id: str, outcome: str) -> Edge | None:
        """Return the edge a node's outcome continues on, or None if it is not wired."""
        return next((e for e in self.outgoing(node_id) if e.follows == outcome), None)

    def branch_edge(self, node_id: str, branch: str) -> Edge | None:
        """Return the edge of one fork or race branch, or None if it is not wired."""
        return next((e for e in self.outgoing(node_id) if e.branch == branch), None)

    def to_json(self) -> JsonObject:
        """Return the document: exactly the fields it was decoded from."""
        document: JsonObject = {"format": FORMAT}
        if self.name is not None:
            document["name"] = self.name
        if self.state is not None:
            document["state"] = {declared.name: declared.to_json() for declared in self.state}
        if self.input is not None:
            document["input"] = copy_json(self.input)
        document["nodes"] = [node.to_json() for node in self.nodes]
        document["edges"] = [edge.to_json() for edge in self.edges]
        if self.layout is not None:
            document["layout"] = copy_json(self.layout)
        return document


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


# ---------------------------------------------------------------------------------------------
# Decoding


@dataclass(frozen=True, kw_only=True)
class FormatIssue:
    """A local format issue found while decoding: where it is and how to fix it."""

    code: FormatCode
    message: str
    node: str | None = None
    edge: str | None = None
    edge_index: int | None = None
    field: str | None = None


class GraphFormatError(ValueError):
    """A document that does not decode into a Graph; `issues` lists every reason."""

    def __init__(self, issues: tuple[FormatIssue, ...]) -> None:
        super().__init__("; ".join(issue.message for issue in issues))
        self.issues = issues


@dataclass(frozen=True, kw_only=True)
class DamagedEdge:
    """An edge with format issues; kept only so reachability does not cascade."""

    index: int
    source: str
    target: str


@dataclass(frozen=True, kw_only=True)
class DecodedDocument:
    """What decoding found: the (partial, when there are issues) graph and the issues."""

    graph: Graph
    issues: tuple[FormatIssue, ...]
    node_types: Mapping[str, NodeType | None]
    edge_indices: tuple[int, ...]
    damaged_edges: tuple[DamagedEdge, ...]
    declared_state: frozenset[str] | None  # None: `state` is unreadable, so names are unknown
    # The `as` of every foreach/loop with an id, decoded or not: a body keeps its variable
    # when its owner's config has an error, so the validator does not cascade.
    node_variables: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class _Where:
    """Where a reader's fields live, for issue locations."""

    node: str | None = None
    edge: str | None = None
    edge_index: int | None = None
    prefix: str = ""


_ABSENT: Final = object()


class _Reader:
    """Reads typed fields from one JSON object, recording issues and which keys it read."""

    def __init__(self, raw: Mapping[str, object], where: _Where, issues: list[FormatIssue]):
        self.raw = raw
        self.where = where
        self.issues = issues
        self.read: set[str] = set()
        self.first_issue = len(issues)

    def child(self, raw: Mapping[str, object], key: str) -> _Reader:
        """Return a reader for a nested object whose issues count as this reader's."""
        where = _Where(self.where.node, self.where.edge, self.where.edge_index, self.path(key))
        child = _Reader(raw, where, self.issues)
        child.first_issue = self.first_issue
        return child

    def path(self, key: str) -> str:
        """Return the field path of a key."""
        return f"{self.where.prefix}{key}"

    def report(self, code: FormatCode, key: str | None, message: str) -> None:
        """Record an issue at one of this reader's fields."""
        where = self.where
        path = None if key is None else self.path(key)
        self.issues.append(
            FormatIssue(
                code=code,
                message=message,
                node=where.node,
                edge=where.edge,
                edge_index=where.edge_index,
                field=path,
            )
        )

    def value(self, key: str, required: bool) -> object:
        """Return the raw value of a key, or _ABSENT (reporting it when required)."""
        self.read.add(key)
        if key in self.raw:
            return self.raw[key]
        if required:
            self.report(FormatCode.FIELD_MISSING, key, f"`{self.path(key)}` is required.")
        return _ABSENT

    def wrong_type(self, key: str, expected: str) -> None:
        """Record that a field has the wrong JSON type."""
        got = _json_type_name(self.raw[key])
        self.report(
            FormatCode.FIELD_TYPE, key, f"`{self.path(key)}` must be {expected}, not {got}."
        )

    def string(self, key: str, *, required: bool = False, non_empty: bool = True) -> str | None:
        """Return a string field (non-empty unless told otherwise)."""
        value = self.value(key, required)
        if value is _ABSENT:
            return None
        if not isinstance(value, str) or (non_empty and not value):
            self.wrong_type(key, "a non-empty string" if non_empty else "a string")
            return None
        return value

    def boolean(self, key: str) -> bool | None:
        """Return an optional boolean field."""
        value = self.value(key, required=False)
        if value is _ABSENT:
            return None
        if not isinstance(value, bool):
            self.wrong_type(key, "true or false")
            return None
        return value

    def integer(self, key: str, *, required: bool = False) -> int | None:
        """Return an integer field (booleans are not integers)."""
        value = self.value(key, required)
        if value is _ABSENT:
            return None
        if not isinstance(value, int) or isinstance(value, bool):
            self.wrong_type(key, "an integer")
            return None
        return value

    def number(self, key: str, *, required: bool = False, minimum: float = 0.0) -> Number | None:
        """Return a finite number field that is at least `minimum`."""
        value = self.value(key, required)
        if value is _ABSENT:
            return None
        if (
            isinstance(value, bool)
            or not isinstance(value, (int, float))
            or not math.isfinite(value)
        ):
            self.wrong_type(key, "a number")
            return None
        if value < minimum:
            self.report(FormatCode.FIELD_VALUE, key, f"`{self.path(key)}` must be ≥ {minimum:g}.")
            return None
        return value

    def mapping(self, key: str, *, required: bool = False) -> Mapping[str, object] | None:
        """Return an object field."""
        value = self.value(key, required)
        if value is _ABSENT:
            return None
        if not isinstance(value, dict):
            self.wrong_type(key, "an object")
            return None
        return value

    def json_object(self, key: str) -> JsonObject | None:
        """Return a copy of an optional object field holding any JSON."""
        value = self.mapping(key)
        if value is None:
            return None
        candidate: object = dict(value)
        if not is_json(candidate) or not isinstance(candidate, dict):
            self.report(FormatCode.FIELD_TYPE, key, f"`{self.path(key)}` must hold only JSON.")
            return None
        return copy_object(candidate)

    def names(self, key: str, *, required: bool = False) -> tuple[str, ...] | None:
        """Return a non-empty list of distinct non-empty strings."""
        value = self.value(key, required)
        if value is _ABSENT:
            return None
        if not isinstance(value, list) or not all(isinstance(n, str) and n for n in value):
            self.wrong_type(key, "a list of non-empty strings")
            return None
        return self._distinct(key, tuple(value))

    def _distinct(self, key: str, names: tuple[str, ...]) -> tuple[str, ...] | None:
        """Return the names if non-empty and distinct, else report why."""
        if not names:
            self.report(FormatCode.FIELD_VALUE, key, f"`{self.path(key)}` must not be empty.")
            return None
        repeated = sorted(n for n, seen in Counter(names).items() if seen > 1)
        if repeated:
            listed = ", ".join(f"`{n}`" for n in repeated)
            self.report(FormatCode.FIELD_VALUE, key, f"`{self.path(key)}` repeats {listed}.")
            return None
        return names

    def string_pairs(
        self, key: str, *, required: bool = False
    ) -> tuple[tuple[str, str], ...] | None:
        """Return an object whose values are non-empty strings, as ordered pairs."""
        value = self.mapping(key, required=required)
        if value is None:
            return None
        bad = [k for k, v in value.items() if not isinstance(v, str) or not v]
        if bad:
            self.report(
                FormatCode.FIELD_TYPE,
                f"{key}.{bad[0]}",
                f"`{self.path(key)}.{bad[0]}` must be a non-empty string.",
            )
            return None
        return tuple((k, v) for k, v in value.items() if isinstance(v, str))

    def choice[E: StrEnum](
        self, key: str, enum: type[E], code: FormatCode, *, required: bool = False
    ) -> E | None:
        """Return an enum-valued string field, reporting other strings with `code`."""
        text = self.string(key, required=required)
        if text is None:
            return None
        if text not in enum._value2member_map_:
            allowed = ", ".join(f"`{member.value}`" for member in enum)
            self.report(code, key, f"`{self.path(key)}` is `{text}`; use one of {allowed}.")
            return None
        return enum(text)

    def variable(self, key: str, *, required: bool = False) -> str | None:
        """Return a CEL variable name that does not shadow `state`, `input` or a keyword."""
        name = self.string(key, required=required)
        if name is not None and (not IDENTIFIER.match(name) or name in RESERVED_VARIABLES):
            self.report(
                FormatCode.FIELD_VALUE,
                key,
                f"`{self.path(key)}` must be a CEL identifier other than `state`, `input` or a "
                f"CEL keyword, not `{name}`.",
            )
            return None
        return name

    def finish(self) -> bool:
        """Report keys nobody read; return whether this reader recorded no issue."""
        for key in self.raw:
            if key not in self.read:
                self.report(
                    FormatCode.FIELD_UNKNOWN, key, f"`{self.path(key)}` is not a field here."
                )
        return len(self.issues) == self.first_issue


def _json_type_name(value: object) -> str:
    """Return the JSON name of a value's type, for messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "an empty string" if not value else "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


@dataclass(frozen=True, slots=True)
class _Head:
    """A node's id and label, read before its type-specific fields."""

    id: str
    label: str | None


def _decode_start(r: _Reader, head: _Head) -> StartNode | None:
    """Decode a start node."""
    return StartNode(id=head.id, label=head.label) if r.finish() else None


def _decode_end(r: _Reader, head: _Head) -> EndNode | None:
    """Decode an end node."""
    return EndNode(id=head.id, label=head.label) if r.finish() else None


def _decode_retry(r: _Reader) -> Retry | None:
    """Decode the optional retry object."""
    raw = r.mapping("retry")
    if raw is None:
        return None
    nested = r.child(raw, "retry.")
    attempts = nested.integer("max_attempts", required=True)
    if attempts is not None and attempts < 1:
        nested.report(FormatCode.FIELD_VALUE, "max_attempts", "`retry.max_attempts` must be ≥ 1.")
    backoff = nested.number("backoff_s")
    if not nested.finish() or attempts is None:
        return None
    return Retry(max_attempts=attempts, backoff_s=backoff)


def _decode_task(r: _Reader, head: _Head) -> TaskNode | None:
    """Decode a task node."""
    action = r.string("action", required=True)
    params = r.json_object("params")
    output = r.string("output")
    retry = _decode_retry(r)
    timeout = r.number("timeout_s", minimum=0.0)
    if timeout == 0:
        r.report(FormatCode.FIELD_VALUE, "timeout_s", "`timeout_s` must be > 0.")
    if not r.finish() or action is None:
        return None
    return TaskNode(
        id=head.id,
        label=head.label,
        action=action,
        params=params,
        output=output,
        retry=retry,
        timeout_s=timeout,
    )


def _decode_set(r: _Reader, head: _Head) -> SetNode | None:
    """Decode a set node."""
    pairs = r.string_pairs("values", required=True)
    if not r.finish() or pairs is None:
        return None
    values = tuple(Assignment(name, expression) for name, expression in pairs)
    return SetNode(id=head.id, label=head.label, values=values)


def _decode_if(r: _Reader, head: _Head) -> IfNode | None:
    """Decode an if node."""
    condition = r.string("condition", required=True)
    if not r.finish() or condition is None:
        return None
    return IfNode(id=head.id, label=head.label, condition=condition)


def _decode_case(r: _Reader, index: int, raw: object) -> SwitchCase | None:
    """Decode one switch case object."""
    key = f"cases[{index}]"
    if not isinstance(raw, dict):
        r.report(FormatCode.FIELD_TYPE, key, f"`{r.path(key)}` must be an object.")
        return None
    nested = r.child(raw, f"{key}.")
    first = len(r.issues)
    when = nested.string("when", required=True)
    outcome = nested.string("outcome", required=True)
    nested.finish()
    if len(r.issues) > first or when is None or outcome is None:
        return None
    return SwitchCase(when=when, outcome=outcome)


def _decode_switch(r: _Reader, head: _Head) -> SwitchNode | None:
    """Decode a switch node."""
    raw_cases = r.value("cases", required=True)
    cases: list[SwitchCase | None] = []
    if isinstance(raw_cases, list) and raw_cases:
        cases = [_decode_case(r, i, raw) for i, raw in enumerate(raw_cases)]
    elif isinstance(raw_cases, list):
        r.report(FormatCode.FIELD_VALUE, "cases", "`cases` must list at least one case.")
    elif raw_cases is not _ABSENT:
        r.wrong_type("cases", "a list of cases")
    default = r.string("default", required=True)
    if not r.finish() or default is None:
        return None
    decoded = tuple(case for case in cases if case is not None)
    return SwitchNode(id=head.id, label=head.label, cases=decoded, default=default)


def _decode_fork(r: _Reader, head: _Head) -> ForkNode | None:
    """Decode a fork node."""
    branches = r.names("branches", required=True)
    if not r.finish() or branches is None:
        return None
    return ForkNode(id=head.id, label=head.label, branch_names=branches)


def _decode_gather(r: _Reader, head: _Head) -> GatherNode | None:
    """Decode a gather node."""
    slots = r.names("slots", required=True)
    conflicts = r.choice("conflicts", ConflictPolicy, FormatCode.GATHER_CONFLICTS_INVALID)
    if not r.finish() or slots is None:
        return None
    return GatherNode(id=head.id, label=head.label, slots=slots, conflicts=conflicts)


def _decode_foreach(r: _Reader, head: _Head) -> ForeachNode | None:
    """Decode a foreach node."""
    items = r.string("items", required=True)
    variable = r.variable("as", required=True)
    concurrency = r.integer("concurrency")
    if concurrency is not None and concurrency < 1:
        r.report(
            FormatCode.FOREACH_CONCURRENCY_INVALID,
            "concurrency",
            f"`concurrency` is {concurrency}; it must be an integer ≥ 1.",
        )
    failure = r.choice("on_item_failure", ItemFailure, FormatCode.FIELD_VALUE)
    errors = r.string("errors")
    if failure is ItemFailure.COLLECT and errors is None and "errors" not in r.raw:
        r.report(
            FormatCode.FIELD_MISSING,
            "errors",
            "`on_item_failure: collect` needs `errors`: an `append` state field for failures.",
        )
    if not r.finish() or items is None or variable is None:
        return None
    return ForeachNode(
        id=head.id,
        label=head.label,
        items=items,
        variable=variable,
        concurrency=concurrency,
        on_item_failure=failure,
        errors=errors,
    )


def _decode_loop(r: _Reader, head: _Head) -> LoopNode | None:
    """Decode a loop node."""
    condition = r.string("while", required=True)
    limit = r.integer("max_iterations", required=True)
    if limit is not None and limit < 1:
        r.report(
            FormatCode.LOOP_MAX_ITERATIONS_INVALID,
            "max_iterations",
            f"`max_iterations` is {limit}; it must be an integer ≥ 1.",
        )
    variable = r.variable("as")
    if not r.finish() or condition is None or limit is None:
        return None
    return LoopNode(
        id=head.id, label=head.label, condition=condition, max_iterations=limit, variable=variable
    )


def _decode_race(r: _Reader, head: _Head) -> RaceNode | None:
    """Decode a race node."""
    branches = r.names("branches", required=True)
    if not r.finish() or branches is None:
        return None
    return RaceNode(id=head.id, label=head.label, branch_names=branches)


def _decode_policy(r: _Reader) -> ApprovalPolicy | None:
    """Decode `all`, `any` or `{"quorum": n}` with n ≥ 1."""
    raw = r.value("policy", required=False)
    if raw is _ABSENT:
        return None
    if raw in (PolicyKind.ALL.value, PolicyKind.ANY.value):
        return ApprovalPolicy(kind=PolicyKind(raw))
    quorum = raw.get("quorum") if isinstance(raw, dict) and set(raw) == {"quorum"} else None
    if isinstance(quorum, int) and not isinstance(quorum, bool) and quorum >= 1:
        return ApprovalPolicy(kind=PolicyKind.QUORUM, quorum=quorum)
    r.report(
        FormatCode.APPROVAL_POLICY_INVALID,
        "policy",
        f'`policy` must be "all", "any" or {{"quorum": n}} with an integer n ≥ 1, not {raw!r}.',
    )
    return None


def _decode_approval(r: _Reader, head: _Head) -> ApprovalNode | None:
    """Decode an approval node."""
    groups = r.names("groups", required=True)
    policy = _decode_policy(r)
    title = r.string("title", non_empty=False)
    instructions = r.string("instructions", non_empty=False)
    show = r.names("show")
    due_in_s = r.number("due_in_s", minimum=1)
    allow_starter = r.boolean("allow_starter")
    if not r.finish() or groups is None:
        return None
    return ApprovalNode(
        id=head.id,
        label=head.label,
        groups=groups,
        policy=policy,
        title=title,
        instructions=instructions,
        show=show or (),
        due_in_s=due_in_s,
        allow_starter=bool(allow_starter),
    )


def _decode_wait(r: _Reader, head: _Head) -> WaitNode | None:
    """Decode a wait node: exactly one of `seconds` and `until`."""
    seconds = r.number("seconds")
    until = r.string("until")
    if ("seconds" in r.raw) == ("until" in r.raw):
        r.report(
            FormatCode.WAIT_TIMING_INVALID,
            None,
            "A wait needs exactly one of `seconds` (a number) and `until` (a CEL timestamp).",
        )
    if not r.finish():
        return None
    return WaitNode(id=head.id, label=head.label, seconds=seconds, until=until)


def _decode_subflow(r: _Reader, head: _Head) -> SubflowNode | None:
    """Decode a subflow node."""
    flow = r.string("flow", required=True)
    if flow is not None and not SLUG.match(flow):
        r.report(
            FormatCode.SUBFLOW_FLOW_INVALID,
            "flow",
            f"`flow` is `{flow}`; it must be a flow slug (letters, digits, `-`, `_`).",
        )
    version = r.integer("version")
    if version is not None and version < 1:
        r.report(FormatCode.FIELD_VALUE, "version", "`version` must be ≥ 1.")
    inputs = r.string_pairs("input")
    outputs = r.string_pairs("output")
    if not r.finish() or flow is None:
        return None
    return SubflowNode(
        id=head.id,
        label=head.label,
        flow=flow,
        version=version,
        input=None if inputs is None else tuple(Assignment(k, v) for k, v in inputs),
        output=None if outputs is None else tuple(OutputMapping(k, v) for k, v in outputs),
    )


def _decode_fail(r: _Reader, head: _Head) -> FailNode | None:
    """Decode a fail node."""
    error = r.string("error", required=True)
    if not r.finish() or error is None:
        return None
    return FailNode(id=head.id, label=head.label, error=error)


_NODE_DECODERS: Final[Mapping[NodeType, Callable[[_Reader, _Head], Node | None]]] = {
    NodeType.START: _decode_start,
    NodeType.END: _decode_end,
    NodeType.TASK: _decode_task,
    NodeType.SET: _decode_set,
    NodeType.IF: _decode_if,
    NodeType.SWITCH: _decode_switch,
    NodeType.FORK: _decode_fork,
    NodeType.GATHER: _decode_gather,
    NodeType.FOREACH: _decode_foreach,
    NodeType.LOOP: _decode_loop,
    NodeType.RACE: _decode_race,
    NodeType.APPROVAL: _decode_approval,
    NodeType.WAIT: _decode_wait,
    NodeType.SUBFLOW: _decode_subflow,
    NodeType.FAIL: _decode_fail,
}


class _NodeDecoder:
    """Decodes the `nodes` list, remembering every id and type it could identify."""

    def __init__(self, issues: list[FormatIssue]) -> None:
        self.issues = issues
        self.types: dict[str, NodeType | None] = {}
        self.variables: dict[str, str] = {}

    def report(self, code: FormatCode, message: str, node: str | None, field: str) -> None:
        """Record an issue about one node."""
        self.issues.append(FormatIssue(code=code, message=message, node=node, field=field))

    def decode(self, index: int, raw: object) -> Node | None:
        """Decode one node, or return None when it has issues."""
        where = f"nodes[{index}]"
        if not isinstance(raw, dict):
            self.report(FormatCode.FIELD_TYPE, f"`{where}` must be an object.", None, where)
            return None
        node_id = self._identify(index, raw)
        if node_id is None:
            return None
        node_type = self._type(node_id, raw)
        self.types[node_id] = node_type
        if node_type is None:
            return None
        variable = raw.get("as")
        if node_type in BODY_OUTCOMES and isinstance(variable, str) and variable:
            self.variables[node_id] = variable
        reader = _Reader(raw, _Where(node=node_id), self.issues)
        reader.read.update({"id", "type"})
        head = _Head(node_id, reader.string("label", non_empty=False))
        return _NODE_DECODERS[node_type](reader, head)

    def _identify(self, index: int, raw: Mapping[str, object]) -> str | None:
        """Return the node's id if it is a non-empty string not used before."""
        node_id = raw.get("id")
        if not isinstance(node_id, str) or not node_id:
            message = f"`nodes[{index}].id` must be a non-empty string, not {node_id!r}."
            self.report(FormatCode.NODE_ID_INVALID, message, None, f"nodes[{index}].id")
            return None
        reserved = sorted(set(node_id) & set(ID_RESERVED_CHARACTERS))
        if reserved:
            message = (
                f"Node id `{node_id}` contains {' '.join(reserved)}: execution ids and node paths "
                "use `:`, `.` and `/` as separators, so node ids cannot."
            )
            self.report(FormatCode.NODE_ID_INVALID, message, node_id, f"nodes[{index}].id")
            return None
        if node_id in self.types:
            message = f"Node id `{node_id}` is used twice; give `nodes[{index}]` its own id."
            self.report(FormatCode.NODE_ID_DUPLICATE, message, node_id, f"nodes[{index}].id")
            return None
        return node_id

    def _type(self, node_id: str, raw: Mapping[str, object]) -> NodeType | None:
        """Return the node's type if it is one of the fifteen."""
        node_type = raw.get("type")
        if isinstance(node_type, str) and node_type in _NODE_TYPES:
            return _NODE_TYPES[node_type]
        known = ", ".join(member.value for member in NodeType)
        message = f"Node `{node_id}` has type {node_type!r}; use one of: {known}."
        self.report(FormatCode.NODE_TYPE_UNKNOWN, message, node_id, "type")
        return None


def _edge_reference(index: int, raw: Mapping[str, object]) -> str:
    """Return how problems name an edge that may be malformed."""
    edge_id, source, target = raw.get("id"), raw.get("source"), raw.get("target")
    if isinstance(edge_id, str) and edge_id:
        return edge_id
    if isinstance(source, str) and isinstance(target, str):
        return f"{source}->{target}"
    return f"edges[{index}]"


_EDGE_KEYS: Final = frozenset({"id", "source", "target", "outcome", "branch", "slot"})


class _EdgeDecoder:
    """Decodes the `edges` list, keeping damaged edges' endpoints for reachability."""

    def __init__(self, issues: list[FormatIssue]) -> None:
        self.issues = issues
        self.ids: set[str] = set()
        self.damaged: list[DamagedEdge] = []

    def decode(self, index: int, raw: object) -> Edge | None:
        """Decode one edge, or return None when it has issues."""
        if not isinstance(raw, dict):
            where = f"edges[{index}]"
            issue = FormatIssue(
                code=FormatCode.FIELD_TYPE,
                message=f"`{where}` must be an object.",
                edge=where,
                edge_index=index,
                field=where,
            )
            self.issues.append(issue)
            return None
        fast = self._fast(raw)
        if fast is not None:
            return fast
        reader = _Reader(
            raw, _Where(edge=_edge_reference(index, raw), edge_index=index), self.issues
        )
        edge = self._read(reader)
        if (
            edge is None
            and isinstance(raw.get("source"), str)
            and isinstance(raw.get("target"), str)
        ):
            self.damaged.append(
                DamagedEdge(index=index, source=raw["source"], target=raw["target"])
            )
        return edge

    def _fast(self, raw: Mapping[str, object]) -> Edge | None:
        """Return the edge when nothing in it needs reporting (the common case), else None."""
        if not _EDGE_KEYS.issuperset(raw) or ("outcome" in raw and "branch" in raw):
            return None
        fields = {key: value for key, value in raw.items() if isinstance(value, str) and value}
        if len(fields) != len(raw) or "source" not in fields or "target" not in fields:
            return None
        edge_id = fields.get("id")
        if edge_id is not None:
            if edge_id in self.ids:
                return None
            self.ids.add(edge_id)
        return Edge(
            source=fields["source"],
            target=fields["target"],
            id=edge_id,
            outcome=fields.get("outcome"),
            branch=fields.get("branch"),
            slot=fields.get("slot"),
        )

    def _read(self, r: _Reader) -> Edge | None:
        """Read an edge's fields."""
        edge_id = self._edge_id(r)
        source = r.string("source", required=True)
        target = r.string("target", required=True)
        outcome, branch, slot = r.string("outcome"), r.string("branch"), r.string("slot")
        if "outcome" in r.raw and "branch" in r.raw:
            r.report(
                FormatCode.EDGE_BRANCH_WITH_OUTCOME,
                "outcome",
                "A branch edge has no outcome: remove `outcome` or `branch`.",
            )
        if not r.finish() or source is None or target is None:
            return None
        return Edge(
            source=source, target=target, id=edge_id, outcome=outcome, branch=branch, slot=slot
        )

    def _edge_id(self, r: _Reader) -> str | None:
        """Return the optional edge id if it is a non-empty string used once."""
        r.read.add("id")
        if "id" not in r.raw:
            return None
        edge_id = r.raw["id"]
        if not isinstance(edge_id, str) or not edge_id:
            r.report(
                FormatCode.EDGE_ID_INVALID,
                "id",
                f"Edge id must be a non-empty string, not {edge_id!r}.",
            )
            return None
        if edge_id in self.ids:
            r.report(FormatCode.EDGE_ID_DUPLICATE, "id", f"Edge id `{edge_id}` is used twice.")
            return None
        self.ids.add(edge_id)
        return edge_id


_DEFAULT_TYPES: Final[Mapping[Reducer, Callable[[object], bool]]] = {
    Reducer.OVERWRITE: lambda value: True,
    Reducer.APPEND: lambda value: isinstance(value, list),
    Reducer.UNION: lambda value: isinstance(value, list),
    Reducer.MERGE: lambda value: isinstance(value, dict),
    Reducer.SUM: lambda value: isinstance(value, (int, float)) and not isinstance(value, bool),
    Reducer.MIN: lambda value: (
        value is None or (isinstance(value, (int, float)) and not isinstance(value, bool))
    ),
    Reducer.MAX: lambda value: (
        value is None or (isinstance(value, (int, float)) and not isinstance(value, bool))
    ),
}


def _decode_state_field(r: _Reader, name: str, raw: object) -> StateField | None:
    """Decode one state field declaration."""
    if not IDENTIFIER.match(name) or name in CEL_RESERVED:
        r.report(
            FormatCode.STATE_NAME_INVALID,
            name,
            f"State field `{name}` needs a CEL identifier name (letters, digits, `_`).",
        )
        return None
    if not isinstance(raw, dict):
        r.report(FormatCode.FIELD_TYPE, name, f"`state.{name}` must be an object with a `reducer`.")
        return None
    nested = r.child(raw, f"{name}.")
    first = len(r.issues)
    reducer = nested.choice("reducer", Reducer, FormatCode.STATE_REDUCER_UNKNOWN, required=True)
    default = nested.value("default", required=False)
    nested.finish()
    if reducer is None or len(r.issues) > first:
        return None
    if default is _ABSENT:
        return StateField(name=name, reducer=reducer)
    if not is_json(default) or not _DEFAULT_TYPES[reducer](default):
        nested.report(
            FormatCode.STATE_DEFAULT_INVALID,
            "default",
            f"`state.{name}.default` does not suit the `{reducer}` reducer.",
        )
        return None
    return StateField(name=name, reducer=reducer, default=copy_json(default), has_default=True)


def _decode_state(r: _Reader) -> tuple[tuple[StateField, ...] | None, frozenset[str] | None]:
    """Decode the state declarations; also return every declared name, decoded or not."""
    raw = r.mapping("state")
    if raw is None:
        return None, None if "state" in r.raw else frozenset()
    nested = r.child(raw, "state.")
    fields = [_decode_state_field(nested, name, value) for name, value in raw.items()]
    return tuple(f for f in fields if f is not None), frozenset(raw)


def _decode_list(r: _Reader, key: str) -> list[object]:
    """Return a required list field, or an empty list after reporting it."""
    value = r.value(key, required=True)
    if value is _ABSENT:
        return []
    if not isinstance(value, list):
        r.wrong_type(key, "a list")
        return []
    return value


def _check_format(r: _Reader) -> None:
    """Report a missing or different `format`."""
    r.read.add("format")
    value = r.raw.get("format", _ABSENT)
    if value != FORMAT:
        shown = "missing" if value is _ABSENT else f"{value!r}"
        r.report(
            FormatCode.DOCUMENT_FORMAT, "format", f'`format` is {shown}; it must be "{FORMAT}".'
        )


def decode_document(document: object) -> DecodedDocument:
    """Decode a document, collecting every local issue instead of stopping at the first."""
    issues: list[FormatIssue] = []
    if not isinstance(document, dict):
        message = f"A flow document is a JSON object, not {_json_type_name(document)}."
        issues.append(FormatIssue(code=FormatCode.DOCUMENT_NOT_OBJECT, message=message))
        return _decoded(
            Graph(nodes=(), edges=()), issues, _NodeDecoder(issues), _EdgeDecoder(issues)
        )
    r = _Reader(document, _Where(), issues)
    _check_format(r)
    name = r.string("name", non_empty=False)
    state, declared = _decode_state(r)
    node_decoder, edge_decoder = _NodeDecoder(issues), _EdgeDecoder(issues)
    nodes = [node_decoder.decode(i, raw) for i, raw in enumerate(_decode_list(r, "nodes"))]
    edges = [edge_decoder.decode(i, raw) for i, raw in enumerate(_decode_list(r, "edges"))]
    layout = r.json_object("layout")
    input_schema = r.json_object("input")
    r.finish()
    graph = Graph(
        nodes=tuple(n for n in nodes if n is not None),
        edges=tuple(e for e in edges if e is not None),
        name=name,
        state=state,
        layout=layout,
        input=input_schema,
    )
    indices = tuple(i for i, e in enumerate(edges) if e is not None)
    return _decoded(graph, issues, node_decoder, edge_decoder, indices, declared)


def _decoded(
    graph: Graph,
    issues: list[FormatIssue],
    nodes: _NodeDecoder,
    edges: _EdgeDecoder,
    indices: tuple[int, ...] = (),
    declared: frozenset[str] | None = frozenset(),
) -> DecodedDocument:
    """Bundle what decoding found."""
    return DecodedDocument(
        graph=graph,
        issues=tuple(issues),
        node_types=nodes.types,
        edge_indices=indices,
        damaged_edges=tuple(edges.damaged),
        declared_state=declared,
        node_variables=nodes.variables,
    )
