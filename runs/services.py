"""Starting runs, deciding approvals and reporting runs: what the CLI and API call."""

import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from approvals import audit
from approvals.models import ApprovalRequest, EventKind
from approvals.services import decide_request, deciding_groups, open_request_at, starter_decides
from designer.models import Flow, FlowVersion
from designer.services import check_graph
from engine.actions import ACTIONS
from engine.core import expression_limits
from engine.core.colors import explain_run
from engine.core.events import Decision, SetTimer
from engine.core.graph import Graph, SubflowNode
from engine.core.inputs import InputRejected, check_input
from engine.core.runtime import Clock, InProcessRuntime, RealClock
from engine.core.state import MAIN, RunState, subflow_key
from engine.core.store import UnknownRun
from engine.core.validation import Report
from engine.models import PendingEvent, Run, Runtime
from engine.runtime import runs as runtime_runs
from engine.runtime.store import DjangoStore
from engine.runtime.timers import record_timers
from runs import test_runs


class RunRefused(Exception):
    """A run that cannot start: an invalid graph, a missing flow or subflow."""

    def __init__(self, message: str, report: Report | None = None) -> None:
        super().__init__(message)
        self.report = report


class RunInputRejected(RunRefused):
    """A run whose input does not match its flow's `input` schema; `fields` says which."""

    def __init__(self, rejected: InputRejected) -> None:
        super().__init__(str(rejected))
        self.fields = rejected.fields


def check_run_input(graphs: Mapping[str, Graph], input_value: Any) -> None:
    """Refuse an input that does not match the main graph's `input` schema (nothing stored)."""
    try:
        check_input(graphs[MAIN].input, input_value)
    except InputRejected as rejected:
        raise RunInputRejected(rejected) from rejected


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


# A graph whose subflows are still to load: the graph, its nesting depth, and the chain of
# subflow keys that led to it.
Pending = tuple[Graph, int, tuple[str, ...]]


def resolve_graphs(document: object) -> dict[str, Graph]:
    """Validate a graph and load every subflow it calls, transitively, by key."""
    report = check_graph(document)
    if not report.ok or report.graph is None:
        raise RunRefused(f"the graph has {len(report.errors)} error(s)", report)
    graphs = {MAIN: report.graph}
    pending: list[Pending] = [(report.graph, 0, (MAIN,))]
    while pending:
        graph, depth, chain = pending.pop()
        for node in graph.nodes:
            if isinstance(node, SubflowNode):
                load_subflow(node, graphs, pending, depth, chain)
    return graphs


def load_subflow(node: SubflowNode, graphs: dict[str, Graph], pending: list[Pending], depth: int,
                 chain: tuple[str, ...]) -> None:  # fmt: skip
    """Add one subflow's graph (and queue its own subflows); refuse recursion."""
    key = subflow_key(node)
    if key in chain:
        raise RunRefused(f"subflow {key} calls itself (through {' -> '.join(chain)})")
    deepest = expression_limits.limits().max_subflow_depth
    if depth >= deepest:
        raise RunRefused(
            f"subflow {key} would nest {depth + 1} calls deep (through {' -> '.join(chain)}); "
            f"the limit is {deepest} (BRAID_SUBFLOW_MAX_DEPTH)"
        )
    if key in graphs:
        return
    version = latest_version(node.flow, node.version)
    graphs[key] = Graph.from_json(version.graph)
    pending.append((graphs[key], depth + 1, (*chain, key)))


def runtime(
    clock: Clock | None = None, approval_timer_wait_s: float | None = None, **store: Any
) -> InProcessRuntime:
    """Return the in-process runtime on the project's database and actions."""
    engine = InProcessRuntime(DjangoStore(**store), ACTIONS, clock or RealClock())
    engine.approval_timer_wait_s = approval_timer_wait_s
    return engine


def start_run(
    document: object, label: str, input_value: Any, flow_version: FlowVersion | None = None,
    started_by: AbstractBaseUser | None = None, clock: Clock | None = None,
    approval_timer_wait_s: float | None = None,
) -> RunState:  # fmt: skip
    """Validate, store and run a graph in-process until it finishes or waits for a person.

    With approval_timer_wait_s it also waits out a timer racing a person's decision when
    the timer is due within that many seconds (`braid run --max-wait`).
    """
    graphs = resolve_graphs(document)
    check_run_input(graphs, input_value)
    engine = runtime(clock, approval_timer_wait_s, flow_version=flow_version, started_by=started_by)
    state = engine.start(str(uuid.uuid4()), graphs, label, input_value)
    if clock is None:  # on the wall clock only: a test's manual clock is not the sweeper's
        hand_over_timers(state)
    return state


