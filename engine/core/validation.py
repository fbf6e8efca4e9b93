"""Validate `braid.graph/1` documents: every rule of the contract in one pass, plus join warnings.

The rules, the codes and the join analysis are explained in docs/validation.md.
"""

from __future__ import annotations

import json
from collections import defaultdict, deque
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from enum import StrEnum
from itertools import pairwise
from types import MappingProxyType
from typing import Final

from engine.core import expression_limits
from engine.core.expression_errors import (
    ExpressionLimitError,
    ExpressionSyntaxError,
    Position,
    position_at,
)
from engine.core.expressions import CelExpression, NameUse, Template, compile_cel, compile_template
from engine.core.graph import (
    BODY_OUTCOMES,
    BRANCHING_TYPES,
    RESERVED_VARIABLES,
    STATIC_OUTCOMES,
    DecodedDocument,
    Edge,
    ExpressionKind,
    ExpressionSite,
    ForeachNode,
    FormatIssue,
    GatherNode,
    Graph,
    LoopNode,
    Node,
    NodeType,
    Reducer,
    TaskNode,
    decode_document,
)
from engine.core.http_rules import header_problem, method_problem
from engine.core.inputs import schema_problems
from engine.core.values import JSON as JsonValue

MAX_NODES: Final = 5000
MAX_EDGES: Final = 20000
HTTP_REQUEST: Final = "http.request"

BUILTIN_ACTIONS: Final[Mapping[str, frozenset[str]]] = MappingProxyType(
    {
        name: frozenset({"next"})
        for name in ("http.request", "sleep", "noop", "fail_sometimes", "python")
    }
)


class Severity(StrEnum):
    """Errors make a flow unpublishable; warnings point at likely mistakes."""

    ERROR = "error"
    WARNING = "warning"


class ProblemCode(StrEnum):
    """Stable machine-readable codes; the table in docs/validation.md explains each."""

    # Local format issues (the values of graph.FormatCode).
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
    LOOP_MAX_ITERATIONS_OVER_LIMIT = "loop.max_iterations_over_limit"
    FOREACH_ITEMS_OVER_LIMIT = "foreach.items_over_limit"
    WAIT_TIMING_INVALID = "wait.timing_invalid"
    SUBFLOW_FLOW_INVALID = "subflow.flow_invalid"
    # The graph as a whole.
    GRAPH_TOO_LARGE = "graph.too_large"
    GRAPH_START_COUNT = "graph.start_count"
    GRAPH_NO_REACHABLE_END = "graph.no_reachable_end"
    GRAPH_CYCLE = "graph.cycle"
    NODE_UNREACHABLE = "node.unreachable"
    # Edges, branches and slots.
    EDGE_UNKNOWN_SOURCE = "edge.unknown_source"
    EDGE_UNKNOWN_TARGET = "edge.unknown_target"
    EDGE_DUPLICATE_SUCCESSOR = "edge.duplicate_successor"
    EDGE_OUTCOME_INVALID = "edge.outcome_invalid"
    EDGE_BRANCH_NOT_ALLOWED = "edge.branch_not_allowed"
    EDGE_SLOT_NOT_ALLOWED = "edge.slot_not_allowed"
    BRANCH_MISSING = "branch.missing"
    BRANCH_DUPLICATE = "branch.duplicate"
    BRANCH_UNDECLARED = "branch.undeclared"
    GATHER_SLOT_MISSING = "gather.slot_missing"
    GATHER_SLOT_UNDECLARED = "gather.slot_undeclared"
    GATHER_SLOT_UNFED = "gather.slot_unfed"
    # Bodies of foreach, loop and race.
    BODY_MISSING = "body.missing"
    BODY_ESCAPE = "body.escape"
    BODY_NO_RETURN = "body.no_return"
    # State, actions and expressions.
    STATE_WRITE_UNDECLARED = "state.write_undeclared"
    STATE_READ_UNDECLARED = "state.read_undeclared"
    FOREACH_ERRORS_NOT_APPEND = "foreach.errors_not_append"
    TASK_ACTION_UNKNOWN = "task.action_unknown"
    TASK_HTTP_METHOD_INVALID = "task.http_method_invalid"
    TASK_HTTP_HEADER_INVALID = "task.http_header_invalid"
    EXPRESSION_SYNTAX = "expression.syntax"
    EXPRESSION_LIMIT = "expression.limit"
    EXPRESSION_UNKNOWN_VARIABLE = "expression.unknown_variable"
    INPUT_SCHEMA_INVALID = "input.schema_invalid"
    # Warnings.
    GATHER_SLOT_EXCLUSIVE = "gather.slot_exclusive"
    GATHER_SLOT_DOUBLE = "gather.slot_double"
    FORK_BRANCH_DANGLING = "fork.branch_dangling"


WARNING_CODES: Final = frozenset(
    {
        ProblemCode.GATHER_SLOT_EXCLUSIVE,
        ProblemCode.GATHER_SLOT_DOUBLE,
        ProblemCode.FORK_BRANCH_DANGLING,
    }
)


@dataclass(frozen=True, kw_only=True)
class Problem:
    """One finding: what is wrong, how to fix it, and where (node, edge, config field)."""

    code: ProblemCode
    message: str
    node: str | None = None
    edge: str | None = None
    edge_index: int | None = None
    field: str | None = None
    position: Position | None = None
    severity: Severity = Severity.ERROR

    def to_json(self) -> dict[str, JsonValue]:
        """Return the problem as a JSON object with every key present."""
        return {
            "code": self.code.value,
            "severity": self.severity.value,
            "message": self.message,
            "node": self.node,
            "edge": self.edge,
            "edge_index": self.edge_index,
            "field": self.field,
            "position": None if self.position is None else self.position.to_json(),
        }


@dataclass(frozen=True, kw_only=True)
class Report:
    """Every error and warning of one document, and its Graph when it decoded cleanly."""

    errors: tuple[Problem, ...]
    warnings: tuple[Problem, ...]
    graph: Graph | None

    @property
    def ok(self) -> bool:
        """Return whether the flow has no errors (warnings allowed)."""
        return not self.errors

    def to_json(self) -> dict[str, JsonValue]:
        """Return `ok`, `errors` and `warnings` as JSON."""
        return {
            "ok": self.ok,
            "errors": [problem.to_json() for problem in self.errors],
            "warnings": [problem.to_json() for problem in self.warnings],
        }


