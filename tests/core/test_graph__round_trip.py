"""The graph codec: decode → to_json → decode is the identity; to_json gives the document back."""

import copy
import json
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.core.graph import (
    ApprovalNode,
    ApprovalPolicy,
    Edge,
    ForeachNode,
    GatherNode,
    Graph,
    GraphFormatError,
    ItemFailure,
    NodeType,
    PolicyKind,
    Reducer,
    StateField,
    TaskNode,
)
from engine.core.validation import validate

type Doc = dict[str, Any]

CONTRACT_EXAMPLE: Doc = {
    "format": "braid.graph/1",
    "name": "Invoice sign-off",
    "state": {
        "invoice": {"reducer": "overwrite"},
        "log": {"reducer": "append"},
        "total": {"reducer": "sum", "default": 0},
    },
    "nodes": [
        {"id": "start", "type": "start"},
        {"id": "split", "type": "fork", "branches": ["finance", "legal"]},
        {"id": "fin", "type": "approval", "groups": ["finance"], "policy": "all",
         "title": "Finance sign-off"},
        {"id": "leg", "type": "approval", "groups": ["legal"], "policy": "all",
         "title": "Legal sign-off"},
        {"id": "both", "type": "gather", "slots": ["finance", "legal"], "conflicts": "error"},
        {"id": "done", "type": "end"},
    ],
    "edges": [
        {"source": "start", "target": "split"},
        {"source": "split", "branch": "finance", "target": "fin"},
        {"source": "split", "branch": "legal", "target": "leg"},
        {"source": "fin", "outcome": "approved", "target": "both", "slot": "finance"},
        {"source": "leg", "outcome": "approved", "target": "both", "slot": "legal"},
        {"source": "both", "target": "done"},
    ],
    "layout": {"start": {"x": 0, "y": 0}},
}  # fmt: skip


def test_the_contract_example_round_trips_exactly() -> None:
    graph = Graph.from_json(copy.deepcopy(CONTRACT_EXAMPLE))
    assert graph.to_json() == CONTRACT_EXAMPLE
    assert Graph.from_json(graph.to_json()) == graph


def test_the_contract_example_decodes_into_typed_values() -> None:
    graph = Graph.from_json(CONTRACT_EXAMPLE)
    assert graph.node("fin") == ApprovalNode(
        id="fin",
        groups=("finance",),
        policy=ApprovalPolicy(kind=PolicyKind.ALL),
        title="Finance sign-off",
    )
    assert graph.state == (
        StateField(name="invoice", reducer=Reducer.OVERWRITE),
        StateField(name="log", reducer=Reducer.APPEND),
        StateField(name="total", reducer=Reducer.SUM, default=0, has_default=True),
    )
    assert graph.edges[3] == Edge(source="fin", target="both", outcome="approved", slot="finance")


def test_absent_optional_fields_stay_absent_and_explicit_defaults_stay_explicit() -> None:
    document = minimal()
    document["nodes"][1] = {"id": "g", "type": "gather", "slots": ["a"]}
    document["nodes"].insert(1, {"id": "f", "type": "fork", "branches": ["a"]})
    document["edges"] = [
        {"source": "start", "target": "f", "outcome": "next"},
        {"source": "f", "target": "g", "branch": "a", "slot": "a"},
        {"source": "g", "target": "end"},
    ]
    graph = Graph.from_json(document)
    assert graph.to_json() == document
    assert (graph.edges[0].outcome, graph.edges[2].outcome, graph.edges[2].follows) == (
        "next",
        None,
        "next",
    )
    gather = graph.node("g")
    assert isinstance(gather, GatherNode)
    assert (gather.conflicts, gather.conflict_policy.value) == (None, "error")


def minimal() -> Doc:
    """Return start → task → end."""
    return {
        "format": "braid.graph/1",
        "nodes": [
            {"id": "start", "type": "start"},
            {"id": "t", "type": "task", "action": "noop"},
            {"id": "end", "type": "end"},
        ],
        "edges": [{"source": "start", "target": "t"}, {"source": "t", "target": "end"}],
    }


