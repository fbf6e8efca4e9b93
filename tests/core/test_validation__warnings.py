"""Join warnings: slots that can never fill together, double tokens, and dangling branches."""

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.core.validation import Severity, joins, validate

type Doc = dict[str, Any]
type Found = tuple[str, str | None, str | None]


def node(node_id: str, node_type: str, **config: Any) -> dict[str, Any]:
    """Return a node; `as_`/`while_` stand for the JSON keys `as`/`while`."""
    return {"id": node_id, "type": node_type, **{k.rstrip("_"): v for k, v in config.items()}}


def edge(source: str, target: str, **fields: Any) -> dict[str, Any]:
    """Return an edge."""
    return {"source": source, "target": target, **fields}


def step(node_id: str) -> dict[str, Any]:
    """Return a set node that does nothing (a stand-in for real work)."""
    return node(node_id, "set", values={})


def decide(node_id: str) -> dict[str, Any]:
    """Return an if node."""
    return node(node_id, "if", condition="input.flag")


def flow(nodes: list[dict[str, Any]], edges: list[dict[str, Any]]) -> Doc:
    """Return a document with start and end added around the given nodes."""
    return {
        "format": "braid.graph/1",
        "nodes": [node("start", "start"), *nodes, node("end", "end")],
        "edges": edges,
    }


def warnings(document: Doc) -> list[Found]:
    """Return (code, node, edge) of every warning; the document must have no errors."""
    report = validate(document)
    assert report.errors == ()
    assert all(p.severity is Severity.WARNING for p in report.warnings)
    return [(p.code.value, p.node, p.edge) for p in report.warnings]


# 1. Slots that can never both be filled --------------------------------------------------------


def test_slots_fed_by_the_two_outcomes_of_one_if_can_never_both_fill() -> None:
    document = flow(
        [decide("big"), node("g", "gather", slots=["d", "e"])],
        [
            edge("start", "big"),
            edge("big", "g", outcome="true", slot="d"),
            edge("big", "g", outcome="false", slot="e"),
            edge("g", "end"),
        ],
    )
    assert warnings(document) == [("gather.slot_exclusive", "g", None)]
    assert validate(document).ok


def test_slots_fed_by_two_switch_cases_can_never_both_fill() -> None:
    cases = [{"when": "input.a", "outcome": "a"}, {"when": "input.b", "outcome": "b"}]
    document = flow(
        [
            node("s", "switch", cases=cases, default="other"),
            step("x"),
            node("g", "gather", slots=["x", "y"]),
        ],
        [
            edge("start", "s"),
            edge("s", "x", outcome="a"),
            edge("x", "g", slot="x"),
            edge("s", "g", outcome="b", slot="y"),
            edge("s", "g", outcome="other", slot="y"),
            edge("g", "end"),
        ],
    )
    assert warnings(document) == [("gather.slot_exclusive", "g", None)]


def test_slots_fed_by_an_approvals_decision_can_never_both_fill() -> None:
    document = flow(
        [node("ok", "approval", groups=["finance"]), node("g", "gather", slots=["yes", "no"])],
        [
            edge("start", "ok"),
            edge("ok", "g", outcome="approved", slot="yes"),
            edge("ok", "g", outcome="rejected", slot="no"),
            edge("g", "end"),
        ],
    )
    assert warnings(document) == [("gather.slot_exclusive", "g", None)]


def test_slots_fed_by_nested_exclusive_decisions_can_never_both_fill() -> None:
    document = flow(
        [decide("d"), decide("d2"), node("g", "gather", slots=["i", "j"])],
        [
            edge("start", "d"),
            edge("d", "g", outcome="true", slot="i"),
            edge("d", "d2", outcome="false"),
            edge("d2", "g", outcome="true", slot="i"),
            edge("d2", "g", outcome="false", slot="j"),
            edge("g", "end"),
        ],
    )
    assert warnings(document) == [("gather.slot_exclusive", "g", None)]


