"""Bounded work: no flow makes a run store or do more than the limits allow.

Each test is an attack that passed validation before the limits existed (issue 29 §3):
the value, state and approval-text sizes, the loop and subflow ceilings and the step
budget, each failing the node or the run with the limit's name.
"""

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from engine.core import expression_limits
from engine.core.actions import ActionRegistry
from engine.core.events import (
    ActionCompleted,
    ActionFailed,
    ApprovalDecided,
    Decision,
    RunAction,
    Start,
)
from engine.core.runtime import perform
from engine.core.scheduler import step
from engine.core.state import RunState
from engine.core.validation import validate
from tests.core.harness import ACTION_CATALOG, Driver, append, edge, flow, graph_of

START, END = {"id": "start", "type": "start"}, {"id": "done", "type": "end"}


@contextmanager
def limits(**changes: int) -> Iterator[None]:
    """Run the block under some changed limits, restoring them after."""
    previous = expression_limits.limits()
    expression_limits.configure(**changes)
    try:
        yield
    finally:
        expression_limits.configure(**{name: getattr(previous, name) for name in changes})


def looped(body: dict[str, Any], rounds: int, state: dict[str, str]) -> dict[str, Any]:
    """Return start -> loop(rounds) over one body node -> end."""
    loop = {"id": "again", "type": "loop", "while": "true", "max_iterations": rounds}
    return flow(
        [START, loop, body, END],
        [
            edge("start", "again"),
            edge("again", body["id"], outcome="body"),
            edge(body["id"], "again"),
            edge("again", "done", outcome="exhausted"),
        ],
        state,
    )


# ---------------------------------------------------------------- value and state sizes


def test_a_loop_doubling_a_string_32_fold_fails_once_the_value_passes_1_mb() -> None:
    doubled = " + ".join(["state.s"] * 32)  # 31 `+`: cheap enough to run in-process
    document = looped({"id": "double", "type": "set", "values": {"s": doubled}}, 3, {})
    document["state"] = {"s": {"reducer": "overwrite", "default": "x" * 1_000}}
    driver = Driver(document, round_trip=True)
    message = (
        "node `double` cannot write: the value written to state field 's' is 1,024,002 bytes "
        "of JSON; the limit is 1,000,000 (BRAID_VALUE_MAX_BYTES)"
    )
    assert (driver.status, driver.state.error) == ("failed", message)
    assert driver.row_table()["double"] == ("failed", "root:1:again:2", message, 1)
    stored = [
        len(str(v)) for lineage in driver.state.lineages.all.values() for _, v in lineage.writes
    ]
    assert stored == [32_000]  # round 1's value; round 2's never reached the snapshot


def test_an_append_field_stops_growing_when_it_would_pass_the_value_limit() -> None:
    document = looped(append("log_it", "log", "[input.line]"), 10, {"log": "append"})
    with limits(max_value_bytes=1_000):
        driver = Driver(document, {"line": "x" * 300})
    # ["x"*300] is 304 bytes; each more line adds 303: 304, 607, 910, then 1,213.
    assert (driver.status, driver.state.error) == (
        "failed",
        "node `log_it` cannot write: state field 'log' would hold 1,213 bytes of JSON; the "
        "limit is 1,000 (BRAID_VALUE_MAX_BYTES)",
    )
    assert driver.row_table()["log_it"][1] == "root:1:again:4"


def test_fields_each_under_the_value_limit_fail_when_the_state_passes_its_limit() -> None:
    document = flow(
        [START, {"id": "a", "type": "set", "values": {"a": "input.text"}},
         {"id": "b", "type": "set", "values": {"b": "input.text"}}, END],
        [edge("start", "a"), edge("a", "b"), edge("b", "done")],
        {"a": "overwrite", "b": "overwrite"},
    )  # fmt: skip
    with limits(max_value_bytes=1_000, max_state_bytes=1_500):
        driver = Driver(document, {"text": "y" * 800})
    # null is 4 bytes: 4 + 4, then 802 + 4, then 802 + 802.
    assert (driver.status, driver.state.error) == (
        "failed",
        "node `b` cannot write: writing state field 'b' would make the state 1,604 bytes of "
        "JSON; the limit is 1,500 (BRAID_STATE_MAX_BYTES)",
    )
    assert (driver.row_table()["a"][0], driver.row_table()["b"][0]) == ("completed", "failed")