def test_an_explicit_null_default_is_kept_apart_from_no_default() -> None:
    document = minimal()
    document["state"] = {
        "a": {"reducer": "overwrite", "default": None},
        "b": {"reducer": "overwrite"},
    }
    graph = Graph.from_json(document)
    assert graph.to_json() == document
    assert [(f.has_default, f.default) for f in graph.state or ()] == [(True, None), (False, None)]


def test_initial_values_follow_the_reducer_unless_a_default_is_declared() -> None:
    fields = [StateField(name=r.value, reducer=r) for r in Reducer]
    assert {f.name: f.initial for f in fields} == {
        "overwrite": None, "append": [], "sum": 0, "min": None, "max": None,
        "merge": {}, "union": [],
    }  # fmt: skip
    assert StateField(name="t", reducer=Reducer.SUM, default=5, has_default=True).initial == 5


def test_the_graph_does_not_share_json_with_its_input_or_its_output() -> None:
    document = minimal()
    document["nodes"][1]["params"] = {"url": "https://x.test", "headers": {"a": ["1"]}}
    graph = Graph.from_json(document)
    document["nodes"][1]["params"]["headers"]["a"].append("2")
    output: dict[str, Any] = graph.to_json()
    output["nodes"][1]["params"]["headers"]["a"].append("3")
    task = graph.node("t")
    assert isinstance(task, TaskNode)
    assert task.params == {"url": "https://x.test", "headers": {"a": ["1"]}}


def test_a_document_with_format_issues_raises_with_every_issue() -> None:
    document = minimal()
    document["nodes"][1]["retry"] = {"max_attempts": "3"}
    document["edges"][0]["colour"] = "red"
    with pytest.raises(GraphFormatError) as caught:
        Graph.from_json(document)
    assert [(i.code.value, i.node, i.edge, i.field) for i in caught.value.issues] == [
        ("field.type", "t", None, "retry.max_attempts"),
        ("field.unknown", None, "start->t", "colour"),
    ]


def test_graph_lookups_follow_outcomes_and_branches() -> None:
    graph = Graph.from_json(CONTRACT_EXAMPLE)
    assert graph.successor("fin", "approved") == graph.edges[3]
    assert graph.successor("fin", "rejected") is None
    assert graph.branch_edge("split", "legal") == graph.edges[2]
    assert graph.outgoing("done") == ()
    assert graph.state_fields["total"].reducer is Reducer.SUM
    with pytest.raises(KeyError):
        graph.node("nope")


def test_each_node_type_declares_its_outcomes() -> None:
    document = copy.deepcopy(CONTRACT_EXAMPLE)
    graph = Graph.from_json(document)
    assert {n.id: sorted(n.outcomes()) for n in graph.nodes} == {
        "start": ["next"], "split": [], "fin": ["approved", "rejected"],
        "leg": ["approved", "rejected"], "both": ["next"], "done": [],
    }  # fmt: skip
    task = TaskNode(id="t", action="scan")
    assert sorted(task.outcomes({"scan": frozenset({"next", "infected"})})) == ["infected", "next"]


def test_defaults_are_applied_only_by_the_read_properties() -> None:
    node = ForeachNode(id="f", items="input.x", variable="x")
    approval = ApprovalNode(id="a", groups=("g",))
    assert (node.max_concurrency, node.failure_policy, approval.decision_policy.kind) == (
        1,
        ItemFailure.FAIL,
        PolicyKind.ALL,
    )
    assert node.to_json() == {"id": "f", "type": "foreach", "items": "input.x", "as": "x"}


def test_an_edge_is_referred_to_by_its_id_or_its_endpoints() -> None:
    assert (
        Edge(source="a", target="b").reference(),
        Edge(id="e1", source="a", target="b").reference(),
    ) == (
        "a->b",
        "e1",
    )
    assert Edge(source="a", target="b", branch="x").follows is None