def test_slots_fed_by_two_race_winners_can_never_both_fill() -> None:
    document = flow(
        [
            node("r", "race", branches=["a", "b"]),
            node("wa", "wait", seconds=1),
            node("wb", "wait", seconds=2),
            node("g", "gather", slots=["a", "b"]),
        ],
        [
            edge("start", "r"),
            edge("r", "wa", branch="a"),
            edge("wa", "r"),
            edge("r", "wb", branch="b"),
            edge("wb", "r"),
            edge("r", "g", outcome="a", slot="a"),
            edge("r", "g", outcome="b", slot="b"),
            edge("g", "end"),
        ],
    )
    assert warnings(document) == [("gather.slot_exclusive", "g", None)]


def test_an_if_inside_a_foreach_body_makes_its_slots_exclusive_per_item() -> None:
    document = flow(
        [
            node("each", "foreach", items="input.lines", as_="line"),
            node("big", "if", condition="line.amount > 10000"),
            node("g", "gather", slots=["d", "e"]),
        ],
        [
            edge("start", "each"),
            edge("each", "big", outcome="item"),
            edge("big", "g", outcome="true", slot="d"),
            edge("big", "g", outcome="false", slot="e"),
            edge("g", "each"),
            edge("each", "end", outcome="done"),
        ],
    )
    assert warnings(document) == [("gather.slot_exclusive", "g", None)]


# 2. Two tokens for one slot --------------------------------------------------------------------


def test_two_fork_branches_into_one_slot_can_deliver_two_tokens() -> None:
    document = flow(
        [node("f", "fork", branches=["a", "b", "c"]), node("g", "gather", slots=["s", "t"])],
        [
            edge("start", "f"),
            edge("f", "g", branch="a", slot="s"),
            edge("f", "g", branch="b", slot="s", id="second"),
            edge("f", "g", branch="c", slot="t"),
            edge("g", "end"),
        ],
    )
    assert warnings(document) == [("gather.slot_double", "g", "second")]


def test_branches_that_meet_before_a_slot_can_deliver_two_tokens() -> None:
    document = flow(
        [
            node("f", "fork", branches=["a", "b", "c"]),
            step("meet"),
            node("g", "gather", slots=["s", "t"]),
        ],
        [
            edge("start", "f"),
            edge("f", "meet", branch="a"),
            edge("f", "meet", branch="b"),
            edge("meet", "g", slot="s"),
            edge("f", "g", branch="c", slot="t"),
            edge("g", "end"),
        ],
    )
    assert warnings(document) == [("gather.slot_double", "g", "meet->g")]


def test_a_decision_passed_by_two_tokens_does_not_make_its_outcomes_exclusive() -> None:
    document = flow(
        [
            node("f", "fork", branches=["a", "b"]),
            step("meet"),
            decide("c"),
            node("g", "gather", slots=["x", "y"]),
        ],
        [
            edge("start", "f"),
            edge("f", "meet", branch="a"),
            edge("f", "meet", branch="b"),
            edge("meet", "c"),
            edge("c", "g", outcome="true", slot="x", id="yes"),
            edge("c", "g", outcome="false", slot="y", id="no"),
            edge("g", "end"),
        ],
    )
    assert warnings(document) == [
        ("gather.slot_double", "g", "yes"),
        ("gather.slot_double", "g", "no"),
    ]


# 3. Branches that are never joined --------------------------------------------------------------


def test_a_fork_branch_that_reaches_no_gather_and_no_end_dangles() -> None:
    document = flow(
        [
            node("f", "fork", branches=["main", "side"]),
            step("log"),
            node("oops", "fail", error="x"),
        ],
        [
            edge("start", "f"),
            edge("f", "end", branch="main"),
            edge("f", "log", branch="side"),
            edge("log", "oops"),
        ],
    )
    assert warnings(document) == [("fork.branch_dangling", "f", "f->log")]


def test_a_fork_branch_that_just_stops_dangles() -> None:
    document = flow(
        [node("f", "fork", branches=["main", "side"]), step("log")],
        [edge("start", "f"), edge("f", "end", branch="main"), edge("f", "log", branch="side")],
    )
    assert warnings(document) == [("fork.branch_dangling", "f", "f->log")]


# Must not warn ----------------------------------------------------------------------------------


