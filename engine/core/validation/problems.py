"""What validation reports: problem codes and severities, one `Problem`, the `Report`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from types import MappingProxyType
from typing import Final

from engine.core.expression_errors import (
    Position,
)
from engine.core.graph import (
    Edge,
    FormatIssue,
    Graph,
)
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


def severity_of(code: ProblemCode) -> Severity:
    """Return the fixed severity of a code."""
    return Severity.WARNING if code in WARNING_CODES else Severity.ERROR


@dataclass(frozen=True, slots=True)
class Link:
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


def make_problem(
    code: ProblemCode,
    message: str,
    *,
    node: str | None = None,
    link: Link | None = None,
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
        severity=severity_of(code),
    )


def from_issue(issue: FormatIssue) -> Problem:
    """Return a decoding issue as a problem."""
    return Problem(
        code=ProblemCode(issue.code.value),
        message=issue.message,
        node=issue.node,
        edge=issue.edge,
        edge_index=issue.edge_index,
        field=issue.field,
    )
