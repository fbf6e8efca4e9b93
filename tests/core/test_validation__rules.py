"""Validation rules: each rule reports its exact code at the exact node, edge and field."""

from itertools import pairwise
from typing import Any

import pytest

from engine.core.expression_errors import Position
from engine.core.graph import FormatCode, Graph
from engine.core.validation import (
    BUILTIN_ACTIONS,
    MAX_EDGES,
    MAX_NODES,
    ProblemCode,
    Severity,
    validate,
)

type Doc = dict[str, Any]
type Found = tuple[str, str | None, str | None, str | None]


def node(node_id: str, node_type: str, **config: Any) -> dict[str, Any]:
    """Return a node; `as_`/`while_` stand for the JSON keys `as`/`while`."""
    return {"id": node_id, "type": node_type, **{k.rstrip("_"): v for k, v in config.items()}}


def edge(source: str, target: str, **fields: Any) -> dict[str, Any]:
    """Return an edge."""
    return {"source": source, "target": target, **fields}


def chain(*ids: str) -> list[dict[str, Any]]:
    """Return `next` edges along ids."""
    return [edge(a, b) for a, b in pairwise(ids)]


def flow(nodes: list[dict[str, Any]], edges: list[dict[str, Any]], **extra: Any) -> Doc:
    """Return a document."""
    return {"format": "braid.graph/1", "nodes": nodes, "edges": edges, **extra}


def simple(*middle: dict[str, Any], **extra: Any) -> Doc:
    """Return start → middle nodes → end, chained by `next` edges."""
    nodes = [node("start", "start"), *middle, node("end", "end")]
    return flow(nodes, chain(*(n["id"] for n in nodes)), **extra)


def errors(document: object, actions: dict[str, frozenset[str]] | None = None) -> list[Found]:
    """Return (code, node, edge, field) of every error."""
    report = validate(document, actions)
    assert all(p.severity is Severity.ERROR for p in report.errors)
    return [(p.code.value, p.node, p.edge, p.field) for p in report.errors]


# Starts, reachability, ends ------------------------------------------------------------------


def test_a_minimal_flow_is_valid_and_keeps_its_graph() -> None:
    report = validate(simple())
    assert (report.ok, report.errors, report.warnings) == (True, (), ())
    assert report.graph == Graph.from_json(simple())


def test_a_flow_without_a_start_is_rejected_once() -> None:
    assert errors(flow([node("end", "end")], [])) == [("graph.start_count", None, None, None)]


def test_every_start_of_a_flow_with_two_starts_is_named() -> None:
    document = flow(
        [node("a", "start"), node("b", "start"), node("end", "end")],
        [edge("a", "end"), edge("b", "end")],
    )
    assert errors(document) == [
        ("graph.start_count", "a", None, None),
        ("graph.start_count", "b", None, None),
    ]


def test_a_node_the_start_cannot_reach_is_unreachable() -> None:
    document = simple()
    document["nodes"].append(node("lost", "set", values={}))
    assert errors(document) == [("node.unreachable", "lost", None, None)]


def test_a_flow_whose_start_reaches_no_end_is_rejected() -> None:
    document = flow(
        [node("start", "start"), node("stop", "fail", error="x")], chain("start", "stop")
    )
    assert errors(document) == [("graph.no_reachable_end", None, None, None)]


def test_an_end_that_only_unreachable_nodes_lead_to_does_not_count() -> None:
    document = flow(
        [node("start", "start"), node("stop", "fail", error="x"), node("end", "end")],
        chain("start", "stop"),
    )
    assert errors(document) == [
        ("node.unreachable", "end", None, None),
        ("graph.no_reachable_end", None, None, None),
    ]


# Types and config -----------------------------------------------------------------------------


def test_an_unknown_node_type_is_rejected_without_cascading() -> None:
    document = simple(node("x", "teleport"))
    assert errors(document) == [("node.type_unknown", "x", None, "type")]
    assert validate(document).graph is None


def test_a_missing_config_field_is_named() -> None:
    assert errors(simple(node("c", "set"))) == [("field.missing", "c", None, "values")]


def test_an_ill_typed_config_field_is_named() -> None:
    document = simple(node("t", "task", action="noop", timeout_s="soon"))
    assert errors(document) == [("field.type", "t", None, "timeout_s")]


def test_a_nested_config_field_is_named_by_its_path() -> None:
    document = simple(node("t", "task", action="noop", retry={"max_attempts": 0, "jitter": 1}))
    assert errors(document) == [
        ("field.value", "t", None, "retry.max_attempts"),
        ("field.unknown", "t", None, "retry.jitter"),
    ]


def test_repeated_names_are_each_named_once_in_order() -> None:
    groups = ["legal", "fin", "legal", "ops", "fin"]
    report = validate(simple(node("a", "approval", title="Pay?", groups=groups)))
    repeated = [p for p in report.errors if p.code.value == "field.value"]
    assert [(p.node, p.field, p.message) for p in repeated] == [
        ("a", "groups", "`groups` repeats `fin`, `legal`.")
    ]