# Generated valid graphs --------------------------------------------------------------------------

STATE: Doc = {
    "count": {"reducer": "sum", "default": 0},
    "log": {"reducer": "append"},
    "last": {"reducer": "overwrite", "default": None},
    "seen": {"reducer": "union"},
    "meta": {"reducer": "merge", "default": {"a": 1}},
    "low": {"reducer": "min"},
    "high": {"reducer": "max", "default": 5.5},
}
ACTIONS = ["http.request", "sleep", "noop", "fail_sometimes", "python"]
SUFFIXES = ["", "é", "-節", " x"]


class Builder:
    """Builds a structured valid flow block by block, drawing optional fields at random."""

    def __init__(self, draw: st.DrawFn) -> None:
        self.draw = draw
        self.nodes: list[Doc] = []
        self.edges: list[Doc] = []
        self.with_edge_ids = draw(st.booleans())

    def maybe(self) -> bool:
        """Return whether to include an optional field."""
        return self.draw(st.booleans())

    def add(self, node_type: str, **config: Any) -> str:
        """Add a node and return its id."""
        node_id = f"{node_type}{len(self.nodes)}{self.draw(st.sampled_from(SUFFIXES))}"
        node: Doc = {"id": node_id, "type": node_type, **config}
        if self.maybe():
            node["label"] = self.draw(st.text(max_size=5))
        self.nodes.append(node)
        return node_id

    def link(self, exit_: tuple[str, Doc], target: str, **fields: Any) -> None:
        """Connect a pending exit to a target."""
        source, leaving = exit_
        edge: Doc = {"source": source, "target": target, **leaving, **fields}
        if not leaving and self.draw(st.integers(0, 3)) == 0:
            edge["outcome"] = "next"
        if self.with_edge_ids:
            edge["id"] = f"e{len(self.edges)}"
        self.edges.append(edge)


type Exit = tuple[str, Doc]
type Block = Callable[[Builder, Exit, tuple[str, ...]], Exit]


def writes(b: Builder, variables: tuple[str, ...]) -> dict[str, str]:
    """Return set.values that use state and the innermost variable."""
    item = variables[-1] if variables else "'x'"
    options = {"count": "state.count + 1", "log": f"[{item}]", "last": "input", "seen": "[1]"}
    chosen = b.draw(st.lists(st.sampled_from(sorted(options)), unique=True, max_size=3))
    return {key: options[key] for key in chosen}


def task_block(b: Builder, exit_: Exit, variables: tuple[str, ...]) -> Exit:
    """Add a task with random optional fields."""
    config: Doc = {"action": b.draw(st.sampled_from(ACTIONS))}
    if b.maybe():
        config["params"] = {
            "url": "https://x.test",
            "n": b.draw(st.integers()),
            "f": [1.5, None, True],
        }
    if b.maybe():
        config["output"] = "last"
    if b.maybe():
        config["retry"] = {"max_attempts": b.draw(st.integers(1, 5))}
        if b.maybe():
            config["retry"]["backoff_s"] = b.draw(st.sampled_from([0, 2, 0.5]))
    if b.maybe():
        config["timeout_s"] = b.draw(st.sampled_from([1, 30, 2.5]))
    task = b.add("task", **config)
    b.link(exit_, task)
    return task, {}


def set_block(b: Builder, exit_: Exit, variables: tuple[str, ...]) -> Exit:
    """Add a set node."""
    node = b.add("set", values=writes(b, variables))
    b.link(exit_, node)
    return node, {}


def wait_block(b: Builder, exit_: Exit, variables: tuple[str, ...]) -> Exit:
    """Add a wait with seconds or a CEL timestamp."""
    if b.maybe():
        node = b.add("wait", seconds=b.draw(st.sampled_from([0, 30, 0.25])))
    else:
        node = b.add("wait", until="timestamp('2030-01-01T00:00:00Z') + duration('30s')")
    b.link(exit_, node)
    return node, {}


