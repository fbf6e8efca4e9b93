"""Decoding a document's `nodes` list: one decoder per node type, and the ids and types seen."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Final

from engine.core.graph.nodes import (
    BODY_OUTCOMES,
    ApprovalNode,
    ApprovalPolicy,
    Assignment,
    EndNode,
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
    SubflowNode,
    SwitchCase,
    SwitchNode,
    TaskNode,
    WaitNode,
)
from engine.core.graph.reading import ABSENT, FormatIssue, Reader, Where
from engine.core.graph.vocabulary import (
    ID_RESERVED_CHARACTERS,
    NODE_TYPES,
    SLUG,
    ConflictPolicy,
    FormatCode,
    ItemFailure,
    NodeType,
    PolicyKind,
)


@dataclass(frozen=True, slots=True)
class Head:
    """A node's id and label, read before its type-specific fields."""

    id: str
    label: str | None


def _decode_start(r: Reader, head: Head) -> StartNode | None:
    """Decode a start node."""
    return StartNode(id=head.id, label=head.label) if r.finish() else None


def _decode_end(r: Reader, head: Head) -> EndNode | None:
    """Decode an end node."""
    return EndNode(id=head.id, label=head.label) if r.finish() else None


def _decode_retry(r: Reader) -> Retry | None:
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


def _decode_task(r: Reader, head: Head) -> TaskNode | None:
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


def _decode_set(r: Reader, head: Head) -> SetNode | None:
    """Decode a set node."""
    pairs = r.string_pairs("values", required=True)
    if not r.finish() or pairs is None:
        return None
    values = tuple(Assignment(name, expression) for name, expression in pairs)
    return SetNode(id=head.id, label=head.label, values=values)


def _decode_if(r: Reader, head: Head) -> IfNode | None:
    """Decode an if node."""
    condition = r.string("condition", required=True)
    if not r.finish() or condition is None:
        return None
    return IfNode(id=head.id, label=head.label, condition=condition)


def _decode_case(r: Reader, index: int, raw: object) -> SwitchCase | None:
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


def _decode_switch(r: Reader, head: Head) -> SwitchNode | None:
    """Decode a switch node."""
    raw_cases = r.value("cases", required=True)
    cases: list[SwitchCase | None] = []
    if isinstance(raw_cases, list) and raw_cases:
        cases = [_decode_case(r, i, raw) for i, raw in enumerate(raw_cases)]
    elif isinstance(raw_cases, list):
        r.report(FormatCode.FIELD_VALUE, "cases", "`cases` must list at least one case.")
    elif raw_cases is not ABSENT:
        r.wrong_type("cases", "a list of cases")
    default = r.string("default", required=True)
    if not r.finish() or default is None:
        return None
    decoded = tuple(case for case in cases if case is not None)
    return SwitchNode(id=head.id, label=head.label, cases=decoded, default=default)


def _decode_fork(r: Reader, head: Head) -> ForkNode | None:
    """Decode a fork node."""
    branches = r.names("branches", required=True)
    if not r.finish() or branches is None:
        return None
    return ForkNode(id=head.id, label=head.label, branch_names=branches)


def _decode_gather(r: Reader, head: Head) -> GatherNode | None:
    """Decode a gather node."""
    slots = r.names("slots", required=True)
    conflicts = r.choice("conflicts", ConflictPolicy, FormatCode.GATHER_CONFLICTS_INVALID)
    if not r.finish() or slots is None:
        return None
    return GatherNode(id=head.id, label=head.label, slots=slots, conflicts=conflicts)


def _decode_foreach(r: Reader, head: Head) -> ForeachNode | None:
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


def _decode_loop(r: Reader, head: Head) -> LoopNode | None:
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


def _decode_race(r: Reader, head: Head) -> RaceNode | None:
    """Decode a race node."""
    branches = r.names("branches", required=True)
    if not r.finish() or branches is None:
        return None
    return RaceNode(id=head.id, label=head.label, branch_names=branches)


def _decode_policy(r: Reader) -> ApprovalPolicy | None:
    """Decode `all`, `any` or `{"quorum": n}` with n ≥ 1."""
    raw = r.value("policy", required=False)
    if raw is ABSENT:
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


def _decode_approval(r: Reader, head: Head) -> ApprovalNode | None:
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


def _decode_wait(r: Reader, head: Head) -> WaitNode | None:
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


def _decode_subflow(r: Reader, head: Head) -> SubflowNode | None:
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


def _decode_fail(r: Reader, head: Head) -> FailNode | None:
    """Decode a fail node."""
    error = r.string("error", required=True)
    if not r.finish() or error is None:
        return None
    return FailNode(id=head.id, label=head.label, error=error)


NODE_DECODERS: Final[Mapping[NodeType, Callable[[Reader, Head], Node | None]]] = {
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


class NodeDecoder:
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
        reader = Reader(raw, Where(node=node_id), self.issues)
        reader.read.update({"id", "type"})
        head = Head(node_id, reader.string("label", non_empty=False))
        return NODE_DECODERS[node_type](reader, head)

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
        if isinstance(node_type, str) and node_type in NODE_TYPES:
            return NODE_TYPES[node_type]
        known = ", ".join(member.value for member in NodeType)
        message = f"Node `{node_id}` has type {node_type!r}; use one of: {known}."
        self.report(FormatCode.NODE_TYPE_UNKNOWN, message, node_id, "type")
        return None