def test_a_field_of_another_node_type_is_unknown_on_this_one() -> None:
    document = simple(node("t", "task", action="noop", condition="true"))
    assert errors(document) == [("field.unknown", "t", None, "condition")]


@pytest.mark.parametrize(
    ("config", "expected"),
    [
        ({"groups": ["g"], "policy": "most"}, "approval.policy_invalid"),
        ({"groups": ["g"], "policy": {"quorum": 0}}, "approval.policy_invalid"),
        ({"groups": ["g"], "policy": {"quorum": "2"}}, "approval.policy_invalid"),
        ({"groups": ["g"], "policy": {"quorum": True}}, "approval.policy_invalid"),
        ({"groups": []}, "field.value"),
        ({"groups": ["g", "g"]}, "field.value"),
    ],
)
def test_approval_config_is_checked(config: dict[str, Any], expected: str) -> None:
    document = flow(
        [node("start", "start"), node("a", "approval", **config), node("end", "end")],
        [
            edge("start", "a"),
            edge("a", "end", outcome="approved"),
            edge("a", "end", outcome="rejected"),
        ],
    )
    field = "policy" if expected.startswith("approval") else "groups"
    assert errors(document) == [(expected, "a", None, field)]


def test_an_approval_quorum_of_one_or_more_is_valid() -> None:
    document = flow(
        [
            node("start", "start"),
            node("a", "approval", groups=["g"], policy={"quorum": 2}),
            node("end", "end"),
        ],
        [
            edge("start", "a"),
            edge("a", "end", outcome="approved"),
            edge("a", "end", outcome="rejected"),
        ],
    )
    assert errors(document) == []


def test_gather_conflicts_only_accepts_error() -> None:
    document = forked_gather(conflicts="last_write_wins")
    assert errors(document) == [("gather.conflicts_invalid", "g", None, "conflicts")]


def forked_gather(**gather_config: Any) -> Doc:
    """Return start → fork(a, b) → gather(a, b) → end."""
    return flow(
        [
            node("start", "start"),
            node("f", "fork", branches=["a", "b"]),
            node("g", "gather", slots=["a", "b"], **gather_config),
            node("end", "end"),
        ],
        [
            edge("start", "f"),
            edge("f", "g", branch="a", slot="a"),
            edge("f", "g", branch="b", slot="b"),
            edge("g", "end"),
        ],
    )


def foreach_flow(**config: Any) -> Doc:
    """Return start → foreach(item → work → back) → end."""
    settings = {"items": "input.lines", "as_": "line", **config}
    return flow(
        [
            node("start", "start"),
            node("each", "foreach", **settings),
            node("work", "set", values={}),
            node("end", "end"),
        ],
        [
            edge("start", "each"),
            edge("each", "work", outcome="item"),
            edge("work", "each"),
            edge("each", "end", outcome="done"),
        ],
        state={"log": {"reducer": "append"}, "last": {"reducer": "overwrite"}},
    )


@pytest.mark.parametrize(
    ("config", "expected"),
    [
        ({"concurrency": 0}, ("foreach.concurrency_invalid", "concurrency")),
        ({"concurrency": "8"}, ("field.type", "concurrency")),
        ({"concurrency": 2.0}, ("field.type", "concurrency")),
        ({"on_item_failure": "retry"}, ("field.value", "on_item_failure")),
        ({"on_item_failure": "collect"}, ("field.missing", "errors")),
        ({"as_": "state"}, ("field.value", "as")),
        ({"as_": "my-line"}, ("field.value", "as")),
    ],
)
def test_foreach_config_is_checked(config: dict[str, Any], expected: tuple[str, str]) -> None:
    code, field = expected
    assert errors(foreach_flow(**config)) == [(code, "each", None, field)]


def test_foreach_errors_must_be_an_append_field() -> None:
    document = foreach_flow(on_item_failure="collect", errors="last")
    assert errors(document) == [("foreach.errors_not_append", "each", None, "errors")]


def test_foreach_errors_in_an_append_field_is_valid() -> None:
    assert errors(foreach_flow(on_item_failure="collect", errors="log")) == []


def loop_flow(**config: Any) -> Doc:
    """Return start → loop(body → pause → back) → end."""
    settings = {"while_": "true", "max_iterations": 3, **config}
    return flow(
        [
            node("start", "start"),
            node("lp", "loop", **settings),
            node("pause", "wait", seconds=1),
            node("end", "end"),
        ],
        [
            edge("start", "lp"),
            edge("lp", "pause", outcome="body"),
            edge("pause", "lp"),
            edge("lp", "end", outcome="done"),
        ],
    )


@pytest.mark.parametrize(
    ("config", "expected"),
    [
        ({"max_iterations": 0}, ("loop.max_iterations_invalid", "max_iterations")),
        ({"max_iterations": True}, ("field.type", "max_iterations")),
        ({"max_iterations": None}, ("field.type", "max_iterations")),
    ],
)
def test_loop_max_iterations_is_an_integer_of_at_least_one(
    config: dict[str, Any], expected: tuple[str, str]
) -> None:
    assert errors(loop_flow(**config)) == [(expected[0], "lp", None, expected[1])]


