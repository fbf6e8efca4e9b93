"""The peers, built on the same shapes: LangGraph (chain, Send fan-out) and SpiffWorkflow (BPMN).

Both come from the optional `.[bench]` dependency group and are imported only here.
"""

from __future__ import annotations

import itertools
import operator
import sys
from dataclasses import dataclass
from typing import Annotated, Any, TypedDict

from bench.shapes import FOREACH_CONCURRENCY, NESTED_WIDTH, Shape
from bench.subjects import SLEEP_S, Counter, Prepared, Subject, sleep_unsupported

# --------------------------------------------------------------------------------- LangGraph


class LogState(TypedDict):
    """The LangGraph state: one list field with the `operator.add` reducer."""

    log: Annotated[list[Any], operator.add]


def langgraph_chain(n: int, counter: Counter, appends: bool) -> Any:
    """Return an uncompiled graph START -> n1 -> ... -> nN -> END of work nodes."""
    from langgraph.graph import END, START, StateGraph

    builder = StateGraph(LogState)
    previous = START
    for index in range(1, n + 1):
        builder.add_node(f"n{index}", work_node(counter, appends))
        builder.add_edge(previous, f"n{index}")
        previous = f"n{index}"
    builder.add_edge(previous, END)
    return builder


def appender(counter: Counter) -> Any:
    """Return a node that counts itself and appends one item through the reducer."""

    def work(state: LogState) -> dict[str, list[str]]:
        counter.noop()
        return {"log": ["x"]}

    return work


def work_node(counter: Counter, appends: bool) -> Any:
    """Return a work node: one that appends one item, or one that writes nothing."""
    return appender(counter) if appends else counter.noop


def langgraph_fork_body(width: int, counter: Counter, appends: bool) -> Any:
    """Return a compiled subgraph: START -> b1..bW in parallel -> join -> END."""
    from langgraph.graph import END, START, StateGraph

    builder = StateGraph(LogState)
    builder.add_node("join", lambda state: None)
    for index in range(1, width + 1):
        builder.add_node(f"b{index}", work_node(counter, appends))
        builder.add_edge(START, f"b{index}")
    builder.add_edge([f"b{index}" for index in range(1, width + 1)], "join")
    builder.add_edge("join", END)
    return builder.compile()


def langgraph_fan_out(n: int, counter: Counter, nested: bool, appends: bool) -> Any:
    """Return START -> fan -> N x Send(work) -> join -> END; `work` may be a fork subgraph."""
    from langgraph.graph import END, START, StateGraph
    from langgraph.types import Send

    builder = StateGraph(LogState)
    builder.add_node("fan", lambda state: None)
    if nested:
        work = langgraph_fork_body(NESTED_WIDTH, counter, appends)
    else:
        work = work_node(counter, appends)
    builder.add_node("work", work)
    builder.add_node("join", lambda state: None)
    builder.add_edge(START, "fan")
    builder.add_conditional_edges(
        "fan", lambda state: [Send("work", {"log": []}) for _ in range(n)], ["work"]
    )
    builder.add_edge("work", "join")
    builder.add_edge("join", END)
    return builder


SAVER_LARGEST = 1_000


@dataclass(frozen=True)
class LangGraphSubject:
    """LangGraph's compiled StateGraph, invoked synchronously, with or without InMemorySaver.

    With the saver it runs with `durability="sync"`: each checkpoint is written before the
    next step starts, as Braid's snapshot per step is.

    Its work nodes either append one item to the reduced `log` field (the same work as a
    Braid `set` node) or write nothing (the same work as a Braid `task` calling `noop`).
    """

    key: str
    label: str
    checkpointer: bool
    appends: bool
    sleep_s: float = 0.0  # real work per node; parallel nodes run on LangGraph's threads

    def unsupported(self, shape: Shape, n: int) -> str | None:
        if self.sleep_s:
            return sleep_unsupported(n)
        if self.checkpointer and n > SAVER_LARGEST:
            return (
                f"not measured above N = {SAVER_LARGEST:,}: the targets compare it at "
                "N = 1,000, and its runs at 10,000 took 5 minutes of `make bench`"
            )
        return None

    def prepare(self, shape: Shape, n: int) -> Prepared:
        from langgraph.checkpoint.memory import InMemorySaver

        counter = Counter(self.sleep_s)
        if shape is Shape.CHAIN:
            builder = langgraph_chain(n, counter, self.appends)
        else:
            nested = shape is Shape.FOREACH_FORK
            builder = langgraph_fan_out(n, counter, nested, self.appends)
        saver = InMemorySaver() if self.checkpointer else None
        graph = builder.compile(checkpointer=saver)
        config: dict[str, Any] = {
            "recursion_limit": n + 10,
            "configurable": {"thread_id": "bench"},
        }
        if shape in (Shape.FOREACH, Shape.FOREACH_FORK):
            config["max_concurrency"] = FOREACH_CONCURRENCY
        expected = n * NESTED_WIDTH if shape is Shape.FOREACH_FORK else n

        def reset() -> None:
            counter.calls = 0
            if saver is not None:
                saver.delete_thread("bench")

        # Braid's snapshot per step is synchronous: the saver writes each checkpoint before
        # the next step runs, too, instead of LangGraph's default "async".
        durability = "sync" if saver is not None else None

        def run() -> None:
            graph.invoke({"log": []}, config, durability=durability)

        return Prepared(run, lambda: counter.calls, expected, reset)