def test_a_gather_whose_merged_field_passes_the_value_limit_fails() -> None:
    branches = ["a", "b", "c", "d"]
    document = flow(
        [START, {"id": "split", "type": "fork", "branches": branches},
         *[append(b, "log", "[input.line]") for b in branches],
         {"id": "join", "type": "gather", "slots": branches}, END],
        [edge("start", "split"), *[edge("split", b, branch=b) for b in branches],
         *[edge(b, "join", slot=b) for b in branches], edge("join", "done")],
        {"log": "append"},
    )  # fmt: skip
    with limits(max_value_bytes=1_000):
        driver = Driver(document, {"line": "x" * 300})
    assert (driver.status, driver.state.error) == (
        "failed",
        "gather join: state field 'log' would hold 1,213 bytes of JSON; the limit is 1,000 "
        "(BRAID_VALUE_MAX_BYTES)",
    )


def test_a_foreach_whose_merged_items_pass_the_value_limit_fails() -> None:
    document = flow(
        [START, {"id": "each", "type": "foreach", "items": "input.items", "as": "item",
                 "concurrency": 2}, append("keep", "log", "[input.line]"), END],
        [edge("start", "each"), edge("each", "keep", outcome="item"), edge("keep", "each"),
         edge("each", "done", outcome="done")],
        {"log": "append"},
    )  # fmt: skip
    with limits(max_value_bytes=1_000):
        driver = Driver(document, {"items": [1, 2, 3, 4], "line": "x" * 300})
    assert (driver.status, driver.state.error) == (
        "failed",
        "foreach each: merging the items: state field 'log' would hold 1,213 bytes of JSON; "
        "the limit is 1,000 (BRAID_VALUE_MAX_BYTES)",
    )


def test_a_task_output_over_the_value_limit_fails_the_task() -> None:
    document = flow(
        [START, {"id": "fetch", "type": "task", "action": "noop",
                 "params": {"value": "${input.text}"}, "output": "out"}, END],
        [edge("start", "fetch"), edge("fetch", "done")],
        {"out": "overwrite"},
    )  # fmt: skip
    with limits(max_value_bytes=1_000, max_state_bytes=10_000):
        driver = Driver(document, {"text": "z" * 1_200})
        assert (driver.status, driver.state.error) == (
            "failed",
            "node `fetch`: params is 1,212 bytes of JSON; the limit is 1,000 "
            "(BRAID_VALUE_MAX_BYTES)",
        )
        small = Driver(document, {"text": "z" * 900})
        (key,) = small.actions
        small.send(ActionCompleted(at=small.now(), key=key, output="z" * 1_100))
    assert (small.status, small.state.error) == (
        "failed",
        "node `fetch` cannot write: the value written to state field 'out' is 1,102 bytes of "
        "JSON; the limit is 1,000 (BRAID_VALUE_MAX_BYTES)",
    )


def test_a_subflow_output_over_the_state_limit_fails_the_call() -> None:
    child = flow(
        [START, {"id": "make", "type": "set", "values": {"made": "input.text + input.text"}},
         END],
        [edge("start", "make"), edge("make", "done")],
        {"made": "overwrite"},
    )  # fmt: skip
    parent = flow(
        [START, {"id": "call", "type": "subflow", "flow": "child",
                 "input": {"text": "input.text"}, "output": {"got": "made"}},
         {"id": "again", "type": "set", "values": {"copy": "state.got"}}, END],
        [edge("start", "call"), edge("call", "again"), edge("again", "done")],
        {"got": "overwrite", "copy": "overwrite"},
    )  # fmt: skip
    with limits(max_value_bytes=1_000, max_state_bytes=1_200):
        driver = Driver(parent, {"text": "w" * 300}, subflows={"child@latest": child})
    # The child's 602 bytes fit; the parent's state with them twice does not.
    assert (driver.status, driver.state.error) == (
        "failed",
        "node `again` cannot write: writing state field 'copy' would make the state 1,204 "
        "bytes of JSON; the limit is 1,200 (BRAID_STATE_MAX_BYTES)",
    )
    with limits(max_value_bytes=500):
        over = Driver(parent, {"text": "w" * 300}, subflows={"child@latest": child})
    assert (over.status, over.state.error) == (
        "failed",
        "node `make` cannot write: the value written to state field 'made' is 602 bytes of "
        "JSON; the limit is 500 (BRAID_VALUE_MAX_BYTES)",
    )
    assert over.row_table()["call"][0] == "failed"