def validate(document: object, actions: Mapping[str, frozenset[str]] | None = None) -> Report:
    """Return every problem of a document; `actions` maps action names to their outcomes."""
    oversized = _size_problems(document)
    if oversized:
        return Report(errors=oversized, warnings=(), graph=None)
    decoded = decode_document(document)
    if not isinstance(document, dict):
        return Report(errors=tuple(map(_from_issue, decoded.issues)), warnings=(), graph=None)
    flow = _Flow(decoded, _catalog(actions), isinstance(document.get("nodes"), list))
    problems = [_from_issue(issue) for issue in decoded.issues]
    problems += _local_problems(flow)
    problems += _Traversal(flow).problems()
    problems += _input_schema_problems(decoded.graph)
    errors = tuple(p for p in problems if p.severity is Severity.ERROR)
    warnings = tuple(p for p in problems if p.severity is Severity.WARNING)
    return Report(errors=errors, warnings=warnings, graph=None if decoded.issues else decoded.graph)


def _input_schema_problems(graph: Graph) -> list[Problem]:
    """Report an `input` that is not a usable JSON Schema (of the supported subset)."""
    if graph.input is None:
        return []
    return [
        _problem(ProblemCode.INPUT_SCHEMA_INVALID, f"`{where}`: {message}", field=where)
        for where, message in schema_problems(graph.input)
    ]


def _catalog(actions: Mapping[str, frozenset[str]] | None) -> Mapping[str, frozenset[str]]:
    """Return the action catalog, each action declaring at least `next`."""
    chosen = BUILTIN_ACTIONS if actions is None else actions
    return {name: frozenset(outcomes) | {"next"} for name, outcomes in chosen.items()}


def _size_problems(document: object) -> tuple[Problem, ...]:
    """Refuse documents above the node and edge limits before doing any real work."""
    if not isinstance(document, dict):
        return ()
    counts = {key: document.get(key) for key in ("nodes", "edges")}
    nodes = len(counts["nodes"]) if isinstance(counts["nodes"], list) else 0
    edges = len(counts["edges"]) if isinstance(counts["edges"], list) else 0
    if nodes <= MAX_NODES and edges <= MAX_EDGES:
        return ()
    message = (
        f"The flow has {nodes} nodes and {edges} edges; the limits are {MAX_NODES} nodes and "
        f"{MAX_EDGES} edges. Split it into subflows."
    )
    return (_problem(ProblemCode.GRAPH_TOO_LARGE, message),)


def _severity(code: ProblemCode) -> Severity:
    """Return the fixed severity of a code."""
    return Severity.WARNING if code in WARNING_CODES else Severity.ERROR


@dataclass(frozen=True, slots=True)
class _Link:
    """A decoded edge and its index in the document's `edges` list."""

    index: int
    edge: Edge

    @property
    def ref(self) -> str:
        """Return how problems name the edge."""
        return self.edge.reference()

    @property
    def shown(self) -> str:
        """Return the edge as messages show it: reference and index (parallel edges look alike)."""
        return f"`{self.ref}` (edges[{self.index}])"


def _problem(
    code: ProblemCode,
    message: str,
    *,
    node: str | None = None,
    link: _Link | None = None,
    field: str | None = None,
    position: Position | None = None,
) -> Problem:
    """Build a problem with the severity its code implies."""
    return Problem(
        code=code,
        message=message,
        node=node,
        edge=None if link is None else link.ref,
        edge_index=None if link is None else link.index,
        field=field,
        position=position,
        severity=_severity(code),
    )


def _from_issue(issue: FormatIssue) -> Problem:
    """Return a decoding issue as a problem."""
    return Problem(
        code=ProblemCode(issue.code.value),
        message=issue.message,
        node=issue.node,
        edge=issue.edge,
        edge_index=issue.edge_index,
        field=issue.field,
    )


class _Flow:
    """The decoded document indexed for the checks; undecodable nodes keep their id and type."""

    def __init__(
        self, decoded: DecodedDocument, actions: Mapping[str, frozenset[str]], has_nodes: bool
    ) -> None:
        graph = decoded.graph
        self.graph = graph
        self.types = decoded.node_types
        self.nodes = graph.nodes_by_id
        self.actions = actions
        self.declared_state = decoded.declared_state
        self.variables = decoded.node_variables
        self.links = [_Link(i, e) for i, e in zip(decoded.edge_indices, graph.edges, strict=True)]
        self.known = [
            link
            for link in self.links
            if link.edge.source in self.types and link.edge.target in self.types
        ]
        self.out: dict[str, list[_Link]] = defaultdict(list)
        for link in self.known:
            self.out[link.edge.source].append(link)
        self.damaged = [
            (d.source, d.target)
            for d in decoded.damaged_edges
            if d.source in self.types and d.target in self.types
        ]
        self.starts = [n for n, t in self.types.items() if t is NodeType.START]
        self.has_nodes = has_nodes
        self.leaving: dict[str, list[_Link]] = defaultdict(list)
        for link in self.links:
            self.leaving[link.edge.source].append(link)
        # A damaged edge may be the very edge a "missing" check looks for: do not cascade.
        self.damaged_sources = {source for source, _ in self.damaged}
        self.damaged_targets = {target for _, target in self.damaged}
        self.fed_slots: dict[str, set[str | None]] = defaultdict(set)
        for link in self.links:
            self.fed_slots[link.edge.target].add(link.edge.slot)

    def describe(self, node_id: str) -> str:
        """Return `id` (type) for messages."""
        node_type = self.types.get(node_id)
        return f"`{node_id}` ({node_type})" if node_type else f"`{node_id}`"

    def outcomes(self, node_id: str) -> frozenset[str] | None:
        """Return the outcomes a node can produce, or None when its config is unknown."""
        node = self.nodes.get(node_id)
        if isinstance(node, TaskNode) and node.action not in self.actions:
            return None
        if node is not None:
            return node.outcomes(self.actions)
        node_type = self.types.get(node_id)
        return None if node_type is None else STATIC_OUTCOMES.get(node_type)


# ---------------------------------------------------------------------------------------------
# Local checks: each edge, each node's references, state, actions and expressions' syntax


def _local_problems(flow: _Flow) -> list[Problem]:
    """Return the problems that need no traversal of the graph."""
    problems = _start_problems(flow)
    for link in flow.links:
        problems += _endpoint_problems(flow, link)
    for link in flow.links:
        if link.edge.source in flow.types:
            problems += _source_problems(flow, link)
        if link.edge.target in flow.types:
            problems += _slot_problems(flow, link)
    for node_id in flow.types:
        problems += _successor_problems(flow, node_id)
    for node in flow.graph.nodes:
        problems += _node_problems(flow, node)
    return problems


