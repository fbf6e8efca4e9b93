"""Checks that walk the graph from start: reachability, bodies, cycles and expressions."""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Iterable, Iterator, Mapping

from engine.core.expression_errors import (
    ExpressionLimitError,
    ExpressionSyntaxError,
    position_at,
)
from engine.core.expressions import CelExpression, NameUse, Template, compile_cel, compile_template
from engine.core.graph import (
    RESERVED_VARIABLES,
    ExpressionKind,
    ExpressionSite,
    Node,
    NodeType,
)
from engine.core.validation.flow import BodyScope, Boundary, Flow, is_body_entry
from engine.core.validation.joins import JoinAnalysis
from engine.core.validation.problems import Link, Problem, ProblemCode, make_problem

# ---------------------------------------------------------------------------------------------
# Traversal from start: reachability, bodies (scopes), cycles, expressions, warnings


class Traversal:
    """Follows the flow from its start node and runs every check that needs the paths."""

    def __init__(self, flow: Flow) -> None:
        self.flow = flow
        self.scopes: dict[str, BodyScope] = {}
        self.back_edges: set[int] = set()
        self.escapes: set[int] = set()
        self.entered: dict[Boundary, Link] = {}
        self.returned: set[Boundary] = set()
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
            joins = JoinAnalysis(flow, self.scopes, returns)
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
        deferred: deque[tuple[Link, BodyScope]] = deque()
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
        self,
        scope: BodyScope,
        link: Link,
        level: deque[str],
        deferred: deque[tuple[Link, BodyScope]],
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

    def _entered_frame(self, link: Link) -> Boundary | None:
        """Return the body an edge enters, if it is a foreach/loop body or a race branch edge."""
        edge = link.edge
        source_type = self.flow.types[edge.source]
        if source_type is NodeType.RACE and edge.branch is not None:
            return Boundary(edge.source, edge.branch)
        if is_body_entry(source_type, edge):
            return Boundary(edge.source)
        return None

    def _claim(self, node_id: str, scope: BodyScope, link: Link | None, level: deque[str]) -> None:
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

    def _end_in_body(self, node_id: str, scope: BodyScope, link: Link | None) -> Problem:
        """Report an end node inside a body: it would end the whole run from one item."""
        message = (
            f"End `{node_id}` is inside {self._scope_name(scope)}; an end there would end the "
            f"whole run. Return to `{scope[-1].owner}` instead, or use a `fail` node to fail "
            f"the item."
        )
        return make_problem(ProblemCode.BODY_ESCAPE, message, node=node_id, link=link)

    def _escape(self, node_id: str, scope: BodyScope, known: BodyScope, link: Link) -> Problem:
        """Report an edge that crosses a body boundary other than by the back-edge."""
        message = (
            f"Edge {link.shown} leads from {self._scope_name(scope)} to `{node_id}`, which "
            f"belongs to {self._scope_name(known)}. A body is left only by an edge back to its own "
            f"foreach/loop/race (or ends in a `fail`)."
        )
        return make_problem(ProblemCode.BODY_ESCAPE, message, node=node_id, link=link)

    def _scope_name(self, scope: BodyScope) -> str:
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
            make_problem(
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


def _reachable(flow: Flow) -> set[str]:
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


def _reachability_problems(flow: Flow, reached: set[str]) -> list[Problem]:
    """Report nodes start cannot reach, and a flow whose start reaches no end."""
    problems = [
        make_problem(
            ProblemCode.NODE_UNREACHABLE,
            f"{flow.describe(node_id)} cannot be reached from the start; connect it or remove it.",
            node=node_id,
        )
        for node_id in flow.types
        if node_id not in reached
    ]
    if not any(flow.types[n] is NodeType.END for n in reached):
        message = "No end node is reachable from the start; add an `end` node and connect it."
        problems.append(make_problem(ProblemCode.GRAPH_NO_REACHABLE_END, message))
    return problems


def _cycle_problems(
    flow: Flow, scopes: Mapping[str, BodyScope], back_edges: set[int]
) -> list[Problem]:
    """Report each cycle among reached nodes that does not return through a back-edge.

    `back_edges` also holds the edges already reported as body escapes, so that one wrong edge
    is not reported twice.
    """
    forward: dict[str, list[Link]] = {
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
                make_problem(ProblemCode.GRAPH_CYCLE, message, node=component[0], link=path[0])
            )
    return problems


def _strong_components(nodes: list[str], forward: Mapping[str, list[Link]]) -> list[list[str]]:
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
    forward: Mapping[str, list[Link]],
    index: dict[str, int],
    low: dict[str, int],
    stack: list[str],
    on_stack: set[str],
    components: list[list[str]],
) -> None:
    """Run Tarjan's algorithm from one root without recursion."""
    work: list[tuple[str, Iterator[Link]]] = [(root, iter(forward[root]))]
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


def _cycle_path(first: str, members: set[str], forward: Mapping[str, list[Link]]) -> list[Link]:
    """Return the edges of a shortest cycle through `first` inside one component, or []."""
    came_by: dict[str, Link] = {}
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


def _walk_back(came_by: Mapping[str, Link], first: str, last: Link) -> list[Link]:
    """Return the path from `first` that ends with `last`."""
    path = [last]
    while path[-1].edge.source != first:
        path.append(came_by[path[-1].edge.source])
    return path[::-1]


def _expression_problems(flow: Flow, node: Node, variables: frozenset[str] | None) -> list[Problem]:
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
                make_problem(
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
    flow: Flow, node_id: str, site: ExpressionSite, reads: Iterable[NameUse]
) -> list[Problem]:
    """Report `state.<field>` reads of undeclared fields."""
    return [
        make_problem(
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
        make_problem(
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