def subflow_block(b: Builder, exit_: Exit, variables: tuple[str, ...]) -> Exit:
    """Add a subflow with optional version, input and output."""
    config: Doc = {"flow": b.draw(st.sampled_from(["credit-check", "kyc_2"]))}
    if b.maybe():
        config["version"] = b.draw(st.integers(1, 9))
    if b.maybe():
        config["input"] = {"id": "input.id", "n": "state.count"}
    if b.maybe():
        config["output"] = {"last": "result"}
    node = b.add("subflow", **config)
    b.link(exit_, node)
    return node, {}


def if_block(b: Builder, exit_: Exit, variables: tuple[str, ...]) -> Exit:
    """Add an if whose outcomes meet again at a join."""
    condition = f"{variables[-1]} != null" if variables else "size(input) > 1"
    decision = b.add("if", condition=condition)
    b.link(exit_, decision)
    if b.maybe():
        b.link((decision, {"outcome": "false"}), b.add("fail", error="Refused."))
        return join(b, [(decision, {"outcome": "true"})], variables)
    return join(b, [(decision, {"outcome": "true"}), (decision, {"outcome": "false"})], variables)


def switch_block(b: Builder, exit_: Exit, variables: tuple[str, ...]) -> Exit:
    """Add a switch whose outcomes meet again at a join."""
    outcomes = b.draw(st.lists(st.sampled_from(["low", "mid", "high"]), min_size=1, unique=True))
    cases = [{"when": f"state.count == {i}", "outcome": o} for i, o in enumerate(outcomes)]
    decision = b.add("switch", cases=cases, default="other")
    b.link(exit_, decision)
    leaving = [(decision, {"outcome": o}) for o in [*outcomes, "other"]]
    return join(b, leaving, variables)


def approval_block(b: Builder, exit_: Exit, variables: tuple[str, ...]) -> Exit:
    """Add an approval whose decisions meet again at a join."""
    config: Doc = {
        "groups": b.draw(st.lists(st.sampled_from(["finance", "legal"]), min_size=1, unique=True))
    }
    if b.maybe():
        config["policy"] = b.draw(st.sampled_from(["all", "any", {"quorum": 2}]))
    if b.maybe():
        config["title"] = (
            "Pay ${state.count} to ${input.who}" if not variables else f"Item ${{{variables[-1]}}}"
        )
    if b.maybe():
        config["instructions"] = "Check it."
    approval = b.add("approval", **config)
    b.link(exit_, approval)
    return join(
        b, [(approval, {"outcome": "approved"}), (approval, {"outcome": "rejected"})], variables
    )


def join(b: Builder, leaving: list[Exit], variables: tuple[str, ...]) -> Exit:
    """Give each exit a step of its own, then meet at one set node."""
    meet = b.add("set", values={})
    for exit_ in leaving:
        step = b.add("set", values=writes(b, variables))
        b.link(exit_, step)
        b.link((step, {}), meet)
    return meet, {}


def fork_block(b: Builder, exit_: Exit, variables: tuple[str, ...]) -> Exit:
    """Add a fork whose branches each fill one slot of a gather."""
    branches = b.draw(st.lists(st.sampled_from(["a", "b", "c", "d"]), min_size=1, unique=True))
    fork = b.add("fork", branches=branches)
    b.link(exit_, fork)
    gather_config: Doc = {"slots": branches}
    if b.maybe():
        gather_config["conflicts"] = "error"
    gather = b.add("gather", **gather_config)
    for branch in branches:
        work = b.add("task", action="noop")
        b.link((fork, {"branch": branch}), work)
        b.link((work, {}), gather, slot=branch)
    return gather, {}