def _start_problems(flow: _Flow) -> list[Problem]:
    """Report a flow without exactly one start node."""
    code = ProblemCode.GRAPH_START_COUNT
    if not flow.starts and flow.has_nodes:
        return [_problem(code, "The flow has no start node; add one node of type `start`.")]
    if len(flow.starts) <= 1:
        return []
    listed = ", ".join(f"`{s}`" for s in flow.starts)
    message = f"The flow has {len(flow.starts)} start nodes ({listed}); keep exactly one."
    return [_problem(code, message, node=start) for start in flow.starts]


def _endpoint_problems(flow: _Flow, link: _Link) -> list[Problem]:
    """Report edges from or to node ids that do not exist."""
    problems = []
    for end, code in (
        (link.edge.source, ProblemCode.EDGE_UNKNOWN_SOURCE),
        (link.edge.target, ProblemCode.EDGE_UNKNOWN_TARGET),
    ):
        if end not in flow.types:
            message = f"Edge {link.shown} refers to node `{end}`, which does not exist."
            problems.append(_problem(code, message, link=link))
    return problems


def _source_problems(flow: _Flow, link: _Link) -> list[Problem]:
    """Report a branch or outcome the edge's source cannot produce."""
    edge, source = link.edge, link.edge.source
    source_type = flow.types[source]
    if source_type is None:
        return []
    if edge.branch is not None:
        return _branch_edge_problems(flow, link, source_type)
    allowed = flow.outcomes(source)
    if allowed is None or edge.follows in allowed:
        return []
    if source_type in BRANCHING_TYPES and not allowed - {"next"}:
        hint = "a fork leaves only by edges that name a `branch`"
    elif not allowed:
        hint = f"nothing follows a `{source_type}` node; remove the edge"
    else:
        hint = "use one of " + ", ".join(f"`{o}`" for o in sorted(allowed))
    message = (
        f"Edge {link.shown} follows outcome `{edge.follows}`, which {flow.describe(source)} "
        f"cannot produce: {hint}."
    )
    return [_problem(ProblemCode.EDGE_OUTCOME_INVALID, message, node=source, link=link)]


def _branch_edge_problems(flow: _Flow, link: _Link, source_type: NodeType) -> list[Problem]:
    """Report a branch edge from a node that has no such branch."""
    source, branch = link.edge.source, link.edge.branch
    if source_type not in BRANCHING_TYPES:
        message = (
            f"Edge {link.shown} names branch `{branch}`, but only fork and race nodes have "
            f"branches; {flow.describe(source)} continues by `outcome`."
        )
        return [_problem(ProblemCode.EDGE_BRANCH_NOT_ALLOWED, message, node=source, link=link)]
    node = flow.nodes.get(source)
    if node is None or branch in node.branches:
        return []
    declared = ", ".join(f"`{b}`" for b in node.branches)
    message = (
        f"Edge {link.shown} names branch `{branch}`, which `{source}` does not declare "
        f"({declared})."
    )
    return [_problem(ProblemCode.BRANCH_UNDECLARED, message, node=source, link=link)]


def _slot_problems(flow: _Flow, link: _Link) -> list[Problem]:
    """Report a slot on a non-gather target, or a gather edge without a declared slot."""
    edge, target = link.edge, link.edge.target
    target_type = flow.types[target]
    if target_type is None:
        return []
    if target_type is not NodeType.GATHER:
        if edge.slot is None:
            return []
        message = (
            f"Edge {link.shown} names slot `{edge.slot}`, but its target "
            f"{flow.describe(target)} is not a gather; remove `slot`."
        )
        return [_problem(ProblemCode.EDGE_SLOT_NOT_ALLOWED, message, node=target, link=link)]
    gather = flow.nodes.get(target)
    slots = gather.slots if isinstance(gather, GatherNode) else None
    if edge.slot is None:
        named = "" if slots is None else " (" + ", ".join(f"`{s}`" for s in slots) + ")"
        message = (
            f"Edge {link.shown} enters gather `{target}` without a `slot`; name one of its "
            f"slots{named}."
        )
        return [_problem(ProblemCode.GATHER_SLOT_MISSING, message, node=target, link=link)]
    if slots is None or edge.slot in slots:
        return []
    declared = ", ".join(f"`{s}`" for s in slots)
    message = (
        f"Edge {link.shown} fills slot `{edge.slot}`, which gather `{target}` does not "
        f"declare ({declared})."
    )
    return [_problem(ProblemCode.GATHER_SLOT_UNDECLARED, message, node=target, link=link)]


def _successor_problems(flow: _Flow, node_id: str) -> list[Problem]:
    """Report two edges for one outcome or branch, and declared branches without an edge."""
    problems: list[Problem] = []
    seen: set[tuple[bool, str]] = set()
    for link in flow.leaving.get(node_id, ()):
        key = _successor_key(link.edge)
        if key in seen:
            problems.append(_second_successor(node_id, link))
        seen.add(key)
    node = flow.nodes.get(node_id)
    declared = () if node is None or node_id in flow.damaged_sources else node.branches
    for branch in declared:
        if (True, branch) not in seen:
            message = (
                f"Branch `{branch}` of {flow.describe(node_id)} has no edge; add an edge with "
                f"`branch: {branch}`."
            )
            problems.append(
                _problem(ProblemCode.BRANCH_MISSING, message, node=node_id, field="branches")
            )
    return problems


def _successor_key(edge: Edge) -> tuple[bool, str]:
    """Return what an edge continues: (True, branch) or (False, outcome)."""
    return (True, edge.branch) if edge.branch is not None else (False, edge.follows or "")


def _second_successor(node_id: str, link: _Link) -> Problem:
    """Report an edge for a branch or outcome that already has one."""
    edge = link.edge
    if edge.branch is not None:
        message = (
            f"Branch `{edge.branch}` of `{node_id}` has a second edge {link.shown}; a branch has "
            f"exactly one edge."
        )
        return _problem(ProblemCode.BRANCH_DUPLICATE, message, node=node_id, link=link)
    message = (
        f"Outcome `{edge.follows}` of `{node_id}` already has an edge; {link.shown} would be a "
        f"second successor. Use a fork to run both, or remove one."
    )
    return _problem(ProblemCode.EDGE_DUPLICATE_SUCCESSOR, message, node=node_id, link=link)


