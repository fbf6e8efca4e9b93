"""LangGraph with its PostgreSQL saver (`<prefix>langgraph`, durability="sync"): W1-W4.

  python -m bench.durable_peers.langgraph_subject --round N --plan quick --out rows.jsonl

LangGraph has no workers: a run executes in the process that invokes it, so the call
returning is the completion the client sees, and nothing resumes a run whose process died
until someone invokes it again. W1, W2 and W4 run in this process (the sync API; W2's
1,000 `Send` tasks on LangGraph's thread pool); W3 runs in two spawned processes, half the
runs each as concurrent `ainvoke`s (AsyncPostgresSaver), as the peers have two workers.
Every node writes nothing, as every other subject's steps.
"""

from __future__ import annotations

import asyncio
import itertools
import multiprocessing as mp
import sys
import time
import uuid
from typing import Any, TypedDict

from bench.durable_peers.common import (
    PG,
    TIMEOUT_S,
    W1_STEPS,
    W2_WIDTH,
    W3_RUNS,
    W3_STEPS,
    Options,
    Recorder,
    database,
    log,
    options,
)

URL = f"{PG.replace('postgres://', 'postgresql://')}/{database('langgraph')}"
CONNECTION = {"autocommit": True, "prepare_threshold": 0}  # as the saver's documentation asks


class State(TypedDict, total=False):
    """The graph's state: one field no node writes."""

    n: int


def nothing(state: State) -> dict[str, Any]:
    """A node that writes nothing."""
    return {}


def chain_graph(n: int) -> Any:
    """START -> s0 -> ... -> s(n-1) -> END."""
    from langgraph.graph import END, START, StateGraph

    graph = StateGraph(State)
    names = [f"s{i}" for i in range(n)]
    for name in names:
        graph.add_node(name, nothing)
    for a, b in itertools.pairwise([START, *names, END]):
        graph.add_edge(a, b)
    return graph


def fan_graph(n: int) -> Any:
    """START -> n `Send`s to `work` -> `join` -> END."""
    from langgraph.graph import END, START, StateGraph
    from langgraph.types import Send

    graph = StateGraph(State)
    graph.add_node("work", nothing)
    graph.add_node("join", nothing)
    graph.add_conditional_edges(START, lambda _: [Send("work", {}) for _ in range(n)], ["work"])
    graph.add_edge("work", "join")
    graph.add_edge("join", END)
    return graph


def ask(state: State) -> dict[str, Any]:
    """Pause for a decision (LangGraph's interrupt), then write nothing."""
    from langgraph.types import interrupt

    interrupt("approve?")
    return {}


def approval_graph() -> Any:
    """START -> ask (interrupts) -> after -> END."""
    from langgraph.graph import END, START, StateGraph

    graph = StateGraph(State)
    graph.add_node("ask", ask)
    graph.add_node("after", nothing)
    for a, b in itertools.pairwise([START, "ask", "after", END]):
        graph.add_edge(a, b)
    return graph


def thread() -> dict[str, Any]:
    """Return the config of a new thread (a new run)."""
    return {"configurable": {"thread_id": str(uuid.uuid4())}, "recursion_limit": 10_000}


def w3_child(n: int, ready: Any, go: Any, done: Any) -> None:
    """One of W3's two processes: warm up, wait for go, run n chains at once, report."""

    async def body() -> None:
        from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
        from psycopg_pool import AsyncConnectionPool

        async with AsyncConnectionPool(URL, max_size=20, kwargs=CONNECTION, open=False) as pool:
            shared: Any = pool  # the saver's hints want dict rows; it sets its own row factory
            graph = chain_graph(W3_STEPS).compile(checkpointer=AsyncPostgresSaver(shared))

            async def timed() -> float:
                began = time.perf_counter()
                await graph.ainvoke({"n": 0}, thread(), durability="sync")
                return time.perf_counter() - began

            await asyncio.gather(*(timed() for _ in range(10)))
            ready.set()
            await asyncio.get_running_loop().run_in_executor(None, go.wait)
            latencies = await asyncio.gather(*(timed() for _ in range(n)))
            done.put((time.perf_counter(), latencies))

    asyncio.run(body())