def test_a_loop_without_max_iterations_is_rejected() -> None:
    document = loop_flow()
    del document["nodes"][1]["max_iterations"]
    assert errors(document) == [("field.missing", "lp", None, "max_iterations")]


@pytest.mark.parametrize(
    "config",
    [{}, {"seconds": 5, "until": "timestamp('2030-01-01T00:00:00Z')"}],
)
def test_a_wait_needs_exactly_one_of_seconds_and_until(config: dict[str, Any]) -> None:
    assert errors(simple(node("w", "wait", **config))) == [("wait.timing_invalid", "w", None, None)]


def test_a_wait_until_a_cel_timestamp_is_valid() -> None:
    document = simple(node("w", "wait", until="timestamp(input.deadline) + duration('1h')"))
    assert errors(document) == []


def test_a_negative_wait_is_rejected() -> None:
    assert errors(simple(node("w", "wait", seconds=-1))) == [("field.value", "w", None, "seconds")]


@pytest.mark.parametrize("slug", ["Invoice approval", "a/b", "übung"])
def test_subflow_flow_must_be_a_slug(slug: str) -> None:
    document = simple(node("s", "subflow", flow=slug))
    assert errors(document) == [("subflow.flow_invalid", "s", None, "flow")]


def test_a_subflow_with_input_and_output_is_valid() -> None:
    document = simple(
        node(
            "s",
            "subflow",
            flow="credit-check",
            version=2,
            input={"id": "input.id"},
            output={"score": "result"},
        ),
        state={"score": {"reducer": "overwrite"}},
    )
    assert errors(document) == []


def test_a_switch_needs_cases_and_a_default() -> None:
    document = simple(node("s", "switch", cases=[]))
    assert errors(document) == [
        ("field.value", "s", None, "cases"),
        ("field.missing", "s", None, "default"),
    ]


def test_a_malformed_switch_case_is_named_by_index() -> None:
    document = simple(node("s", "switch", cases=[{"when": "true"}, "x"], default="next"))
    assert errors(document) == [
        ("field.missing", "s", None, "cases[0].outcome"),
        ("field.type", "s", None, "cases[1]"),
    ]


# CEL ------------------------------------------------------------------------------------------


def test_cel_that_does_not_parse_is_reported_with_its_position() -> None:
    document = simple(node("c", "set", values={"n": "1 +\n  * 2"}), state={"n": {"reducer": "sum"}})
    report = validate(document)
    assert [(p.code, p.node, p.field, p.position) for p in report.errors] == [
        (ProblemCode.EXPRESSION_SYNTAX, "c", "values.n", Position(line=2, column=3, offset=6))
    ]


def test_a_template_part_that_does_not_parse_is_reported_in_the_whole_text() -> None:
    document = approval_flow(title="Pay ${input.amount +} now")
    report = validate(document)
    assert [(p.code, p.node, p.field, p.position) for p in report.errors] == [
        (ProblemCode.EXPRESSION_SYNTAX, "a", "title", Position(line=1, column=21, offset=20))
    ]


def test_an_unclosed_template_part_is_reported_at_its_opening() -> None:
    report = validate(approval_flow(instructions="See ${input.url"))
    assert [(p.code, p.field, p.position) for p in report.errors] == [
        (ProblemCode.EXPRESSION_SYNTAX, "instructions", Position(line=1, column=5, offset=4))
    ]


def approval_flow(**config: Any) -> Doc:
    """Return start → approval → end (both outcomes)."""
    return flow(
        [
            node("start", "start"),
            node("a", "approval", groups=["finance"], **config),
            node("end", "end"),
        ],
        [
            edge("start", "a"),
            edge("a", "end", outcome="approved"),
            edge("a", "end", outcome="rejected"),
        ],
    )


def test_reading_an_undeclared_state_field_is_rejected_at_its_position() -> None:
    document = flow(
        [
            node("start", "start"),
            node("c", "if", condition="input.ok && state.totl > 1"),
            node("end", "end"),
        ],
        [edge("start", "c"), edge("c", "end", outcome="true"), edge("c", "end", outcome="false")],
        state={"total": {"reducer": "sum"}},
    )
    report = validate(document)
    assert [(p.code, p.node, p.field, p.position) for p in report.errors] == [
        (
            ProblemCode.STATE_READ_UNDECLARED,
            "c",
            "condition",
            Position(line=1, column=13, offset=12),
        )
    ]


def test_reading_a_state_field_by_index_is_checked_too() -> None:
    document = simple(
        node("s", "set", values={"n": "state['m'] + 1"}), state={"n": {"reducer": "sum"}}
    )
    assert errors(document) == [("state.read_undeclared", "s", None, "values.n")]


def test_a_name_that_is_not_in_scope_is_rejected() -> None:
    document = simple(
        node("s", "set", values={"n": "line.amount"}), state={"n": {"reducer": "sum"}}
    )
    assert errors(document) == [("expression.unknown_variable", "s", None, "values.n")]