def _node_problems(flow: _Flow, node: Node) -> list[Problem]:
    """Return one decoded node's reference problems."""
    problems = _state_write_problems(flow, node)
    if isinstance(node, TaskNode) and node.action not in flow.actions:
        known = ", ".join(f"`{a}`" for a in sorted(flow.actions))
        message = (
            f"Task `{node.id}` runs action `{node.action}`, which is not registered; use one "
            f"of {known}."
        )
        problems.append(
            _problem(ProblemCode.TASK_ACTION_UNKNOWN, message, node=node.id, field="action")
        )
    if isinstance(node, TaskNode) and node.action == HTTP_REQUEST and HTTP_REQUEST in flow.actions:
        problems += _http_request_problems(node)
    if isinstance(node, GatherNode):
        problems += _unfed_slot_problems(flow, node)
    if isinstance(node, (ForeachNode, LoopNode)):
        problems += _body_missing_problems(flow, node)
        problems += _ceiling_problems(node)
    return problems


def _http_request_problems(node: TaskNode) -> list[Problem]:
    """Report a literal method or header field that `http.request` would refuse to send.

    A param computed by CEL (`${...}`) is checked when the action runs instead.
    """
    params = node.params or {}
    problems = []
    if "method" in params and not _computed(params["method"]):
        reason = method_problem(params["method"])
        if reason is not None:
            message = f"Task `{node.id}`: {reason}."
            code = ProblemCode.TASK_HTTP_METHOD_INVALID
            problems.append(_problem(code, message, node=node.id, field="params.method"))
    headers = params.get("headers")
    for name, value in headers.items() if isinstance(headers, dict) else ():
        reason = header_problem(name, value, check_value=not _computed(value))
        if reason is not None:
            message = f"Task `{node.id}`: {reason}."
            field = f"params.headers.{name}"
            code = ProblemCode.TASK_HTTP_HEADER_INVALID
            problems.append(_problem(code, message, node=node.id, field=field))
    return problems


def _computed(value: JsonValue) -> bool:
    """Return whether a param is computed when the task runs (it holds a `${...}` part)."""
    return isinstance(value, str) and "${" in value


def _ceiling_problems(node: ForeachNode | LoopNode) -> list[Problem]:
    """Report a loop's max_iterations, or a literal foreach list, over the global ceiling."""
    limits = expression_limits.limits()
    if isinstance(node, LoopNode):
        if node.max_iterations <= limits.max_loop_iterations:
            return []
        message = (
            f"Loop `{node.id}` allows {node.max_iterations:,} iterations; no loop may run more "
            f"than {limits.max_loop_iterations:,} (BRAID_LOOP_MAX_ITERATIONS)."
        )
        code, field = ProblemCode.LOOP_MAX_ITERATIONS_OVER_LIMIT, "max_iterations"
    else:
        items = _literal_list_length(node.items)
        if items is None or items <= limits.max_foreach_items:
            return []
        message = (
            f"Foreach `{node.id}` lists {items:,} items; a foreach takes at most "
            f"{limits.max_foreach_items:,} (BRAID_FOREACH_MAX_ITEMS)."
        )
        code, field = ProblemCode.FOREACH_ITEMS_OVER_LIMIT, "items"
    return [_problem(code, message, node=node.id, field=field)]


def _literal_list_length(source: str) -> int | None:
    """Return the length of a CEL list literal written as plain JSON, else None."""
    text = source.strip()
    if not (text.startswith("[") and text.endswith("]")):
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return len(value) if isinstance(value, list) else None


def _state_write_problems(flow: _Flow, node: Node) -> list[Problem]:
    """Report writes to undeclared fields, and a foreach `errors` field that is not `append`."""
    problems = []
    for write in node.state_writes():
        if flow.declared_state is not None and write.state_field not in flow.declared_state:
            message = (
                f"{flow.describe(node.id)} writes state field `{write.state_field}` (in "
                f"`{write.field}`), which `state` does not declare; declare it with a reducer."
            )
            problems.append(
                _problem(
                    ProblemCode.STATE_WRITE_UNDECLARED, message, node=node.id, field=write.field
                )
            )
    if isinstance(node, ForeachNode) and node.errors is not None:
        declared = flow.graph.state_fields.get(node.errors)
        if declared is not None and declared.reducer is not Reducer.APPEND:
            message = (
                f"Foreach `{node.id}` records failures in `{node.errors}`, whose reducer is "
                f"`{declared.reducer}`; it must be `append`."
            )
            problems.append(
                _problem(
                    ProblemCode.FOREACH_ERRORS_NOT_APPEND, message, node=node.id, field="errors"
                )
            )
    return problems


def _unfed_slot_problems(flow: _Flow, gather: GatherNode) -> list[Problem]:
    """Report declared slots that no edge fills."""
    if gather.id in flow.damaged_targets:
        return []
    fed = flow.fed_slots.get(gather.id, set())
    return [
        _problem(
            ProblemCode.GATHER_SLOT_UNFED,
            f"Slot `{slot}` of gather `{gather.id}` has no incoming edge, so the gather can never "
            f"fire; add an edge with `slot: {slot}` or remove the slot.",
            node=gather.id,
            field="slots",
        )
        for slot in gather.slots
        if slot not in fed
    ]


def _body_missing_problems(flow: _Flow, node: ForeachNode | LoopNode) -> list[Problem]:
    """Report a foreach without an `item` edge or a loop without a `body` edge."""
    outcome = BODY_OUTCOMES[node.type]
    leaving = flow.leaving.get(node.id, ())
    if node.id in flow.damaged_sources or any(link.edge.follows == outcome for link in leaving):
        return []
    message = (
        f"{node.type.capitalize()} `{node.id}` has no `{outcome}` edge; add one into its body."
    )
    return [_problem(ProblemCode.BODY_MISSING, message, node=node.id)]


# ---------------------------------------------------------------------------------------------
# Traversal from start: reachability, bodies (scopes), cycles, expressions, warnings


@dataclass(frozen=True, slots=True)
class _Frame:
    """One body boundary: a foreach/loop body, or one branch of a race."""

    owner: str
    branch: str | None = None


type _Scope = tuple[_Frame, ...]


