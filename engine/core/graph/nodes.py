"""The frozen values of a flow: state fields, edges and the fifteen node types.

Every optional field is stored exactly as given (None: absent from the document), so
`to_json` gives back the fields a node was decoded from; defaults live in properties."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar, Final

from engine.core.graph.vocabulary import (
    NEXT,
    NO_ACTIONS,
    TYPE_NAMES,
    ConflictPolicy,
    ExpressionKind,
    ItemFailure,
    JsonObject,
    NodeType,
    Number,
    Outcome,
    PolicyKind,
    Reducer,
    copy_json,
    copy_object,
)
from engine.core.values import JSON as JsonValue


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
        return self.outcome if self.outcome is not None else NEXT

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
        document: JsonObject = {"id": self.id, "type": TYPE_NAMES[self.type]}
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