def test_the_foreach_variable_is_in_scope_inside_its_body_only() -> None:
    document = foreach_flow()
    document["nodes"][2]["values"] = {"log": "[line.id]"}
    document["nodes"][1]["items"] = "line.children"
    assert errors(document) == [("expression.unknown_variable", "each", None, "items")]


# No cascades: an error in an owner's config leaves its body's scope whole --------------------


@pytest.mark.parametrize(
    ("config", "expected"),
    [
        ({"on_item_failure": "collect"}, ("field.missing", "each", None, "errors")),
        ({"items": 3}, ("field.type", "each", None, "items")),
        ({"concurrency": 0}, ("foreach.concurrency_invalid", "each", None, "concurrency")),
        ({"bogus": 1}, ("field.unknown", "each", None, "bogus")),
        # A wrong `as` is the one error: the body's names cannot be judged against it.
        ({"as_": "my-line"}, ("field.value", "each", None, "as")),
    ],
)
def test_a_foreach_config_error_does_not_also_report_its_variable_undefined_in_the_body(
    config: dict[str, Any], expected: Found
) -> None:
    document = foreach_flow(**config)
    document["nodes"][2]["values"] = {"log": "[line.id]"}
    assert errors(document) == [expected]


def test_a_foreach_config_error_still_reports_a_truly_unknown_name_in_its_body() -> None:
    document = foreach_flow(on_item_failure="collect")
    document["nodes"][2]["values"] = {"log": "[line.id, lime]"}
    assert errors(document) == [
        ("field.missing", "each", None, "errors"),
        ("expression.unknown_variable", "work", None, "values.log"),
    ]


def test_a_loop_config_error_does_not_also_report_its_variable_undefined_in_the_body() -> None:
    document = loop_flow(as_="round", max_iterations=0)
    document["nodes"][2] = node("pause", "wait", until="timestamp(input.start) + "
                                "duration(string(round) + 'm')")  # fmt: skip
    assert errors(document) == [("loop.max_iterations_invalid", "lp", None, "max_iterations")]


def test_a_damaged_back_edge_does_not_also_report_that_the_body_never_returns() -> None:
    document = foreach_flow()
    document["edges"][2]["bogus"] = 1
    assert errors(document) == [("field.unknown", None, "work->each", "bogus")]


def test_comprehension_variables_and_type_names_are_not_unknown() -> None:
    expression = (
        "input.lines.filter(l, l.amount > 1).map(l, int(l.amount)).size() > 0 && type(1) == int"
    )
    assert (
        errors(
            simple(
                node("c", "set", values={"ok": expression}), state={"ok": {"reducer": "overwrite"}}
            )
        )
        == []
    )


def test_the_loop_variable_is_in_scope_inside_its_body() -> None:
    document = loop_flow(as_="round")
    document["nodes"][2] = node(
        "pause", "wait", until="timestamp(input.start) + duration(string(round) + 'm')"
    )
    assert errors(document) == []


# Edges ----------------------------------------------------------------------------------------


def test_an_edge_to_an_unknown_node_is_rejected() -> None:
    document = simple()
    document["edges"][0]["target"] = "nowhere"
    assert errors(document) == [
        ("edge.unknown_target", None, "start->nowhere", None),
        ("node.unreachable", "end", None, None),
        ("graph.no_reachable_end", None, None, None),
    ]


def test_an_edge_from_an_unknown_node_is_rejected() -> None:
    document = simple()
    document["edges"].append(edge("ghost", "end"))
    assert errors(document) == [("edge.unknown_source", None, "ghost->end", None)]


def test_an_edge_with_an_id_is_named_by_its_id_and_index() -> None:
    document = simple()
    document["edges"].append(edge("ghost", "end", id="e-9"))
    report = validate(document)
    assert [(p.edge, p.edge_index) for p in report.errors] == [("e-9", 1)]


def test_two_successors_for_one_outcome_are_rejected() -> None:
    document = simple(node("t", "task", action="noop"), node("u", "task", action="noop"))
    document["edges"].append(edge("t", "end", outcome="next"))
    assert errors(document) == [("edge.duplicate_successor", "t", "t->end", None)]


def test_an_outcome_an_if_cannot_produce_is_rejected() -> None:
    document = flow(
        [node("start", "start"), node("c", "if", condition="true"), node("end", "end")],
        [edge("start", "c"), edge("c", "end", outcome="true"), edge("c", "end", outcome="maybe")],
    )
    assert errors(document) == [("edge.outcome_invalid", "c", "c->end", None)]


def test_item_out_of_a_task_is_rejected() -> None:
    document = simple(node("t", "task", action="noop"))
    document["edges"][1]["outcome"] = "item"
    assert errors(document) == [("edge.outcome_invalid", "t", "t->end", None)]


def test_an_edge_out_of_an_end_is_rejected() -> None:
    document = simple()
    document["nodes"].append(node("after", "end"))
    document["edges"].append(edge("end", "after"))
    assert errors(document) == [("edge.outcome_invalid", "end", "end->after", None)]