class _Traversal:
    """Follows the flow from its start node and runs every check that needs the paths."""

    def __init__(self, flow: _Flow) -> None:
        self.flow = flow
        self.scopes: dict[str, _Scope] = {}
        self.back_edges: set[int] = set()
        self.escapes: set[int] = set()
        self.entered: dict[_Frame, _Link] = {}
        self.returned: set[_Frame] = set()
        self.found: list[Problem] = []

    def problems(self) -> list[Problem]:
        """Return the problems of the flow's paths, expressions and joins."""
        flow = self.flow
        if flow.starts:
            reached = _reachable(flow)
            self.found += _reachability_problems(flow, reached)
            self._assign_scopes()
            self.found += self._no_return_problems()
            returns = self.back_edges | self.escapes
            joins = _JoinAnalysis(flow, self.scopes, returns)
            if not joins.acyclic:
                self.found += _cycle_problems(flow, self.scopes, returns)
        for node in flow.graph.nodes:
            self.found += _expression_problems(flow, node, self._variables(node.id))
        if flow.starts:
            self.found += joins.warnings()
        return self.found

    def _variables(self, node_id: str) -> frozenset[str] | None:
        """Return the variables in scope at a node, or None when it was not reached."""
        scope = self.scopes.get(node_id)
        if scope is None:
            return None
        names = {"state", "input"}
        for frame in scope:
            # From the document, not the decoded node: an owner whose config has an error
            # (say a `collect` without `errors`) still names its variable for its body.
            variable = self.flow.variables.get(frame.owner) if frame.branch is None else None
            if variable is None:
                continue
            if frame.owner not in self.flow.nodes and (
                not variable.isidentifier() or variable in RESERVED_VARIABLES
            ):
                return None  # the owner's `as` is itself wrong: the body's names are unknown
            names.add(variable)
        return frozenset(names)

    def _assign_scopes(self) -> None:
        """Give each reached node its scope, enclosing scopes before the bodies inside them."""
        level: deque[str] = deque()
        deferred: deque[tuple[_Link, _Scope]] = deque()
        for start in self.flow.starts:
            self._claim(start, (), None, level)
        while level or deferred:
            if not level:
                link, scope = deferred.popleft()
                self._claim(link.edge.target, scope, link, level)
                continue
            node_id = level.popleft()
            for link in self.flow.out.get(node_id, ()):
                self._step(self.scopes[node_id], link, level, deferred)

    def _step(
        self, scope: _Scope, link: _Link, level: deque[str], deferred: deque[tuple[_Link, _Scope]]
    ) -> None:
        """Follow one edge: a back-edge ends a body, a body entry opens one, others stay."""
        if scope and scope[-1].owner == link.edge.target:
            self.back_edges.add(link.index)
            self.returned.add(scope[-1])
            return
        frame = self._entered_frame(link)
        if frame is None:
            self._claim(link.edge.target, scope, link, level)
            return
        self.entered.setdefault(frame, link)
        deferred.append((link, (*scope, frame)))

    def _entered_frame(self, link: _Link) -> _Frame | None:
        """Return the body an edge enters, if it is a foreach/loop body or a race branch edge."""
        edge = link.edge
        source_type = self.flow.types[edge.source]
        if source_type is NodeType.RACE and edge.branch is not None:
            return _Frame(edge.source, edge.branch)
        if _is_body_entry(source_type, edge):
            return _Frame(edge.source)
        return None

    def _claim(self, node_id: str, scope: _Scope, link: _Link | None, level: deque[str]) -> None:
        """Put a node in a scope, or report the edge that would put it in a second one."""
        known = self.scopes.get(node_id)
        if known is None:
            self.scopes[node_id] = scope
            level.append(node_id)
            if scope and self.flow.types[node_id] is NodeType.END:
                self.found.append(self._end_in_body(node_id, scope, link))
        elif known != scope and link is not None:
            self.escapes.add(link.index)
            self.found.append(self._escape(node_id, scope, known, link))

    def _end_in_body(self, node_id: str, scope: _Scope, link: _Link | None) -> Problem:
        """Report an end node inside a body: it would end the whole run from one item."""
        message = (
            f"End `{node_id}` is inside {self._scope_name(scope)}; an end there would end the "
            f"whole run. Return to `{scope[-1].owner}` instead, or use a `fail` node to fail "
            f"the item."
        )
        return _problem(ProblemCode.BODY_ESCAPE, message, node=node_id, link=link)

    def _escape(self, node_id: str, scope: _Scope, known: _Scope, link: _Link) -> Problem:
        """Report an edge that crosses a body boundary other than by the back-edge."""
        message = (
            f"Edge {link.shown} leads from {self._scope_name(scope)} to `{node_id}`, which "
            f"belongs to {self._scope_name(known)}. A body is left only by an edge back to its own "
            f"foreach/loop/race (or ends in a `fail`)."
        )
        return _problem(ProblemCode.BODY_ESCAPE, message, node=node_id, link=link)

    def _scope_name(self, scope: _Scope) -> str:
        """Return a scope's description for messages."""
        if not scope:
            return "the top level of the flow"
        frame = scope[-1]
        if frame.branch is not None:
            return f"branch `{frame.branch}` of race `{frame.owner}`"
        return f"the body of {self.flow.types[frame.owner]} `{frame.owner}`"

    def _no_return_problems(self) -> list[Problem]:
        """Report bodies and race branches that never return to their owner."""
        return [
            _problem(
                ProblemCode.BODY_NO_RETURN,
                f"{self._scope_name((frame,)).capitalize()} never returns to `{frame.owner}`; end "
                f"the body with an edge whose target is `{frame.owner}`.",
                node=frame.owner,
                link=link,
            )
            for frame, link in self.entered.items()
            if frame not in self.returned
            and link.index not in self.escapes
            # A damaged edge into the owner may be the very back-edge: do not cascade.
            and frame.owner not in self.flow.damaged_targets
        ]


def _is_body_entry(source_type: NodeType | None, edge: Edge) -> bool:
    """Return whether an edge is a foreach `item` or loop `body` edge."""
    if source_type is None or source_type not in BODY_OUTCOMES:
        return False
    return edge.follows == BODY_OUTCOMES[source_type]


def _reachable(flow: _Flow) -> set[str]:
    """Return the nodes reachable from the start nodes (damaged edges included)."""
    successors: dict[str, list[str]] = defaultdict(list)
    for link in flow.known:
        successors[link.edge.source].append(link.edge.target)
    for source, target in flow.damaged:
        successors[source].append(target)
    seen = set(flow.starts)
    queue = deque(flow.starts)
    while queue:
        for target in successors.get(queue.popleft(), ()):
            if target not in seen:
                seen.add(target)
                queue.append(target)
    return seen


def _reachability_problems(flow: _Flow, reached: set[str]) -> list[Problem]:
    """Report nodes start cannot reach, and a flow whose start reaches no end."""
    problems = [
        _problem(
            ProblemCode.NODE_UNREACHABLE,
            f"{flow.describe(node_id)} cannot be reached from the start; connect it or remove it.",
            node=node_id,
        )
        for node_id in flow.types
        if node_id not in reached
    ]
    if not any(flow.types[n] is NodeType.END for n in reached):
        message = "No end node is reachable from the start; add an `end` node and connect it."
        problems.append(_problem(ProblemCode.GRAPH_NO_REACHABLE_END, message))
    return problems


