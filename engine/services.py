"""Starting runs, deciding approvals and reporting runs: what the CLI and API call."""

import uuid
from typing import Any

from django.contrib.auth.models import AbstractBaseUser

from designer.models import Flow, FlowVersion
from designer.services import check_graph
from engine.actions import ACTIONS
from engine.core.colors import colors
from engine.core.events import Decision
from engine.core.graph import Graph, SubflowNode
from engine.core.runtime import Clock, InProcessRuntime, RealClock
from engine.core.state import MAIN, RunState, subflow_key
from engine.core.validation import Report
from engine.store import DjangoStore

MAX_SUBFLOW_DEPTH = 16


class RunRefused(Exception):
    """A run that cannot start: an invalid graph, a missing flow or subflow."""

    def __init__(self, message: str, report: Report | None = None) -> None:
        super().__init__(message)
        self.report = report


def latest_version(slug: str, number: int | None = None) -> FlowVersion:
    """Return a flow's published version (the latest when no number is given)."""
    flow = Flow.objects.filter(slug=slug).first()
    if flow is None:
        raise RunRefused(f"no flow has the slug {slug!r}")
    versions = flow.versions.order_by("-number")
    version = versions.filter(number=number).first() if number else versions.first()
    if version is None:
        raise RunRefused(f"{slug} has no published version {number or ''}".rstrip())
    return version


def resolve_graphs(document: object) -> dict[str, Graph]:
    """Validate a graph and load every subflow it calls, transitively, by key."""
    report = check_graph(document)
    if not report.ok or report.graph is None:
        raise RunRefused(f"the graph has {len(report.errors)} error(s)", report)
    graphs = {MAIN: report.graph}
    pending = [(report.graph, 0, (MAIN,))]
    while pending:
        graph, depth, chain = pending.pop()
        for node in graph.nodes:
            if isinstance(node, SubflowNode):
                load_subflow(node, graphs, pending, depth, chain)
    return graphs


def load_subflow(node: SubflowNode, graphs: dict[str, Graph], pending: list, depth: int,
                 chain: tuple[str, ...]) -> None:  # type: ignore[type-arg]  # fmt: skip
    """Add one subflow's graph (and queue its own subflows); refuse recursion."""
    key = subflow_key(node)
    if key in chain or depth >= MAX_SUBFLOW_DEPTH:
        raise RunRefused(f"subflow {key} calls itself (through {' -> '.join(chain)})")
    if key in graphs:
        return
    version = latest_version(node.flow, node.version)
    graphs[key] = Graph.from_json(version.graph)
    pending.append((graphs[key], depth + 1, (*chain, key)))


def runtime(clock: Clock | None = None, **store: Any) -> InProcessRuntime:
    """Return the in-process runtime on the project's database and actions."""
    return InProcessRuntime(DjangoStore(**store), ACTIONS, clock or RealClock())


def start_run(
    document: object, label: str, input_value: Any, flow_version: FlowVersion | None = None,
    started_by: AbstractBaseUser | None = None, clock: Clock | None = None,
) -> RunState:  # fmt: skip
    """Validate, store and run a graph in-process until it finishes or waits for a person."""
    graphs = resolve_graphs(document)
    engine = runtime(clock, flow_version=flow_version, started_by=started_by)
    return engine.start(str(uuid.uuid4()), graphs, label, input_value)


def decide(run_id: str, node: str, user: AbstractBaseUser, decision: Decision,
           comment: str = "", clock: Clock | None = None) -> RunState:  # fmt: skip
    """Deliver a user's decision on the open approval at a node, and run on."""
    engine = runtime(clock)
    state = engine.load(run_id)
    groups = tuple(user.groups.values_list("name", flat=True))  # type: ignore[attr-defined]
    return engine.decide(state, node, user.get_username(), groups, decision, comment)


def report(run_id: str) -> dict[str, Any]:
    """Return the run as the CLI prints it: status, state, node rows and colors."""
    engine = runtime()
    state = engine.load(run_id)
    rows = engine.store.rows(run_id)
    return {
        "run": run_id,
        "status": state.status.value,
        "state": state.current_view(),
        "nodes": {
            path: {
                "status": row.status.value,
                "execution_id": row.execution_id,
                "result": row.result,
            }
            for path, row in sorted(rows.items())
        },
        "colors": colors(state.graphs, rows, state.status),
    }