def many() -> tuple[float, list[float]]:
    """W3 in two spawned processes; return the seconds from go to both done, and latencies."""
    context = mp.get_context("spawn")
    go, done = context.Event(), context.Queue()
    readies = [context.Event() for _ in range(2)]
    sizes = [W3_RUNS // 2, W3_RUNS - W3_RUNS // 2]
    children = [
        context.Process(target=w3_child, args=(size, ready, go, done))
        for size, ready in zip(sizes, readies, strict=True)
    ]
    for child in children:
        child.start()
    try:
        if not all(ready.wait(120) for ready in readies):
            raise RuntimeError("a W3 process was not ready within 120 s")
        began = time.perf_counter()
        go.set()
        reports = [done.get(timeout=TIMEOUT_S) for _ in children]
        ended = time.perf_counter()
    finally:
        for child in children:
            child.join(timeout=30)
    return ended - began, [latency for _, latencies in reports for latency in latencies]


class LangGraph:
    """The client, which is also where the runs execute."""

    def __init__(self, saver: Any) -> None:
        self.chain = chain_graph(W1_STEPS).compile(checkpointer=saver)
        self.fan = fan_graph(W2_WIDTH).compile(checkpointer=saver)
        self.approval = approval_graph().compile(checkpointer=saver)

    def one(self, graph: Any) -> float:
        """Return the seconds one invoke takes to completion."""
        began = time.perf_counter()
        out = graph.invoke({"n": 0}, thread(), durability="sync")
        if "__interrupt__" in out:
            raise RuntimeError("the run paused")
        return time.perf_counter() - began

    def decision(self) -> float:
        """Return the seconds from the resume call until the run has completed."""
        from langgraph.types import Command

        config = thread()
        if "__interrupt__" not in self.approval.invoke({"n": 0}, config, durability="sync"):
            raise RuntimeError("the run did not pause")
        began = time.perf_counter()
        out = self.approval.invoke(Command(resume="yes"), config, durability="sync")
        if "__interrupt__" in out:
            raise RuntimeError("the run paused again")
        return time.perf_counter() - began


def measure(langgraph: LangGraph, opts: Options, record: Recorder) -> None:
    """Warm up (W3 warms in its own processes), then each workload the plan's times."""
    began, plan = time.perf_counter(), opts.plan
    langgraph.one(langgraph.chain), langgraph.one(langgraph.fan), langgraph.decision()
    log(f"langgraph: warm-up {time.perf_counter() - began:.1f} s")
    if "W1" in opts.only:
        record.add("W1", [langgraph.one(langgraph.chain) for _ in range(plan.w1_runs)])
    if "W2" in opts.only:
        record.add("W2", [langgraph.one(langgraph.fan) for _ in range(plan.w2_runs)])
    if "W3" in opts.only:
        for _ in range(plan.w3_runs):
            elapsed, latencies = many()
            record.add("W3", [W3_RUNS / elapsed], "runs/s", latencies=tuple(latencies),
                       start_phase_s=0.0)  # fmt: skip
    if "W4" in opts.only:
        record.add("W4", [langgraph.decision() for _ in range(plan.w4_runs)])


def main(argv: list[str] | None = None) -> int:
    from langgraph.checkpoint.postgres import PostgresSaver
    from psycopg_pool import ConnectionPool

    opts = options(argv)
    with ConnectionPool(URL, max_size=20, kwargs=CONNECTION, open=True) as pool:
        shared: Any = pool  # as in w3_child
        saver = PostgresSaver(shared)
        saver.setup()
        measure(LangGraph(saver), opts, Recorder("langgraph", opts.round, opts.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