def _cycle_problems(
    flow: _Flow, scopes: Mapping[str, _Scope], back_edges: set[int]
) -> list[Problem]:
    """Report each cycle among reached nodes that does not return through a back-edge.

    `back_edges` also holds the edges already reported as body escapes, so that one wrong edge
    is not reported twice.
    """
    forward: dict[str, list[_Link]] = {
        node_id: [
            link
            for link in flow.out.get(node_id, ())
            if link.index not in back_edges and link.edge.target in scopes
        ]
        for node_id in scopes
    }
    problems = []
    for component in _strong_components(list(scopes), forward):
        members = set(component)
        path = _cycle_path(component[0], members, forward)
        if path:
            shown = " → ".join([path[0].edge.source, *(link.edge.target for link in path)])
            message = (
                f"The path {shown} is a cycle that does not return through a foreach, loop or race "
                f"back-edge; use a loop node to repeat steps."
            )
            problems.append(
                _problem(ProblemCode.GRAPH_CYCLE, message, node=component[0], link=path[0])
            )
    return problems


def _strong_components(nodes: list[str], forward: Mapping[str, list[_Link]]) -> list[list[str]]:
    """Return the strongly connected components (Tarjan, iterative), members in node order."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []
    for root in nodes:
        if root not in index:
            _tarjan_from(root, forward, index, low, stack, on_stack, components)
    order = {node_id: i for i, node_id in enumerate(nodes)}
    return sorted((sorted(c, key=order.__getitem__) for c in components), key=lambda c: order[c[0]])


def _tarjan_from(
    root: str,
    forward: Mapping[str, list[_Link]],
    index: dict[str, int],
    low: dict[str, int],
    stack: list[str],
    on_stack: set[str],
    components: list[list[str]],
) -> None:
    """Run Tarjan's algorithm from one root without recursion."""
    work: list[tuple[str, Iterator[_Link]]] = [(root, iter(forward[root]))]
    index[root] = low[root] = len(index)
    stack.append(root)
    on_stack.add(root)
    while work:
        node_id, links = work[-1]
        link = next(links, None)
        if link is not None:
            target = link.edge.target
            if target not in index:
                index[target] = low[target] = len(index)
                stack.append(target)
                on_stack.add(target)
                work.append((target, iter(forward[target])))
            elif target in on_stack:
                low[node_id] = min(low[node_id], index[target])
            continue
        work.pop()
        if work:
            low[work[-1][0]] = min(low[work[-1][0]], low[node_id])
        if low[node_id] == index[node_id]:
            components.append(_pop_component(node_id, stack, on_stack))


def _pop_component(root: str, stack: list[str], on_stack: set[str]) -> list[str]:
    """Pop one finished component off Tarjan's stack."""
    component = []
    while True:
        member = stack.pop()
        on_stack.discard(member)
        component.append(member)
        if member == root:
            return component


def _cycle_path(first: str, members: set[str], forward: Mapping[str, list[_Link]]) -> list[_Link]:
    """Return the edges of a shortest cycle through `first` inside one component, or []."""
    came_by: dict[str, _Link] = {}
    queue = deque([first])
    while queue:
        node_id = queue.popleft()
        for link in forward[node_id]:
            target = link.edge.target
            if target == first:
                return _walk_back(came_by, first, link)
            if target in members and target not in came_by:
                came_by[target] = link
                queue.append(target)
    return []


def _walk_back(came_by: Mapping[str, _Link], first: str, last: _Link) -> list[_Link]:
    """Return the path from `first` that ends with `last`."""
    path = [last]
    while path[-1].edge.source != first:
        path.append(came_by[path[-1].edge.source])
    return path[::-1]


def _expression_problems(
    flow: _Flow, node: Node, variables: frozenset[str] | None
) -> list[Problem]:
    """Compile each expression of a node; report syntax, undeclared state and unknown names."""
    problems = []
    for site in node.expressions():
        try:
            compiled = _compile_site(site, node.id)
        except ExpressionSyntaxError as error:
            over = isinstance(error, ExpressionLimitError)
            advice = "" if over else "; fix the CEL expression"
            message = f"{flow.describe(node.id)} `{site.field}`: {error.message}{advice}."
            problems.append(
                _problem(
                    ProblemCode.EXPRESSION_LIMIT if over else ProblemCode.EXPRESSION_SYNTAX,
                    message,
                    node=node.id,
                    field=site.field,
                    position=error.position,
                )
            )
            continue
        problems += _state_read_problems(flow, node.id, site, compiled.state_reads)
        if variables is not None:
            problems += _variable_problems(node.id, site, compiled.free_variables, variables)
    return problems


def _compile_site(site: ExpressionSite, node_id: str) -> CelExpression | Template:
    """Compile an expression site by its kind."""
    if site.kind is ExpressionKind.TEMPLATE:
        return compile_template(site.source, node=node_id, field=site.field)
    return compile_cel(site.source, node=node_id, field=site.field)


def _state_read_problems(
    flow: _Flow, node_id: str, site: ExpressionSite, reads: Iterable[NameUse]
) -> list[Problem]:
    """Report `state.<field>` reads of undeclared fields."""
    return [
        _problem(
            ProblemCode.STATE_READ_UNDECLARED,
            f"`{node_id}` `{site.field}` reads `state.{read.name}`, which `state` does not "
            f"declare; declare it or fix the name.",
            node=node_id,
            field=site.field,
            position=position_at(site.source, read.offset),
        )
        for read in reads
        if flow.declared_state is not None and read.name not in flow.declared_state
    ]


def _variable_problems(
    node_id: str, site: ExpressionSite, uses: Iterable[NameUse], allowed: frozenset[str]
) -> list[Problem]:
    """Report names that are neither `state`, `input` nor an enclosing foreach/loop variable."""
    known = ", ".join(f"`{name}`" for name in sorted(allowed))
    return [
        _problem(
            ProblemCode.EXPRESSION_UNKNOWN_VARIABLE,
            f"`{node_id}` `{site.field}` uses `{use.name}`, which is not defined here; "
            f"expressions here can use {known}.",
            node=node_id,
            field=site.field,
            position=position_at(site.source, use.offset),
        )
        for use in uses
        if use.name not in allowed
    ]


# ---------------------------------------------------------------------------------------------
# Join warnings: which decisions must have been taken, and how many tokens can pass


_NOT_DECISIONS: Final = frozenset({NodeType.FOREACH, NodeType.LOOP})
_CAP: Final = 2  # token counts are only told apart as 0, 1 and "two or more"
_EXACT_PAIR_BUDGET: Final = 64