def test_an_ordinary_edge_out_of_a_fork_is_rejected() -> None:
    document = forked_gather()
    document["edges"].append(edge("f", "end"))
    assert errors(document) == [("edge.outcome_invalid", "f", "f->end", None)]


def test_an_action_may_declare_more_outcomes() -> None:
    document = flow(
        [
            node("start", "start"),
            node("t", "task", action="scan"),
            node("end", "end"),
            node("bad", "fail", error="virus"),
        ],
        [edge("start", "t"), edge("t", "end"), edge("t", "bad", outcome="infected")],
    )
    assert errors(document, {"scan": frozenset({"infected"})}) == []
    assert errors(document, {"scan": frozenset({"next"})}) == [
        ("edge.outcome_invalid", "t", "t->bad", None)
    ]


def test_an_unregistered_action_is_rejected() -> None:
    document = simple(node("t", "task", action="launch_rockets"))
    assert errors(document) == [("task.action_unknown", "t", None, "action")]


def test_a_task_may_name_a_builtin_action_when_no_catalog_is_given() -> None:
    # That BUILTIN_ACTIONS is the registry's catalog is held in tests/django
    # (test_validation__builtin_actions.py): the registry lives in engine/actions.py.
    assert {"sleep", "python"} <= BUILTIN_ACTIONS.keys()
    assert errors(simple(*(node(n, "task", action=n) for n in ("sleep", "python")))) == []


def test_an_http_request_with_a_literal_method_outside_the_seven_is_rejected() -> None:
    methods = ["MSET key value", "get", "CONNECT", "GET\r\nX: y", 7, None]
    document = simple(*(
        node(f"t{i}", "task", action="http.request", params={"url": "https://a.test/", "method": m})
        for i, m in enumerate(methods)
    ))  # fmt: skip
    assert errors(document) == [
        ("task.http_method_invalid", f"t{i}", None, "params.method") for i in range(len(methods))
    ]
    assert validate(document).errors[0].message == (
        "Task `t0`: method 'MSET key value' is not one of GET, HEAD, POST, PUT, PATCH, DELETE, "
        "OPTIONS."
    )


