"""Local checks: each edge, each node's references, state writes, actions and ceilings."""

from __future__ import annotations

import json

from engine.core import expression_limits
from engine.core.graph import (
    BODY_OUTCOMES,
    BRANCHING_TYPES,
    Edge,
    ForeachNode,
    GatherNode,
    LoopNode,
    Node,
    NodeType,
    Reducer,
    TaskNode,
)
from engine.core.http_rules import header_problem, method_problem
from engine.core.validation.flow import Flow
from engine.core.validation.problems import (
    HTTP_REQUEST,
    Link,
    Problem,
    ProblemCode,
    make_problem,
)
from engine.core.values import JSON as JsonValue

# ---------------------------------------------------------------------------------------------
# Local checks: each edge, each node's references, state, actions and expressions' syntax


def local_problems(flow: Flow) -> list[Problem]:
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


def _start_problems(flow: Flow) -> list[Problem]:
    """Report a flow without exactly one start node."""
    code = ProblemCode.GRAPH_START_COUNT
    if not flow.starts and flow.has_nodes:
        return [make_problem(code, "The flow has no start node; add one node of type `start`.")]
    if len(flow.starts) <= 1:
        return []
    listed = ", ".join(f"`{s}`" for s in flow.starts)
    message = f"The flow has {len(flow.starts)} start nodes ({listed}); keep exactly one."
    return [make_problem(code, message, node=start) for start in flow.starts]


def _endpoint_problems(flow: Flow, link: Link) -> list[Problem]:
    """Report edges from or to node ids that do not exist."""
    problems = []
    for end, code in (
        (link.edge.source, ProblemCode.EDGE_UNKNOWN_SOURCE),
        (link.edge.target, ProblemCode.EDGE_UNKNOWN_TARGET),
    ):
        if end not in flow.types:
            message = f"Edge {link.shown} refers to node `{end}`, which does not exist."
            problems.append(make_problem(code, message, link=link))
    return problems


def _source_problems(flow: Flow, link: Link) -> list[Problem]:
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
    return [make_problem(ProblemCode.EDGE_OUTCOME_INVALID, message, node=source, link=link)]


def _branch_edge_problems(flow: Flow, link: Link, source_type: NodeType) -> list[Problem]:
    """Report a branch edge from a node that has no such branch."""
    source, branch = link.edge.source, link.edge.branch
    if source_type not in BRANCHING_TYPES:
        message = (
            f"Edge {link.shown} names branch `{branch}`, but only fork and race nodes have "
            f"branches; {flow.describe(source)} continues by `outcome`."
        )
        return [make_problem(ProblemCode.EDGE_BRANCH_NOT_ALLOWED, message, node=source, link=link)]
    node = flow.nodes.get(source)
    if node is None or branch in node.branches:
        return []
    declared = ", ".join(f"`{b}`" for b in node.branches)
    message = (
        f"Edge {link.shown} names branch `{branch}`, which `{source}` does not declare "
        f"({declared})."
    )
    return [make_problem(ProblemCode.BRANCH_UNDECLARED, message, node=source, link=link)]


def _slot_problems(flow: Flow, link: Link) -> list[Problem]:
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
        return [make_problem(ProblemCode.EDGE_SLOT_NOT_ALLOWED, message, node=target, link=link)]
    gather = flow.nodes.get(target)
    slots = gather.slots if isinstance(gather, GatherNode) else None
    if edge.slot is None:
        named = "" if slots is None else " (" + ", ".join(f"`{s}`" for s in slots) + ")"
        message = (
            f"Edge {link.shown} enters gather `{target}` without a `slot`; name one of its "
            f"slots{named}."
        )
        return [make_problem(ProblemCode.GATHER_SLOT_MISSING, message, node=target, link=link)]
    if slots is None or edge.slot in slots:
        return []
    declared = ", ".join(f"`{s}`" for s in slots)
    message = (
        f"Edge {link.shown} fills slot `{edge.slot}`, which gather `{target}` does not "
        f"declare ({declared})."
    )
    return [make_problem(ProblemCode.GATHER_SLOT_UNDECLARED, message, node=target, link=link)]


