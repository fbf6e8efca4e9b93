"""The validator: decode a document, run every check and return one report."""

from __future__ import annotations

from collections.abc import Mapping

from engine.core.graph import (
    Graph,
    decode_document,
)
from engine.core.inputs import schema_problems
from engine.core.validation.flow import Flow
from engine.core.validation.local import local_problems
from engine.core.validation.problems import (
    BUILTIN_ACTIONS,
    MAX_EDGES,
    MAX_NODES,
    Problem,
    ProblemCode,
    Report,
    Severity,
    from_issue,
    make_problem,
)
from engine.core.validation.traversal import Traversal


def validate(document: object, actions: Mapping[str, frozenset[str]] | None = None) -> Report:
    """Return every problem of a document; `actions` maps action names to their outcomes."""
    oversized = _size_problems(document)
    if oversized:
        return Report(errors=oversized, warnings=(), graph=None)
    decoded = decode_document(document)
    if not isinstance(document, dict):
        return Report(errors=tuple(map(from_issue, decoded.issues)), warnings=(), graph=None)
    flow = Flow(decoded, _catalog(actions), isinstance(document.get("nodes"), list))
    problems = [from_issue(issue) for issue in decoded.issues]
    problems += local_problems(flow)
    problems += Traversal(flow).problems()
    problems += _input_schema_problems(decoded.graph)
    errors = tuple(p for p in problems if p.severity is Severity.ERROR)
    warnings = tuple(p for p in problems if p.severity is Severity.WARNING)
    return Report(errors=errors, warnings=warnings, graph=None if decoded.issues else decoded.graph)


def _input_schema_problems(graph: Graph) -> list[Problem]:
    """Report an `input` that is not a usable JSON Schema (of the supported subset)."""
    if graph.input is None:
        return []
    return [
        make_problem(ProblemCode.INPUT_SCHEMA_INVALID, f"`{where}`: {message}", field=where)
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
    return (make_problem(ProblemCode.GRAPH_TOO_LARGE, message),)