def test_an_http_request_method_or_header_computed_by_cel_is_left_to_send_time() -> None:
    params = {"url": "https://a.test/", "method": "${input.m}", "headers": {"X-A": "${input.a}"}}
    sent = [node(f"t{m}", "task", action="http.request", params={**params, "method": m})
            for m in ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")]  # fmt: skip
    assert errors(simple(node("t", "task", action="http.request", params=params), *sent)) == []


def test_an_http_request_header_that_is_not_a_token_or_holds_a_line_break_is_rejected() -> None:
    headers = {"X A": "1", "X-B": "a\nb", "X-C": "a\x00", "Host": "x", "X-D": 4, "X-Ok": "fine"}
    document = simple(node("t", "task", action="http.request",
                           params={"url": "https://a.test/", "headers": headers}))  # fmt: skip
    assert errors(document) == [
        ("task.http_header_invalid", "t", None, f"params.headers.{name}")
        for name in ("X A", "X-B", "X-C", "Host", "X-D")
    ]


def test_http_request_params_are_checked_only_when_the_catalog_has_the_builtin_action() -> None:
    document = simple(node("t", "task", action="http.request", params={"method": "MSET"}))
    assert errors(document, {"http.request": frozenset({"next"})}) == [
        ("task.http_method_invalid", "t", None, "params.method")
    ]
    assert errors(document, {"other": frozenset({"next"})}) == [
        ("task.action_unknown", "t", None, "action")
    ]


def test_an_edge_with_both_branch_and_outcome_is_rejected() -> None:
    document = forked_gather()
    document["edges"][1]["outcome"] = "next"
    # The damaged edge is dropped, but the branch and slot it would fill are not reported missing.
    assert errors(document) == [("edge.branch_with_outcome", None, "f->g", "outcome")]


# Branches and slots ---------------------------------------------------------------------------


def test_a_slot_on_an_edge_into_a_non_gather_is_rejected() -> None:
    document = simple(node("t", "task", action="noop"))
    document["edges"][1]["slot"] = "a"
    assert errors(document) == [("edge.slot_not_allowed", "end", "t->end", None)]


def test_a_gather_edge_without_a_slot_is_rejected() -> None:
    document = forked_gather()
    del document["edges"][2]["slot"]
    assert errors(document) == [
        ("gather.slot_missing", "g", "f->g", None),
        ("gather.slot_unfed", "g", None, "slots"),
    ]


def test_an_undeclared_slot_is_rejected() -> None:
    document = forked_gather()
    document["edges"][2]["slot"] = "c"
    assert errors(document) == [
        ("gather.slot_undeclared", "g", "f->g", None),
        ("gather.slot_unfed", "g", None, "slots"),
    ]


def test_a_branch_edge_from_a_task_is_rejected() -> None:
    document = simple(node("t", "task", action="noop"))
    document["edges"][1] = edge("t", "end", branch="a")
    assert errors(document) == [("edge.branch_not_allowed", "t", "t->end", None)]


def test_a_declared_branch_without_an_edge_is_rejected() -> None:
    document = forked_gather()
    document["nodes"][1]["branches"] = ["a", "b", "c"]
    assert errors(document) == [("branch.missing", "f", None, "branches")]


def test_a_declared_branch_with_two_edges_is_rejected() -> None:
    document = forked_gather()
    document["edges"].append(edge("f", "end", branch="b", id="again"))
    assert errors(document) == [("branch.duplicate", "f", "again", None)]


def test_an_edge_for_an_undeclared_branch_is_rejected() -> None:
    document = forked_gather()
    document["edges"].append(edge("f", "end", branch="z"))
    assert errors(document) == [("branch.undeclared", "f", "f->end", None)]


# Cycles and bodies ----------------------------------------------------------------------------


def test_a_cycle_without_a_back_edge_is_rejected() -> None:
    document = flow(
        [
            node("start", "start"),
            node("a", "set", values={}),
            node("c", "if", condition="true"),
            node("end", "end"),
        ],
        [
            edge("start", "a"),
            edge("a", "c"),
            edge("c", "a", outcome="true"),
            edge("c", "end", outcome="false"),
        ],
    )
    assert errors(document) == [("graph.cycle", "a", "a->c", None)]


def test_a_cycle_through_a_foreach_entry_edge_is_not_a_back_edge() -> None:
    document = foreach_flow()
    document["nodes"].insert(3, node("again", "if", condition="true"))
    document["edges"][3] = edge("each", "again", outcome="done")
    document["edges"] += [
        edge("again", "each", outcome="true"),
        edge("again", "end", outcome="false"),
    ]
    assert errors(document) == [("graph.cycle", "each", "each->again", None)]


def test_a_body_edge_to_a_node_after_the_foreach_escapes() -> None:
    document = foreach_flow()
    document["edges"][2] = edge("work", "end")
    assert errors(document) == [
        ("body.escape", "end", "work->end", None),
        ("body.no_return", "each", "each->work", None),
    ]


def test_an_end_inside_a_body_escapes() -> None:
    document = foreach_flow()
    document["nodes"].append(node("stop", "end"))
    document["nodes"][2] = node("work", "if", condition="line.amount > 1")
    document["edges"][2] = edge("work", "each", outcome="true")
    document["edges"].append(edge("work", "stop", outcome="false"))
    assert errors(document) == [("body.escape", "stop", "work->stop", None)]


def test_a_fail_inside_a_body_is_allowed() -> None:
    document = foreach_flow()
    document["nodes"].append(node("stop", "fail", error="bad line"))
    document["nodes"][2] = node("work", "if", condition="line.amount > 1")
    document["edges"][2] = edge("work", "each", outcome="true")
    document["edges"].append(edge("work", "stop", outcome="false"))
    assert errors(document) == []


def test_an_edge_into_the_middle_of_a_body_is_an_escape() -> None:
    document = foreach_flow()
    document["nodes"].insert(1, node("pre", "if", condition="true"))
    document["edges"][0] = edge("start", "pre")
    document["edges"] += [edge("pre", "each", outcome="true"), edge("pre", "work", outcome="false")]
    assert errors(document) == [("body.escape", "work", "each->work", None)]


def test_a_nested_body_returning_to_the_outer_foreach_escapes() -> None:
    document = flow(
        [
            node("start", "start"),
            node("rows", "foreach", items="input.rows", as_="row"),
            node("cells", "foreach", items="row.cells", as_="cell"),
            node("work", "set", values={}),
            node("end", "end"),
        ],
        [
            edge("start", "rows"),
            edge("rows", "cells", outcome="item"),
            edge("cells", "work", outcome="item"),
            edge("work", "rows"),
            edge("cells", "rows", outcome="done"),
            edge("rows", "end", outcome="done"),
        ],
    )
    assert errors(document) == [
        ("body.escape", "rows", "work->rows", None),
        ("body.no_return", "cells", "cells->work", None),
    ]


def test_nested_bodies_that_return_properly_are_valid() -> None:
    document = flow(
        [
            node("start", "start"),
            node("rows", "foreach", items="input.rows", as_="row"),
            node("cells", "foreach", items="row.cells", as_="cell"),
            node("work", "set", values={"n": "cell + size(row.cells)"}),
            node("end", "end"),
        ],
        [
            edge("start", "rows"),
            edge("rows", "cells", outcome="item"),
            edge("cells", "work", outcome="item"),
            edge("work", "cells"),
            edge("cells", "rows", outcome="done"),
            edge("rows", "end", outcome="done"),
        ],
        state={"n": {"reducer": "sum"}},
    )
    assert errors(document) == []


def test_a_foreach_without_an_item_edge_has_no_body() -> None:
    document = foreach_flow()
    document["edges"][1:3] = []
    document["nodes"].pop(2)
    assert errors(document) == [("body.missing", "each", None, None)]


def test_a_loop_body_that_never_returns_is_rejected() -> None:
    document = loop_flow()
    document["nodes"][2] = node("pause", "fail", error="stop")
    document["edges"][2:3] = []
    assert errors(document) == [("body.no_return", "lp", "lp->pause", None)]


def race_flow() -> Doc:
    """Return start → race(human: approval, timer: wait) → end."""
    return flow(
        [
            node("start", "start"),
            node("r", "race", branches=["human", "timer"]),
            node("ask", "approval", groups=["finance"]),
            node("clock", "wait", seconds=3600),
            node("end", "end"),
        ],
        [
            edge("start", "r"),
            edge("r", "ask", branch="human"),
            edge("ask", "r", outcome="approved"),
            edge("ask", "r", outcome="rejected"),
            edge("r", "clock", branch="timer"),
            edge("clock", "r"),
            edge("r", "end", outcome="human"),
            edge("r", "end", outcome="timer", id="timed-out"),
        ],
    )


def test_a_race_with_returning_branches_and_winner_outcomes_is_valid() -> None:
    assert errors(race_flow()) == []


def test_a_race_outcome_must_be_a_branch_name_or_next() -> None:
    document = race_flow()
    document["edges"][-1]["outcome"] = "done"
    assert errors(document) == [("edge.outcome_invalid", "r", "timed-out", None)]


def test_two_race_branches_sharing_a_node_escape() -> None:
    document = race_flow()
    document["edges"][5] = edge("clock", "ask")
    assert errors(document) == [
        ("body.escape", "ask", "clock->ask", None),
        ("body.no_return", "r", "r->clock", None),
    ]


# State ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("middle", "field"),
    [
        (node("t", "task", action="noop", output="result"), "output"),
        (node("t", "set", values={"result": "1"}), "values.result"),
        (node("t", "subflow", flow="child", output={"result": "value"}), "output.result"),
    ],
)
def test_writing_an_undeclared_state_field_is_rejected(middle: dict[str, Any], field: str) -> None:
    assert errors(simple(middle)) == [("state.write_undeclared", "t", None, field)]