# --------------------------------------------------------------------------------- Spiff

BPMN = "http://www.omg.org/spec/BPMN/20100524/MODEL"
SPIFF_FORK_LIMIT = 1_000  # parallel joins are quadratic; N = 10,000 would take hours
SPIFF_DEPTH_LIMIT = 1_000  # TaskIterator's default max_depth: deeper READY tasks are never found


def script_task(task_id: str) -> str:
    """Return a BPMN script task running `pass`: one Python call, like a no-op node."""
    return f'<bpmn:scriptTask id="{task_id}"><bpmn:script>pass</bpmn:script></bpmn:scriptTask>'


def bpmn_document(elements: list[str], flows: list[tuple[str, str]]) -> str:
    """Return a BPMN definitions document with one executable process `bench`."""
    sequence = [
        f'<bpmn:sequenceFlow id="flow{i}" sourceRef="{a}" targetRef="{b}"/>'
        for i, (a, b) in enumerate(flows)
    ]
    body = "".join(['<bpmn:startEvent id="start"/>', *elements, '<bpmn:endEvent id="end"/>'])
    return (
        f'<?xml version="1.0" encoding="UTF-8"?><bpmn:definitions xmlns:bpmn="{BPMN}" '
        f'id="defs" targetNamespace="bench"><bpmn:process id="bench" isExecutable="true">'
        f"{body}{''.join(sequence)}</bpmn:process></bpmn:definitions>"
    )


def bpmn_chain(n: int) -> str:
    """Return start -> t1 -> ... -> tN -> end."""
    ids = [f"t{i}" for i in range(1, n + 1)]
    path = ["start", *ids, "end"]
    return bpmn_document([script_task(i) for i in ids], list(itertools.pairwise(path)))


def bpmn_fork(n: int) -> str:
    """Return start -> parallel split -> t1..tN -> parallel join -> end."""
    ids = [f"t{i}" for i in range(1, n + 1)]
    gateways = ['<bpmn:parallelGateway id="split"/>', '<bpmn:parallelGateway id="join"/>']
    flows = [("start", "split"), *(("split", i) for i in ids), *((i, "join") for i in ids)]
    flows.append(("join", "end"))
    return bpmn_document([*gateways, *(script_task(i) for i in ids)], flows)


@dataclass(frozen=True)
class SpiffSubject:
    """SpiffWorkflow 3's BpmnWorkflow, run to completion with do_engine_steps()."""

    key: str = "spiff"
    label: str = "SpiffWorkflow"

    def unsupported(self, shape: Shape, n: int) -> str | None:
        if shape not in (Shape.CHAIN, Shape.FORK):
            return "not built (the BPMN peer covers the chain and the parallel split/join)"
        if shape is Shape.FORK and n > SPIFF_FORK_LIMIT:
            return "skipped: too slow (quadratic)"
        if shape is Shape.CHAIN and n + 1 >= SPIFF_DEPTH_LIMIT:
            return (
                "skipped: cannot run (SpiffWorkflow's task iterator stops at tree depth "
                f"{SPIFF_DEPTH_LIMIT:,}, so a longer sequence never completes)"
            )
        return None

    def prepare(self, shape: Shape, n: int) -> Prepared:
        from SpiffWorkflow.bpmn import BpmnWorkflow
        from SpiffWorkflow.bpmn.parser import BpmnParser
        from SpiffWorkflow.util.task import TaskState

        # The parser recurses once per task along a sequence.
        sys.setrecursionlimit(max(sys.getrecursionlimit(), 10 * n + 1_000))
        parser = BpmnParser()
        parser.add_bpmn_str((bpmn_chain(n) if shape is Shape.CHAIN else bpmn_fork(n)).encode())
        spec = parser.get_spec("bench")
        last: list[Any] = []

        def run() -> None:
            workflow = BpmnWorkflow(spec)
            workflow.do_engine_steps()
            if not workflow.completed:
                raise RuntimeError("the BPMN workflow did not complete")
            last[:] = [workflow]

        def work_done() -> int:
            tasks = last[0].get_tasks(state=TaskState.COMPLETED)
            return sum(1 for task in tasks if (task.task_spec.bpmn_id or "").startswith("t"))

        return Prepared(run, work_done, n)


LANGGRAPH = LangGraphSubject(
    "langgraph", "LangGraph (writes nothing)", checkpointer=False, appends=False
)
LANGGRAPH_APPEND = LangGraphSubject(
    "langgraph-append", "LangGraph (appends)", checkpointer=False, appends=True
)
LANGGRAPH_SAVER = LangGraphSubject(
    "langgraph-saver",
    "LangGraph + InMemorySaver (writes nothing)",
    checkpointer=True,
    appends=False,
)
LANGGRAPH_SLEEP = LangGraphSubject(
    "langgraph-sleep", "LangGraph, 1 ms sleep", checkpointer=False, appends=False, sleep_s=SLEEP_S
)
SPIFF = SpiffSubject()
PEER_SUBJECTS: tuple[Subject, ...] = (
    LANGGRAPH,
    LANGGRAPH_APPEND,
    LANGGRAPH_SAVER,
    SPIFF,
    LANGGRAPH_SLEEP,
)