def foreach_block(b: Builder, exit_: Exit, variables: tuple[str, ...]) -> Exit:
    """Add a foreach whose body is a short sequence returning to it."""
    variable = f"item{len(variables)}"
    config: Doc = {"items": "input.lines", "as": variable}
    if b.maybe():
        config["concurrency"] = b.draw(st.integers(1, 8))
    policy = b.draw(st.sampled_from([None, "fail", "skip", "collect"]))
    if policy is not None:
        config["on_item_failure"] = policy
    if policy == "collect" or (policy is None and b.maybe()):
        config["errors"] = "log"
    owner = b.add("foreach", **config)
    b.link(exit_, owner)
    body_exit = sequence(b, (owner, {"outcome": "item"}), (*variables, variable), minimum=1)
    b.link(body_exit, owner)
    return owner, {"outcome": "done"}


def loop_block(b: Builder, exit_: Exit, variables: tuple[str, ...]) -> Exit:
    """Add a loop whose body is a short sequence returning to it."""
    config: Doc = {"while": "state.count < 3", "max_iterations": b.draw(st.integers(1, 10))}
    inner = variables
    if b.maybe():
        config["as"] = f"round{len(variables)}"
        inner = (*variables, config["as"])
    owner = b.add("loop", **config)
    b.link(exit_, owner)
    b.link(sequence(b, (owner, {"outcome": "body"}), inner, minimum=1), owner)
    return owner, {"outcome": "done"}


def race_block(b: Builder, exit_: Exit, variables: tuple[str, ...]) -> Exit:
    """Add a race of branches that return to it; leave by a winner's outcome or `next`."""
    branches = b.draw(st.lists(st.sampled_from(["human", "timer", "bot"]), min_size=1, unique=True))
    race = b.add("race", branches=branches)
    b.link(exit_, race)
    for branch in branches:
        b.link(wait_block(b, (race, {"branch": branch}), variables), race)
    return race, {"outcome": b.draw(st.sampled_from([*branches, "next"]))}


SIMPLE_BLOCKS: list[Block] = [
    task_block,
    set_block,
    wait_block,
    subflow_block,
    if_block,
    switch_block,
    approval_block,
]
NESTING_BLOCKS: list[Block] = [fork_block, foreach_block, loop_block, race_block]


def sequence(b: Builder, exit_: Exit, variables: tuple[str, ...], minimum: int = 0) -> Exit:
    """Add a run of blocks; nest bodies at most two deep."""
    blocks = SIMPLE_BLOCKS + (NESTING_BLOCKS if len(variables) < 2 else [])
    for block in b.draw(st.lists(st.sampled_from(blocks), min_size=minimum, max_size=4)):
        exit_ = block(b, exit_, variables)
    return exit_


@st.composite
def valid_documents(draw: st.DrawFn) -> Doc:
    """Return a structured, valid braid.graph/1 document with random optional fields."""
    b = Builder(draw)
    start = b.add("start")
    b.link(sequence(b, (start, {}), (), minimum=1), b.add("end"))
    document: Doc = {"format": "braid.graph/1"}
    if b.maybe():
        document["name"] = draw(st.text(max_size=10))
    document["state"] = STATE
    document["nodes"], document["edges"] = b.nodes, b.edges
    if b.maybe():
        document["layout"] = {n["id"]: {"x": i * 10, "y": 0.5} for i, n in enumerate(b.nodes)}
    fresh: dict[str, Any] = json.loads(json.dumps(document))  # a fresh, plain JSON document
    return fresh


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(valid_documents())
def test_decode_then_to_json_then_decode_is_the_identity(document: Doc) -> None:
    graph = Graph.from_json(document)
    assert graph.to_json() == document
    assert Graph.from_json(graph.to_json()) == graph


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(valid_documents())
def test_generated_structured_flows_validate_without_errors_or_warnings(document: Doc) -> None:
    report = validate(document)
    assert (report.errors, report.warnings) == ((), ())
    assert report.graph == Graph.from_json(document)


def test_every_node_type_is_generated() -> None:
    produced: set[str] = set()

    @settings(max_examples=200, deadline=None, database=None)
    @given(valid_documents())
    def collect(document: Doc) -> None:
        produced.update(node["type"] for node in document["nodes"])

    collect()
    assert produced == {t.value for t in NodeType}