def test_an_action_output_over_the_value_limit_fails_the_action_before_it_travels() -> None:
    registry = ActionRegistry()
    registry.register("big")(lambda params, context: "b" * 2_000_000)
    command = RunAction(key="k", action="big", params={}, node="n", execution_id="root:1",
                        attempt=1)  # fmt: skip
    assert perform(registry, command, "run", lambda: "t") == ActionFailed(
        at="t",
        key="k",
        error="the output is 2,000,002 bytes of JSON; the limit is 1,000,000 "
        "(BRAID_VALUE_MAX_BYTES)",
    )


# ---------------------------------------------------------------- approval texts


def approval_flow(**texts: Any) -> dict[str, Any]:
    """Return start -> one approval with the given title/instructions/show -> end."""
    ask = {"id": "ask", "type": "approval", "groups": ["finance"], "policy": "any", **texts}
    return flow(
        [START, ask, END],
        [edge("start", "ask"), edge("ask", "done", outcome="approved")],
        {"note": "overwrite"},
    )


def test_approval_texts_of_a_megabyte_fail_the_node_instead_of_reaching_the_inbox() -> None:
    big = {"text": "t" * 1_000_000}
    cases = {
        "title": approval_flow(title="${input.text}"),
        "instructions": approval_flow(title="Sign", instructions="Read: ${input.text}"),
        "show": approval_flow(title="Sign", show=["input.text"]),
    }
    errors = {name: Driver(document, big) for name, document in cases.items()}
    assert {name: (d.status, d.state.error, d.approvals) for name, d in errors.items()} == {
        "title": ("failed", "node `ask`: the title is 1,000,002 bytes of JSON; the limit is "
                  "10,000 (BRAID_APPROVAL_TEXT_MAX_BYTES)", {}),
        "instructions": ("failed", "node `ask`: the instructions is 1,000,008 bytes of JSON; "
                         "the limit is 10,000 (BRAID_APPROVAL_TEXT_MAX_BYTES)", {}),
        "show": ("failed", "node `ask`: the shown values is 1,000,004 bytes of JSON; the limit "
                 "is 10,000 (BRAID_APPROVAL_TEXT_MAX_BYTES)", {}),
    }  # fmt: skip
    fits = Driver(cases["show"], {"text": "t" * 9_000})
    assert (fits.status, len(fits.approvals)) == ("waiting", 1)


def test_an_approval_comment_over_the_text_limit_is_refused() -> None:
    driver = Driver(approval_flow(title="Sign"), {})
    (key,) = driver.approvals
    for comment in ("c" * 10_001, "fine"):
        driver.send(ApprovalDecided(at=driver.now(), key=key, user="ann", groups=("finance",),
                                    decision=Decision.APPROVE, comment=comment))  # fmt: skip
    assert [r.reason for r in driver.refused] == [
        "the comment is over 10,000 bytes (BRAID_APPROVAL_TEXT_MAX_BYTES)"
    ]
    assert driver.status == "completed"


# ---------------------------------------------------------------- ceilings


def test_a_loop_allowing_more_iterations_than_the_ceiling_does_not_validate() -> None:
    document = looped(append("tick", "log", "[1]"), 200_000, {"log": "append"})
    report = validate(document, ACTION_CATALOG)
    assert [(p.code.value, p.node, p.field, p.message) for p in report.errors] == [
        ("loop.max_iterations_over_limit", "again", "max_iterations",
         "Loop `again` allows 200,000 iterations; no loop may run more than 10,000 "
         "(BRAID_LOOP_MAX_ITERATIONS).")
    ]  # fmt: skip
    assert validate(looped(append("tick", "log", "[1]"), 10_000, {"log": "append"}),
                    ACTION_CATALOG).errors == ()  # fmt: skip