def test_foreach_errors_into_an_undeclared_field_is_rejected() -> None:
    document = foreach_flow(on_item_failure="collect", errors="failures")
    assert errors(document) == [("state.write_undeclared", "each", None, "errors")]


def test_an_unknown_reducer_is_rejected() -> None:
    document = simple(state={"total": {"reducer": "average"}})
    assert errors(document) == [("state.reducer_unknown", None, None, "state.total.reducer")]


def test_a_field_with_an_unknown_reducer_still_counts_as_declared() -> None:
    document = simple(
        node("s", "set", values={"total": "state.total + 1"}), state={"total": {"reducer": "avg"}}
    )
    assert errors(document) == [("state.reducer_unknown", None, None, "state.total.reducer")]


@pytest.mark.parametrize(
    ("declaration", "expected"),
    [
        ({}, ("field.missing", "state.n.reducer")),
        ({"reducer": "sum", "default": "zero"}, ("state.default_invalid", "state.n.default")),
        ({"reducer": "append", "default": {}}, ("state.default_invalid", "state.n.default")),
        ({"reducer": "sum", "initial": 0}, ("field.unknown", "state.n.initial")),
        ("sum", ("field.type", "state.n")),
    ],
)
def test_state_declarations_are_checked(declaration: object, expected: tuple[str, str]) -> None:
    assert errors(simple(state={"n": declaration})) == [(expected[0], None, None, expected[1])]


def test_an_unreadable_state_does_not_make_every_write_undeclared() -> None:
    document = simple(node("s", "set", values={"n": "state.n + 1"}), state=["n"])
    assert errors(document) == [("field.type", None, None, "state")]


def test_a_state_field_name_must_be_a_cel_identifier() -> None:
    document = simple(state={"my-field": {"reducer": "sum"}, "in": {"reducer": "sum"}})
    assert errors(document) == [
        ("state.name_invalid", None, None, "state.my-field"),
        ("state.name_invalid", None, None, "state.in"),
    ]


# Format ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("document", [[], "flow", None, 3])
def test_a_document_that_is_not_an_object_is_rejected(document: object) -> None:
    report = validate(document)
    assert (errors(document), report.graph) == ([("document.not_object", None, None, None)], None)


@pytest.mark.parametrize("value", ["braid.graph/2", None, 1])
def test_the_format_must_be_braid_graph_1(value: object) -> None:
    document = simple()
    document["format"] = value
    assert errors(document) == [("document.format", None, None, "format")]


def test_a_missing_format_is_rejected() -> None:
    document = simple()
    del document["format"]
    assert errors(document) == [("document.format", None, None, "format")]


def test_unknown_fields_are_rejected_on_the_document_nodes_and_edges() -> None:
    document = simple(node("t", "task", action="noop", colour="red"), owner="ann")
    document["edges"][0]["weight"] = 3
    assert errors(document) == [
        ("field.unknown", "t", None, "colour"),
        ("field.unknown", None, "start->t", "weight"),
        ("field.unknown", None, None, "owner"),
    ]