def test_b_and_d_or_e_with_d_and_e_the_outcomes_of_one_if_in_one_slot_is_fine() -> None:
    document = flow(
        [
            node("f", "fork", branches=["b", "x"]),
            decide("c"),
            step("d"),
            step("e"),
            node("g", "gather", slots=["b", "de"]),
        ],
        [
            edge("start", "f"),
            edge("f", "g", branch="b", slot="b"),
            edge("f", "c", branch="x"),
            edge("c", "d", outcome="true"),
            edge("c", "e", outcome="false"),
            edge("d", "g", slot="de"),
            edge("e", "g", slot="de"),
            edge("g", "end"),
        ],
    )
    assert warnings(document) == []


def test_an_if_inside_one_branch_against_a_sibling_branch_is_fine() -> None:
    document = flow(
        [
            node("f", "fork", branches=["a", "b"]),
            decide("c"),
            step("t"),
            step("u"),
            node("g", "gather", slots=["x", "y"]),
        ],
        [
            edge("start", "f"),
            edge("f", "c", branch="a"),
            edge("c", "t", outcome="true"),
            edge("c", "u", outcome="false"),
            edge("t", "g", slot="x"),
            edge("u", "g", slot="x"),
            edge("f", "g", branch="b", slot="y"),
            edge("g", "end"),
        ],
    )
    assert warnings(document) == []


def test_a_decision_before_the_fork_lets_both_branches_fill_their_slots() -> None:
    document = flow(
        [
            decide("c"),
            node("f", "fork", branches=["a", "b"]),
            node("g", "gather", slots=["a", "b"]),
        ],
        [
            edge("start", "c"),
            edge("c", "f", outcome="true"),
            edge("c", "end", outcome="false"),
            edge("f", "g", branch="a", slot="a"),
            edge("f", "g", branch="b", slot="b"),
            edge("g", "end"),
        ],
    )
    assert warnings(document) == []


def test_staged_gathers_are_fine() -> None:
    document = flow(
        [
            node("f", "fork", branches=["a", "b", "c"]),
            node("ab", "gather", slots=["a", "b"]),
            node("abc", "gather", slots=["ab", "c"]),
        ],
        [
            edge("start", "f"),
            edge("f", "ab", branch="a", slot="a"),
            edge("f", "ab", branch="b", slot="b"),
            edge("ab", "abc", slot="ab"),
            edge("f", "abc", branch="c", slot="c"),
            edge("abc", "end"),
        ],
    )
    assert warnings(document) == []


def test_cross_merging_gathers_are_fine() -> None:
    document = flow(
        [
            node("f", "fork", branches=["left", "right"]),
            node("fl", "fork", branches=["b", "c"]),
            node("fr", "fork", branches=["e", "f"]),
            node("be", "gather", slots=["b", "e"]),
            node("cf", "gather", slots=["c", "f"]),
            node("all", "gather", slots=["be", "cf"]),
        ],
        [
            edge("start", "f"),
            edge("f", "fl", branch="left"),
            edge("f", "fr", branch="right"),
            edge("fl", "be", branch="b", slot="b"),
            edge("fr", "be", branch="e", slot="e"),
            edge("fl", "cf", branch="c", slot="c"),
            edge("fr", "cf", branch="f", slot="f"),
            edge("be", "all", slot="be"),
            edge("cf", "all", slot="cf"),
            edge("all", "end"),
        ],
    )
    assert warnings(document) == []


def test_a_fork_and_gather_inside_a_foreach_body_are_fine() -> None:
    document = flow(
        [
            node("each", "foreach", items="input.lines", as_="line"),
            node("f", "fork", branches=["a", "b"]),
            node("g", "gather", slots=["a", "b"]),
        ],
        [
            edge("start", "each"),
            edge("each", "f", outcome="item"),
            edge("f", "g", branch="a", slot="a"),
            edge("f", "g", branch="b", slot="b"),
            edge("g", "each"),
            edge("each", "end", outcome="done"),
        ],
    )
    assert warnings(document) == []


def test_a_fork_branch_returning_to_its_foreach_is_not_dangling() -> None:
    document = flow(
        [
            node("each", "foreach", items="input.lines", as_="line"),
            node("f", "fork", branches=["a", "b"]),
            node("g", "gather", slots=["a"]),
        ],
        [
            edge("start", "each"),
            edge("each", "f", outcome="item"),
            edge("f", "g", branch="a", slot="a"),
            edge("f", "each", branch="b"),
            edge("g", "each"),
            edge("each", "end", outcome="done"),
        ],
    )
    assert warnings(document) == []