def _successor_problems(flow: Flow, node_id: str) -> list[Problem]:
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
                make_problem(ProblemCode.BRANCH_MISSING, message, node=node_id, field="branches")
            )
    return problems


def _successor_key(edge: Edge) -> tuple[bool, str]:
    """Return what an edge continues: (True, branch) or (False, outcome)."""
    return (True, edge.branch) if edge.branch is not None else (False, edge.follows or "")


def _second_successor(node_id: str, link: Link) -> Problem:
    """Report an edge for a branch or outcome that already has one."""
    edge = link.edge
    if edge.branch is not None:
        message = (
            f"Branch `{edge.branch}` of `{node_id}` has a second edge {link.shown}; a branch has "
            f"exactly one edge."
        )
        return make_problem(ProblemCode.BRANCH_DUPLICATE, message, node=node_id, link=link)
    message = (
        f"Outcome `{edge.follows}` of `{node_id}` already has an edge; {link.shown} would be a "
        f"second successor. Use a fork to run both, or remove one."
    )
    return make_problem(ProblemCode.EDGE_DUPLICATE_SUCCESSOR, message, node=node_id, link=link)


def _node_problems(flow: Flow, node: Node) -> list[Problem]:
    """Return one decoded node's reference problems."""
    problems = _state_write_problems(flow, node)
    if isinstance(node, TaskNode) and node.action not in flow.actions:
        known = ", ".join(f"`{a}`" for a in sorted(flow.actions))
        message = (
            f"Task `{node.id}` runs action `{node.action}`, which is not registered; use one "
            f"of {known}."
        )
        problems.append(
            make_problem(ProblemCode.TASK_ACTION_UNKNOWN, message, node=node.id, field="action")
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
            problems.append(make_problem(code, message, node=node.id, field="params.method"))
    headers = params.get("headers")
    for name, value in headers.items() if isinstance(headers, dict) else ():
        reason = header_problem(name, value, check_value=not _computed(value))
        if reason is not None:
            message = f"Task `{node.id}`: {reason}."
            field = f"params.headers.{name}"
            code = ProblemCode.TASK_HTTP_HEADER_INVALID
            problems.append(make_problem(code, message, node=node.id, field=field))
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
    return [make_problem(code, message, node=node.id, field=field)]


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


def _state_write_problems(flow: Flow, node: Node) -> list[Problem]:
    """Report writes to undeclared fields, and a foreach `errors` field that is not `append`."""
    problems = []
    for write in node.state_writes():
        if flow.declared_state is not None and write.state_field not in flow.declared_state:
            message = (
                f"{flow.describe(node.id)} writes state field `{write.state_field}` (in "
                f"`{write.field}`), which `state` does not declare; declare it with a reducer."
            )
            problems.append(
                make_problem(
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
                make_problem(
                    ProblemCode.FOREACH_ERRORS_NOT_APPEND, message, node=node.id, field="errors"
                )
            )
    return problems


def _unfed_slot_problems(flow: Flow, gather: GatherNode) -> list[Problem]:
    """Report declared slots that no edge fills."""
    if gather.id in flow.damaged_targets:
        return []
    fed = flow.fed_slots.get(gather.id, set())
    return [
        make_problem(
            ProblemCode.GATHER_SLOT_UNFED,
            f"Slot `{slot}` of gather `{gather.id}` has no incoming edge, so the gather can never "
            f"fire; add an edge with `slot: {slot}` or remove the slot.",
            node=gather.id,
            field="slots",
        )
        for slot in gather.slots
        if slot not in fed
    ]


def _body_missing_problems(flow: Flow, node: ForeachNode | LoopNode) -> list[Problem]:
    """Report a foreach without an `item` edge or a loop without a `body` edge."""
    outcome = BODY_OUTCOMES[node.type]
    leaving = flow.leaving.get(node.id, ())
    if node.id in flow.damaged_sources or any(link.edge.follows == outcome for link in leaving):
        return []
    message = (
        f"{node.type.capitalize()} `{node.id}` has no `{outcome}` edge; add one into its body."
    )
    return [make_problem(ProblemCode.BODY_MISSING, message, node=node.id)]
