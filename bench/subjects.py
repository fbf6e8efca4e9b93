"""What a benchmarked implementation provides, and Braid's own in-process subjects."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from bench.shapes import Shape, Work, build
from engine.core.actions import ActionContext, ActionRegistry
from engine.core.events import RunStatus
from engine.core.graph import Graph
from engine.core.runtime import InProcessRuntime, ManualClock
from engine.core.state import RunState
from engine.core.store import InMemoryStore
from engine.core.validation import MAX_EDGES, MAX_NODES, ProblemCode, validate


def nothing() -> None:
    """Reset nothing between runs."""


@dataclass(frozen=True, slots=True)
class Prepared:
    """One built flow of one implementation, ready to run again and again."""

    run: Callable[[], None]  # timed
    work_done: Callable[[], int]  # work nodes the last run executed (checked after warm-up)
    expected: int
    reset: Callable[[], None] = nothing  # untimed, before every run
    remark: str | None = None  # something the report should say about this measurement


class Subject(Protocol):
    """An implementation that runs the benchmark shapes."""

    @property
    def key(self) -> str:
        """The subject's name on the command line and in the results."""
        ...

    @property
    def label(self) -> str:
        """The subject's name in the report."""
        ...

    def unsupported(self, shape: Shape, n: int) -> str | None:
        """Return why this size of the shape is not measured, or None to measure it."""
        ...

    def prepare(self, shape: Shape, n: int) -> Prepared:
        """Build the flow (untimed) and return how to run it."""
        ...


SLEEP_S = 0.001  # the real-work variant: each work node sleeps this long
SLEEP_LARGEST = 1_000  # its runs take about N ms in Braid: 10,000 would take minutes


def sleep_unsupported(n: int) -> str | None:
    """Return why the real-work variant does not run at size N, or None."""
    if n > SLEEP_LARGEST:
        return f"not measured above N = {SLEEP_LARGEST:,} (about N x {SLEEP_S * 1e3:.0f} ms a run)"
    return None


def refused(shape: Shape, n: int) -> str | None:
    """Return why no subject runs this size of the shape, or None.

    A fork wider than `validate()`'s size limit is a flow Braid refuses to save, so it is not
    measured; the foreach of the same N is the wide fan-out measured at that size.
    """
    if shape is not Shape.FORK:
        return None
    document = build(shape, n, Work.NOOP).document
    if len(document["nodes"]) <= MAX_NODES and len(document["edges"]) <= MAX_EDGES:
        return None
    return (
        f"not run: a fork this wide is above validate()'s limit of {MAX_NODES:,} nodes / "
        f"{MAX_EDGES:,} edges; the foreach of N = {n:,} measures that fan-out instead"
    )


class Counter:
    """Counts the calls of a work node, so a run proves that it ran every node."""

    def __init__(self, sleep_s: float = 0.0) -> None:
        self.calls = 0
        self.sleep_s = sleep_s
        self.lock = threading.Lock()

    def noop(self, *_: Any) -> None:
        """Count one call, sleep when the node stands for real work, and write nothing.

        Sleeping nodes run on LangGraph's threads at once, so they count under a lock.
        """
        if not self.sleep_s:
            self.calls += 1
            return
        time.sleep(self.sleep_s)
        with self.lock:
            self.calls += 1


def check_document(document: dict[str, Any]) -> str | None:
    """Raise unless `validate()` accepts the document; return a remark on its size limit.

    Above the validator's size limit the only problem allowed is `graph.too_large`: the
    generator is the same at every N, and below the limit it validates clean.
    """
    errors = validate(document).errors
    too_large = [e for e in errors if e.code is ProblemCode.GRAPH_TOO_LARGE]
    if len(too_large) != len(errors):
        raise ValueError(f"generated flow is invalid: {errors[:3]}")
    if not too_large:
        return None
    return (
        f"above validate()'s limit of {MAX_NODES:,} nodes / {MAX_EDGES:,} edges "
        "(`graph.too_large`, its only problem); the runtime runs it regardless"
    )


@dataclass(frozen=True)
class BraidSubject:
    """Braid's InProcessRuntime over an InMemoryStore, with a task or a set per work node.

    With `sleep_s`, each task sleeps that long: in process, branches run one after another.
    """

    key: str
    label: str
    work: Work
    snapshot_every_step: bool
    sleep_s: float = 0.0

    def unsupported(self, shape: Shape, n: int) -> str | None:
        return sleep_unsupported(n) if self.sleep_s else None

    def prepare(self, shape: Shape, n: int) -> Prepared:
        case = build(shape, n, self.work)
        remark = check_document(case.document)
        graphs = {"main": Graph.from_json(case.document)}
        counter = Counter(self.sleep_s)
        actions = ActionRegistry()
        actions.register("noop")(self.noop_action(counter))
        last: list[RunState] = []

        def run() -> None:
            counter.calls = 0
            runtime = InProcessRuntime(
                InMemoryStore(),
                actions,
                ManualClock(),
                snapshot_every_step=self.snapshot_every_step,
            )
            state = runtime.start("bench", graphs, "bench", case.input)
            if state.status is not RunStatus.COMPLETED:
                raise RuntimeError(f"run ended {state.status.value}: {state.error}")
            last[:] = [state]

        def work_done() -> int:
            if self.work is Work.NOOP:
                return counter.calls
            log = (last[0].result or {}).get("log") or []
            assert isinstance(log, list), log
            return len(log)

        return Prepared(run, work_done, case.work_nodes, remark=remark)

    @staticmethod
    def noop_action(counter: Counter) -> Callable[[dict[str, Any], ActionContext], None]:
        """Return the `noop` action: one Python call that counts itself (and may sleep)."""

        def noop(params: dict[str, Any], context: ActionContext) -> None:
            counter.noop()

        return noop


BRAID_TASK = BraidSubject("braid", "Braid task", Work.NOOP, snapshot_every_step=False)
BRAID_SET = BraidSubject("braid-set", "Braid set (CEL)", Work.SET, snapshot_every_step=False)
BRAID_SNAPSHOT = BraidSubject(
    "braid-snapshot", "Braid task + snapshot/step", Work.NOOP, snapshot_every_step=True
)
BRAID_SLEEP = BraidSubject(
    "braid-sleep", "Braid task, 1 ms sleep", Work.NOOP, snapshot_every_step=False, sleep_s=SLEEP_S
)
BRAID_SUBJECTS: tuple[BraidSubject, ...] = (BRAID_TASK, BRAID_SET, BRAID_SNAPSHOT, BRAID_SLEEP)