def test_a_fork_branch_reaching_an_end_is_not_dangling() -> None:
    document = flow(
        [node("f", "fork", branches=["a", "b"]), step("side")],
        [
            edge("start", "f"),
            edge("f", "end", branch="a"),
            edge("f", "side", branch="b"),
            edge("side", "end"),
        ],
    )
    assert warnings(document) == []


def test_warnings_do_not_stop_a_flow_from_being_valid() -> None:
    document = flow(
        [node("f", "fork", branches=["main", "side"]), step("log")],
        [edge("start", "f"), edge("f", "end", branch="main"), edge("f", "log", branch="side")],
    )
    report = validate(document)
    assert (report.ok, len(report.warnings), report.to_json()["warnings"]) == (
        True,
        1,
        [
            {
                "code": "fork.branch_dangling",
                "severity": "warning",
                "message": (
                    "Branch `side` of fork `f` reaches no gather and no end, so its work is never "
                    "joined; lead it into a gather slot or an end."
                ),
                "node": "f",
                "edge": "f->log",
                "edge_index": 2,
                "field": None,
                "position": None,
            }
        ],
    )


# 4. Only the pairs that can be exclusive are tried ---------------------------------------------


def random_tree_into_one_gather(random: Any) -> Doc:
    """Return a flow: a random tree of ifs, forks and steps from start, every leaf into a
    slot of one gather (several leaves may share a slot), then end."""
    nodes: list[dict[str, Any]] = []
    edges: list[dict[str, Any]] = []
    leaves: list[tuple[str, dict[str, Any]]] = []  # (source, the edge's fields)
    frontier: list[tuple[str, dict[str, Any]]] = [("start", {})]
    while frontier and len(nodes) < 14:
        source, fields = frontier.pop(random.randrange(len(frontier)))
        kind = random.choice(["if", "fork", "step", "leaf", "leaf"])
        if kind == "leaf":
            leaves.append((source, fields))
            continue
        name = f"n{len(nodes)}"
        edges.append(edge(source, name, **fields))
        if kind == "if":
            nodes.append(decide(name))
            frontier += [(name, {"outcome": "true"}), (name, {"outcome": "false"})]
        elif kind == "fork":
            branches = [f"b{i}" for i in range(random.randint(2, 3))]
            nodes.append(node(name, "fork", branches=branches))
            frontier += [(name, {"branch": branch}) for branch in branches]
        else:
            nodes.append(step(name))
            frontier.append((name, {}))
    leaves += frontier
    slots = [f"s{random.randrange(4)}" for _ in leaves]
    used = sorted(set(slots))
    for number, ((source, fields), slot) in enumerate(zip(leaves, slots, strict=True)):
        edges.append(edge(source, "g", slot=slot, id=f"into{number}", **fields))
    nodes.append(node("g", "gather", slots=used))
    return flow(nodes, [*edges, edge("g", "end")])


@given(st.randoms(use_true_random=False))
@settings(max_examples=300, deadline=None)
def test_the_exclusive_slot_pairs_are_those_that_trying_every_pair_finds(random: Any) -> None:
    document = random_tree_into_one_gather(random)
    filtered = validate(document).warnings

    def every_pair(self: Any, meets: list[int]) -> set[tuple[int, int]]:
        return {(i, j) for i in range(len(meets)) for j in range(i + 1, len(meets))}

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(joins.JoinAnalysis, "_maybe_exclusive", every_pair)
        everything = validate(document).warnings
    assert filtered == everything


def test_a_fork_of_five_thousand_branches_into_one_gather_has_no_warning() -> None:
    # Trying every pair of its slots took 31.7 s; bench/bench_validate.py times it now.
    width = 5_000
    document = flow(
        [node("f", "fork", branches=[f"b{i}" for i in range(width)]),
         node("g", "gather", slots=[f"s{i}" for i in range(width)])],
        [edge("start", "f"),
         *(edge("f", "g", branch=f"b{i}", slot=f"s{i}") for i in range(width)),
         edge("g", "end")],
    )  # fmt: skip
    report = validate(document)
    assert (report.errors, report.warnings) == ((), ())