def test_a_foreach_over_a_literal_list_longer_than_the_ceiling_does_not_validate() -> None:
    document = flow(
        [START, {"id": "each", "type": "foreach", "items": "[1, 2, 3, 4]", "as": "item",
                 "concurrency": 1}, append("keep", "log", "[item]"), END],
        [edge("start", "each"), edge("each", "keep", outcome="item"), edge("keep", "each"),
         edge("each", "done", outcome="done")],
        {"log": "append"},
    )  # fmt: skip
    with limits(max_foreach_items=3):
        report = validate(document, ACTION_CATALOG)
    assert [(p.code.value, p.node, p.field, p.message) for p in report.errors] == [
        ("foreach.items_over_limit", "each", "items",
         "Foreach `each` lists 4 items; a foreach takes at most 3 (BRAID_FOREACH_MAX_ITEMS).")
    ]  # fmt: skip


def test_a_stored_loop_over_the_ceiling_fails_at_the_ceiling_at_run_time() -> None:
    graph = graph_of(looped(append("tick", "log", "[1]"), 50, {"log": "append"}))
    state = RunState(run_id="run", graphs={"main": graph})
    with limits(max_loop_iterations=5):
        state, _ = step(state, Start(at="2026-01-01T00:00:00Z", input={}))
    assert (state.status.value, state.error) == (
        "failed",
        "loop again reached 5 iterations, the most any loop may run (BRAID_LOOP_MAX_ITERATIONS)",
    )
    assert state.steps == 7  # start, the loop, and tick five times (a return is no step)


def nested(depth: int, items: int) -> dict[str, dict[str, Any]]:
    """Return subflows `level1`..`level{depth}`, each a foreach of `items` calling the next."""
    documents = {}
    for level in range(depth, 0, -1):
        inner = (
            {"id": "call", "type": "subflow", "flow": f"level{level + 1}"}
            if level < depth
            else {"id": "call", "type": "set", "values": {"n": "1"}}
        )
        documents[f"level{level}@latest"] = flow(
            [START, {"id": "each", "type": "foreach", "items": f"[{', '.join(['0'] * items)}]",
                     "as": "item", "concurrency": items}, inner, END],
            [edge("start", "each"), edge("each", "call", outcome="item"), edge("call", "each"),
             edge("each", "done", outcome="done")],
            {"n": "sum"},
        )  # fmt: skip
    return documents


def main_calling(first: str) -> dict[str, Any]:
    """Return start -> subflow `first` -> end."""
    return flow(
        [START, {"id": "top", "type": "subflow", "flow": first}, END],
        [edge("start", "top"), edge("top", "done")],
    )


def test_subflows_nested_past_the_depth_limit_fail_the_call() -> None:
    with limits(max_subflow_depth=3):
        driver = Driver(main_calling("level1"), {}, subflows=nested(4, 1))
    assert (driver.status, driver.state.error) == (
        "failed",
        "subflow level4@latest would nest 4 calls deep; the limit is 3 (BRAID_SUBFLOW_MAX_DEPTH)",
    )
    assert driver.row_table()["top/call/call/call"][0] == "failed"


# ---------------------------------------------------------------- the step budget


def test_five_nested_subflows_of_ten_items_each_stop_at_the_step_budget() -> None:
    with limits(max_run_steps=1_000):
        driver = Driver(main_calling("level1"), {}, subflows=nested(5, 10))
    assert driver.status == "failed"
    assert driver.state.error is not None
    assert driver.state.error.startswith(
        "the run executed 1,000 nodes, its budget (BRAID_RUN_MAX_STEPS); node `top/"
    )
    assert (driver.state.steps, driver.state.frames, len(driver.state.ready)) == (1_001, {}, 0)


def test_the_step_budget_counts_across_steps_and_snapshots() -> None:
    chain = [{"id": f"t{i}", "type": "task", "action": "noop"} for i in range(10)]
    document = flow(
        [START, *chain, END],
        [edge("start", "t0"), *[edge(f"t{i}", f"t{i + 1}") for i in range(9)],
         edge("t9", "done")],
    )  # fmt: skip
    with limits(max_run_steps=6):
        driver = Driver(document, {}, round_trip=True)  # a snapshot round trip every step
        driver.run_actions()
    assert (driver.status, driver.state.error) == (
        "failed",
        "the run executed 6 nodes, its budget (BRAID_RUN_MAX_STEPS); node `t5` was next",
    )
    assert [path for path, row in driver.row_table().items() if row[0] == "completed"] == [
        "start", "t0", "t1", "t2", "t3", "t4",
    ]  # fmt: skip