class _JoinAnalysis:
    """Dominators over the nodes and edges of the flow's DAG, and token counts, for the warnings.

    Elements are node ids and edges: an edge is an element between its source and its target,
    so "this outcome of that decision was taken" is an ancestor in the dominator tree.
    """

    def __init__(self, flow: _Flow, scopes: Mapping[str, _Scope], back_edges: set[int]) -> None:
        self.flow = flow
        self.back_edges = back_edges
        self.node_ids = list(scopes)
        self.node_index = {node_id: i for i, node_id in enumerate(self.node_ids)}
        self.links = [
            link
            for link in flow.known
            if link.index not in back_edges
            and link.edge.source in scopes
            and link.edge.target in scopes
        ]
        self.first_link = len(self.node_ids)
        size = self.first_link + len(self.links) + 1
        self.root = size - 1
        self.parent = [self.root] * size
        self.depth = [0] * size
        self.count = [0] * size
        self.preorder = [0] * size
        self.incoming: list[list[int]] = [[] for _ in range(size)]
        for position, link in enumerate(self.links):
            self.incoming[self.node_index[link.edge.target]].append(self.first_link + position)
        self.order = self._topological()
        # Kahn's order misses a reached node exactly when the forward edges have a cycle.
        self.acyclic = sum(1 for e in self.order if e < self.first_link) == len(self.node_ids)

    def link_of(self, element: int) -> _Link:
        """Return the link of an edge element."""
        return self.links[element - self.first_link]

    def is_edge(self, element: int) -> bool:
        """Return whether an element is an edge (not a node, not the root)."""
        return self.first_link <= element < self.root

    def warnings(self) -> list[Problem]:
        """Return the three join warnings."""
        for element in self.order:
            self._dominate(element)
        self._number_preorder()
        for element in self.order:
            self.count[element] = self._tokens(element)
        problems = []
        processed = set(self.order)
        for node_id, element in self.node_index.items():
            gather = self.flow.nodes.get(node_id)
            if isinstance(gather, GatherNode) and element in processed:
                problems += self._gather_warnings(gather, self.incoming[element])
        return problems + self._dangling_branch_warnings()

    def _topological(self) -> list[int]:
        """Return the elements reachable from start in topological order (Kahn's algorithm)."""
        successors: list[list[int]] = [[] for _ in self.parent]
        pending = [len(inputs) for inputs in self.incoming]
        for position, link in enumerate(self.links):
            element = self.first_link + position
            successors[self.node_index[link.edge.source]].append(element)
            successors[element].append(self.node_index[link.edge.target])
            pending[element] = 1
        starts = [self.node_index[start] for start in self.flow.starts if start in self.node_index]
        ready = deque(start for start in starts if pending[start] == 0)
        order = []
        while ready:
            element = ready.popleft()
            order.append(element)
            for successor in successors[element]:
                pending[successor] -= 1
                if pending[successor] == 0:
                    ready.append(successor)
        return order

    def _dominate(self, element: int) -> None:
        """Set an element's immediate dominator: an edge's source, else the meet of the inputs."""
        inputs = self.incoming[element]
        if self.is_edge(element):
            parent = self.node_index[self.link_of(element).edge.source]
        elif inputs:
            parent = self._meet_all(inputs)
        else:
            parent = self.root
        self.parent[element] = parent
        self.depth[element] = self.depth[parent] + 1

    def _meet_all(self, elements: list[int]) -> int:
        """Return the nearest common dominator of several elements."""
        meet = elements[0]
        for element in elements[1:]:
            meet = self._split(meet, element)[0]
        return meet

    def _split(self, first: int, second: int) -> tuple[int, int | None, int | None]:
        """Return the nearest common dominator of two elements and its children toward each."""
        depth, parent = self.depth, self.parent
        below_first = below_second = None
        while depth[first] > depth[second]:
            below_first, first = first, parent[first]
        while depth[second] > depth[first]:
            below_second, second = second, parent[second]
        while first != second:
            below_first, first = first, parent[first]
            below_second, second = second, parent[second]
        return first, below_first, below_second

    def _number_preorder(self) -> None:
        """Number the dominator tree in preorder, so each subtree is a contiguous range."""
        children: list[list[int]] = [[] for _ in self.parent]
        for element in self.order:
            children[self.parent[element]].append(element)
        stack, number = [self.root], 0
        while stack:
            element = stack.pop()
            self.preorder[element] = number
            number += 1
            stack.extend(reversed(children[element]))

    def _tokens(self, element: int) -> int:
        """Return how many tokens can pass an element in one activation (1, or 2 for "several")."""
        if self.is_edge(element):
            # Each foreach item and loop iteration is an activation of its own.
            link = self.link_of(element)
            if _is_body_entry(self.flow.types[link.edge.source], link.edge):
                return 1
            return self.count[self.parent[element]]
        inputs = self.incoming[element]
        if len(inputs) <= 1:
            return self.count[inputs[0]] if inputs else 1
        if self.flow.types[self.node_ids[element]] is NodeType.GATHER:
            return 1  # a gather fires at most once per activation
        if all(self.count[i] == 1 for i in inputs) and self._first_overlap(inputs) is None:
            return 1
        return _CAP

    def _exclusive(self, first: int, second: int) -> bool:
        """Return whether one activation's tokens can never reach both elements."""
        meet, toward_first, toward_second = self._split(first, second)
        if toward_first is None or toward_second is None or meet >= self.first_link:
            return False
        if self.count[meet] != 1 or self.flow.types[self.node_ids[meet]] in _NOT_DECISIONS:
            return False
        first_edge, second_edge = (
            self._outcome_edge(toward_first),
            self._outcome_edge(toward_second),
        )
        if first_edge is None or second_edge is None:
            return False
        return first_edge.follows != second_edge.follows

    def _outcome_edge(self, element: int) -> Edge | None:
        """Return an element's edge if it is an ordinary outcome edge (not a branch edge)."""
        if not self.is_edge(element):
            return None
        edge = self.link_of(element).edge
        return edge if edge.branch is None else None

    def _first_overlap(self, inputs: list[int]) -> tuple[int, int] | None:
        """Return two inputs that are not mutually exclusive, or None when every pair is.

        In dominator preorder, the meet of any two inputs is the meet of some adjacent pair, and
        every child subtree of a meet borders another at an adjacent pair: adjacent pairs decide.
        """
        ordered = sorted(inputs, key=self.preorder.__getitem__)
        for first, second in pairwise(ordered):
            if not self._exclusive(first, second):
                return first, second
        return None

    def _gather_warnings(self, gather: GatherNode, inputs: list[int]) -> list[Problem]:
        """Return the double-token and exclusive-slot warnings of one gather."""
        by_slot: dict[str, list[int]] = {slot: [] for slot in gather.slots}
        for element in inputs:
            slot = self.link_of(element).edge.slot
            if slot in by_slot:
                by_slot[slot].append(element)
        filled = [(slot, fed) for slot, fed in by_slot.items() if fed]
        found = [self._double(gather, slot, fed) for slot, fed in filled]
        meets = [self._meet_all(fed) for _, fed in filled]
        for i, j in sorted(self._maybe_exclusive(meets)):
            found.append(self._exclusive_slots(gather, filled[i], filled[j]))
        return [problem for problem in found if problem is not None]

    def _maybe_exclusive(self, meets: list[int]) -> set[tuple[int, int]]:
        """Return the pairs (i < j) of slots, given the meet of each slot's inputs, that
        `_exclusive_slots` must look at: every other pair is never exclusive.

        Trying every pair cost seconds on a gather of a thousand slots (31.7 s at 5,000).
        Two slots whose meets are not one below the other part where their meets do, and
        every input pair of theirs parts there too, along the same two children: such a
        pair can only be exclusive if that parting element is a decision and both children
        are outcome edges. So the pairs are found in the tree that the meets' paths to the
        root span (at most the dominator tree): the pairs one below the other, met while
        walking it, and the pairs under two outcome edges of one decision.
        """
        children: dict[int, list[int]] = defaultdict(list)
        at: dict[int, list[int]] = defaultdict(list)  # element -> the slots whose meet it is
        spanned = {self.root}
        for slot, meet in enumerate(meets):
            at[meet].append(slot)
            element = meet
            while element not in spanned:
                spanned.add(element)
                children[self.parent[element]].append(element)
                element = self.parent[element]
        pairs: set[tuple[int, int]] = set()
        # One below (or at) another: the slots met on the way down pair with those below.
        above: list[int] = []
        stack: list[tuple[int, int]] = [(self.root, 0)]
        while stack:
            element, kept = stack.pop()
            del above[kept:]
            for slot in at.get(element, ()):
                pairs.update((min(slot, other), max(slot, other)) for other in above)
                above.append(slot)
            stack.extend((child, len(above)) for child in children.get(element, ()))
        # Apart, under two outcome edges of one decision.
        for element, below in children.items():
            if len(below) < 2 or element >= self.first_link or self.count[element] != 1:
                continue
            if self.flow.types[self.node_ids[element]] in _NOT_DECISIONS:
                continue
            groups = [self._slots_under(child, children, at) for child in below
                      if self._outcome_edge(child) is not None]  # fmt: skip
            for g, group in enumerate(groups):
                for other in groups[g + 1 :]:
                    pairs.update((min(a, b), max(a, b)) for a in group for b in other)
        return pairs

    @staticmethod
    def _slots_under(
        element: int, children: Mapping[int, list[int]], at: Mapping[int, list[int]]
    ) -> list[int]:
        """Return the slots whose meet is the element or below it in the spanned tree."""
        found: list[int] = []
        stack = [element]
        while stack:
            current = stack.pop()
            found += at.get(current, ())
            stack.extend(children.get(current, ()))
        return found

    def _double(self, gather: GatherNode, slot: str, fed: list[int]) -> Problem | None:
        """Warn when a slot can receive two tokens in one activation."""
        crowded = next((e for e in fed if self.count[e] >= _CAP), None)
        if crowded is not None:
            link = self.link_of(crowded)
            reason = (
                f"edge {link.shown} can carry tokens of several concurrent branches, which meet "
                f"before it without a gather"
            )
        else:
            pair = self._first_overlap(fed)
            if pair is None:
                return None
            other, link = self.link_of(pair[0]), self.link_of(pair[1])
            reason = f"edges {other.shown} and {link.shown} can both be taken in one activation"
        message = (
            f"Slot `{slot}` of gather `{gather.id}` can receive two tokens in one activation: "
            f"{reason}. The second token fails the activation; give each concurrent path its own "
            f"slot."
        )
        return _problem(ProblemCode.GATHER_SLOT_DOUBLE, message, node=gather.id, link=link)

    def _exclusive_slots(
        self, gather: GatherNode, first: tuple[str, list[int]], second: tuple[str, list[int]]
    ) -> Problem | None:
        """Warn when two slots are fed only by mutually exclusive outcomes of one decision."""
        (slot, fed), (other, other_fed) = first, second
        if len(fed) * len(other_fed) <= _EXACT_PAIR_BUDGET:
            exclusive = all(self._exclusive(a, b) for a in fed for b in other_fed)
        else:
            # Too many pairs to try: the slots' own meets are a sound (if weaker) stand-in.
            exclusive = self._exclusive(self._meet_all(fed), self._meet_all(other_fed))
        if not exclusive:
            return None
        decision = self.node_ids[self._split(fed[0], other_fed[0])[0]]
        message = (
            f"Slots `{slot}` and `{other}` of gather `{gather.id}` can never both be filled: the "
            f"paths into them part at {self.flow.describe(decision)}, which takes only one "
            f"outcome, so the gather would wait forever. Feed alternatives into one slot, or fork "
            f"first."
        )
        return _problem(ProblemCode.GATHER_SLOT_EXCLUSIVE, message, node=gather.id, field="slots")

    def _dangling_branch_warnings(self) -> list[Problem]:
        """Warn about fork branches with no path to a gather, an end or a back-edge."""
        settled = self._settling_nodes()
        return [
            _problem(
                ProblemCode.FORK_BRANCH_DANGLING,
                f"Branch `{link.edge.branch}` of fork `{node_id}` reaches no gather and no end, so "
                f"its work is never joined; lead it into a gather slot or an end.",
                node=node_id,
                link=link,
            )
            for node_id in self.node_ids
            if self.flow.types[node_id] is NodeType.FORK
            for link in self.flow.out.get(node_id, ())
            if link.edge.branch is not None and link.edge.target not in settled
        ]

    def _settling_nodes(self) -> set[str]:
        """Return the nodes with a path to a gather, an end, or a back-edge."""
        settling = {NodeType.GATHER, NodeType.END}
        seeds = {n for n in self.node_ids if self.flow.types[n] in settling}
        seeds |= {link.edge.source for link in self.flow.known if link.index in self.back_edges}
        predecessors: dict[str, list[str]] = defaultdict(list)
        for link in self.links:
            predecessors[link.edge.target].append(link.edge.source)
        queue = deque(seeds)
        while queue:
            for source in predecessors.get(queue.popleft(), ()):
                if source not in seeds:
                    seeds.add(source)
                    queue.append(source)
        return seeds