def test_nodes_and_edges_must_be_lists() -> None:
    document = {"format": "braid.graph/1", "nodes": {}, "edges": "none"}
    assert errors(document) == [
        ("field.type", None, None, "nodes"),
        ("field.type", None, None, "edges"),
    ]


def test_a_node_and_an_edge_that_are_not_objects_are_rejected_by_index() -> None:
    document = simple()
    document["nodes"].append("task")
    document["edges"].append(["start", "end"])
    assert errors(document) == [
        ("field.type", None, None, "nodes[2]"),
        ("field.type", None, "edges[1]", "edges[1]"),
    ]


@pytest.mark.parametrize("bad_id", ["", 7, None])
def test_a_node_id_must_be_a_non_empty_string(bad_id: object) -> None:
    document = simple()
    document["nodes"].append({"id": bad_id, "type": "end"})
    assert errors(document) == [("node.id_invalid", None, None, "nodes[2].id")]


def test_a_duplicate_node_id_is_rejected() -> None:
    document = simple()
    document["nodes"].append(node("end", "set", values={}))
    assert errors(document) == [("node.id_duplicate", "end", None, "nodes[2].id")]


def test_unicode_ids_are_stored_as_given() -> None:
    document = flow(
        [node("début", "start"), node("prüfen ✓", "task", action="noop"), node("終わり", "end")],
        chain("début", "prüfen ✓", "終わり"),
    )
    report = validate(document)
    assert report.ok
    assert report.graph is not None
    assert [n.id for n in report.graph.nodes] == ["début", "prüfen ✓", "終わり"]


def test_edge_ids_must_be_unique_non_empty_strings() -> None:
    document = simple(node("t", "task", action="noop"))
    document["edges"][0]["id"] = "e"
    document["edges"][1]["id"] = "e"
    document["edges"].append(edge("t", "t", id=""))
    assert errors(document)[:2] == [
        ("edge.id_duplicate", None, "e", "id"),
        ("edge.id_invalid", None, "t->t", "id"),
    ]


def test_a_flow_over_the_node_limit_is_rejected_before_anything_else() -> None:
    document = flow([node(f"n{i}", "teleport") for i in range(MAX_NODES + 1)], [])
    report = validate(document)
    assert (errors(document), report.graph) == ([("graph.too_large", None, None, None)], None)


def test_a_flow_over_the_edge_limit_is_rejected() -> None:
    document = simple()
    document["edges"] = [edge("start", "end")] * (MAX_EDGES + 1)
    assert errors(document) == [("graph.too_large", None, None, None)]


def test_a_flow_at_the_limits_is_not_too_large() -> None:
    document = simple()
    document["edges"] += [edge("ghost", "end")] * (MAX_EDGES - 1)
    assert {code for code, *_ in errors(document)} == {"edge.unknown_source"}


def test_every_format_code_is_a_problem_code() -> None:
    assert {code.value for code in FormatCode} <= {code.value for code in ProblemCode}


# One pass -------------------------------------------------------------------------------------


def test_all_errors_come_in_one_pass_and_a_broken_node_does_not_hide_others() -> None:
    document = flow(
        [
            node("start", "start"),
            node("t", "task", action="noop", retry="often"),
            node("c", "if", condition="state.x >"),
            node("g", "gather", slots=["a"]),
            node("s", "set", values={"y": "1"}),
            node("end", "end"),
            node("island", "end"),
        ],
        [
            edge("start", "t"),
            edge("t", "c"),
            edge("c", "s", outcome="true"),
            edge("c", "g", outcome="maybe", slot="a"),
            edge("s", "end", slot="z"),
            edge("g", "end"),
            edge("g", "nowhere", outcome="done"),
        ],
    )
    assert errors(document) == [
        ("field.type", "t", None, "retry"),
        ("edge.unknown_target", None, "g->nowhere", None),
        ("edge.outcome_invalid", "c", "c->g", None),
        ("edge.slot_not_allowed", "end", "s->end", None),
        ("edge.outcome_invalid", "g", "g->nowhere", None),
        ("state.write_undeclared", "s", None, "values.y"),
        ("node.unreachable", "island", None, None),
        ("expression.syntax", "c", None, "condition"),
    ]


def test_the_report_serialises_every_problem_with_every_key() -> None:
    document = simple(node("c", "if", condition="1 +"))
    document["edges"][1]["outcome"] = "true"
    document["edges"].append(edge("c", "end", outcome="false", id="no"))
    assert validate(document).to_json() == {
        "ok": False,
        "errors": [
            {
                "code": "expression.syntax",
                "severity": "error",
                "message": (
                    "`c` (if) `condition`: unexpected end of expression; fix the CEL expression."
                ),
                "node": "c",
                "edge": None,
                "edge_index": None,
                "field": "condition",
                "position": {"line": 1, "column": 4, "offset": 3},
            }
        ],
        "warnings": [],
    }