def hand_over_timers(state: RunState) -> bool:
    """Hand an in-process run that still has a timer set over to the durable runtime.

    `braid run` (and `braid decide`) return when only a person can advance the run, yet a
    timer racing that person must still fire on time: the run becomes durable, its set
    timers are stored as Timer rows, and from then on the sweeper (and, for near timers, a
    countdown task) fires them exactly as it fires a durable run's. Decisions on it go
    through the durable inbox too. Return whether the run was handed over.
    """
    timers = state.timers()
    if state.status.finished or not timers:
        return False
    with transaction.atomic():
        run = Run.objects.select_for_update().get(pk=state.run_id)
        Run.objects.filter(pk=run.pk).update(runtime=Runtime.DURABLE)
        record_timers(run, [SetTimer(key=key, due=due) for due, key in timers])
    return True


@dataclass(frozen=True, slots=True)
class Decided:
    """A decision taken: on which run and runtime, and (durable) under which inbox key."""

    run_id: str
    runtime: Runtime
    inbox_key: str = ""


def runtime_of(run_id: str) -> Runtime:
    """Return which runtime drives a run; raise UnknownRun."""
    try:
        found = Run.objects.filter(pk=uuid.UUID(str(run_id))).values_list("runtime", flat=True)
        value = found.first()
    except ValueError:
        value = None
    if value is None:
        raise UnknownRun(run_id)
    return Runtime(value)


def decide(
    run_id: str, node: str, user: AbstractBaseUser, decision: Decision, comment: str = "",
    clock: Clock | None = None, execution_id: str | None = None,
) -> Decided:  # fmt: skip
    """Take a user's decision on the open approval at a node path (and execution).

    An in-process run applies it here and runs on to its next pause. A durable run gets it
    in its inbox, for a worker (or `follow`) to apply.
    """
    if runtime_of(run_id) is Runtime.DURABLE:
        approval = open_request_at(run_id, node, execution_id)
        return Decided(run_id, Runtime.DURABLE, decide_request(approval, user, decision, comment))
    approval = open_request_at(run_id, node, execution_id)
    groups = deciding_groups(approval, user)
    starter = starter_decides(approval, user)
    engine = runtime(clock)
    state = engine.load(run_id)
    username = user.get_username()
    with transaction.atomic():  # the audit entry goes only if the run takes the decision
        audit.record(EventKind.DECIDED, approval, username, decision=decision.value,
                     comment=comment, starter=starter, groups=list(groups))  # fmt: skip
        state = engine.decide(state, node, username, groups, decision, comment, execution_id)
        # As on a durable run: out of their inbox, and known to delegation's one-vote rule.
        ApprovalRequest.objects.filter(pk=approval.pk).update(
            decided_by=sorted({*approval.decided_by, username})
        )
    if clock is None:
        hand_over_timers(state)
    return Decided(run_id, Runtime.IN_PROCESS)


def follow(decided: Decided, wait_s: float | None = None) -> bool:
    """Let a decision take effect; return whether it has been applied.

    With the embedded worker (no REDIS_URL) this process has no worker of its own, so it
    drives the run itself up to the next person or timer. With workers, it waits up to
    `wait_s` (BRAID_DECIDE_WAIT_S) for one of them to apply the decision.
    """
    if decided.runtime is Runtime.IN_PROCESS:
        return True
    if settings.BRAID_EMBEDDED_WORKER:
        runtime_runs.drive(decided.run_id)
        return True
    wait_s = settings.BRAID_DECIDE_WAIT_S if wait_s is None else wait_s
    return applied_within(decided.run_id, decided.inbox_key, wait_s)


def applied_within(run_id: str, inbox_key: str, wait_s: float, poll_s: float = 0.05) -> bool:
    """Return whether the run's inbox row of this key is applied, polling up to wait_s."""
    deadline = time.monotonic() + wait_s
    applied = PendingEvent.objects.filter(run_id=run_id, key=inbox_key, applied_at__isnull=False)
    while not applied.exists():
        if time.monotonic() >= deadline:
            return False
        time.sleep(poll_s)
    return True


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
        "colors": {
            path: verdict.color.value
            for path, verdict in explain_run(
                state.graphs, rows, state.status, state.error or "", engine.store.trace(run_id)
            ).items()
        },
    }


def test_run(document: object, input_value: Any, decisions: list[dict[str, str]]) -> dict[str, Any]:
    """Run a draft on sample input, storing nothing; return its status, state and colors.

    The designer's "Test run": the graph is resolved and its input checked here (this
    reads the database), then played in a worker process under a wall time and a step
    budget, never on this thread (runs/test_runs.py). Each decision (`{node, decision}`,
    in order) is taken at that node's open approval as an approver of its groups would.
    Raise test_runs.WorkersBusy when every worker stays busy.
    """
    graphs = resolve_graphs(document)
    check_run_input(graphs, input_value)
    return test_runs.execute(graphs, input_value, decisions)
