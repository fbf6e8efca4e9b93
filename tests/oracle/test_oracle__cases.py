"""The disagreement classes between the color walks and the oracle, one minimal run each.

Each case drives a small flow to the moment of the disagreement and states the colors the
rule gives (docs/monitor-oracle.md). `test_the_oracle_gives_...` checks the oracle
against them; `test_the_walks_give_...` checks both walks, and is a strict xfail, named
by its class, where the walk is known to be wrong today, so it flips when it is fixed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import pytest

from engine.core.events import ActionFailed, Cancel
from tests.oracle.driving import RetryingDriver, demo, oracle_colors, walk_colors
from tests.oracle.flows import SUBFLOWS

START, END = {"id": "start", "type": "start"}, {"id": "end", "type": "end"}


def document(
    nodes: list[dict[str, Any]], edges: Sequence[tuple[str, ...]], **state: str
) -> dict[str, Any]:
    """Build a flow: edges are (source, target[, outcome[, branch]]); `item`/`body`..."""
    built = []
    for source, target, *rest in edges:
        edge: dict[str, str] = {"source": source, "target": target}
        if rest and rest[0].startswith("branch:"):
            edge["branch"] = rest[0].removeprefix("branch:")
        elif rest:
            edge["outcome"] = rest[0]
        built.append(edge)
    return {
        "format": "braid.graph/1",
        "state": {name: {"reducer": reducer} for name, reducer in state.items()},
        "nodes": [START, *nodes, END],
        "edges": built,
    }


def cancel(driver: RetryingDriver) -> None:
    """Cancel the run."""
    driver.send(Cancel(at=driver.now(), by="admin", reason="test"))


def fail_action(driver: RetryingDriver, node: str) -> None:
    """Fail the held action of a node."""
    key = next(k for k, action in driver.actions.items() if action.node == node)
    driver.actions.pop(key)
    driver.send(ActionFailed(at=driver.now(), key=key, error="boom"))


def batch_cancelled_while_items_wait() -> RetryingDriver:
    """(a) batch-line-approval: item 1 finished, items 2-3 wait at `review`; cancel."""
    lines = [
        {"id": "l1", "amount": 5},
        {"id": "l2", "amount": 20000},
        {"id": "l3", "amount": 30000},
    ]
    driver = RetryingDriver(demo("batch-line-approval"), {"lines": lines})
    cancel(driver)
    return driver


LOOP_BODY: list[dict[str, Any]] = [
    {"id": "loop", "type": "loop", "while": "state.c < 3", "max_iterations": 3},
    {"id": "tick", "type": "set", "values": {"c": "1"}},
    {"id": "first", "type": "if", "condition": "state.c == 1"},
    {"id": "note", "type": "set", "values": {"log": "['first round']"}},
    {"id": "ask", "type": "approval", "groups": ["g"], "policy": "any"},
]
LOOP_EDGES = [
    ("start", "loop"), ("loop", "tick", "body"), ("tick", "first"), ("first", "note", "true"),
    ("first", "ask", "false"), ("note", "ask"), ("ask", "loop", "approved"),
    ("ask", "loop", "rejected"), ("loop", "end", "done"),
]  # fmt: skip


def loop_in_second_round() -> RetryingDriver:
    """A loop whose first round wrote `note`; the second round waits at `ask`."""
    driver = RetryingDriver(document(LOOP_BODY, LOOP_EDGES, c="sum", log="append"))
    driver.decide("ask", "u", ("g",), "approve")
    return driver


def loop_cancelled_in_second_round() -> RetryingDriver:
    """(b) cancel inside a loop: `note` is from round 1, `ask` waits in round 2."""
    driver = loop_in_second_round()
    cancel(driver)
    return driver


def loop_failing_at_its_limit() -> RetryingDriver:
    """(c) a loop that fails at max_iterations (no `exhausted` edge) after 3 rounds."""
    nodes: list[dict[str, Any]] = [
        {"id": "loop", "type": "loop", "while": "state.c < 9", "max_iterations": 3},
        {"id": "tick", "type": "set", "values": {"c": "1"}},
        {"id": "work", "type": "task", "action": "noop"},
    ]
    edges = [("start", "loop"), ("loop", "tick", "body"), ("tick", "work"), ("work", "loop"),
             ("loop", "end", "done")]  # fmt: skip
    driver = RetryingDriver(document(nodes, edges, c="sum"))
    driver.settle()
    return driver


RACE: list[dict[str, Any]] = [
    {"id": "race", "type": "race", "branches": ["fast", "slow"]},
    {"id": "quick", "type": "task", "action": "noop"},
    {"id": "prep", "type": "set", "values": {"log": "['prep']"}},
    {"id": "ask", "type": "approval", "groups": ["g"], "policy": "any"},
    {"id": "after", "type": "set", "values": {"log": "['after']"}},
]
RACE_EDGES = [
    ("start", "race"), ("race", "quick", "branch:fast"), ("quick", "race"),
    ("race", "prep", "branch:slow"), ("prep", "ask"), ("ask", "after", "approved"),
    ("ask", "after", "rejected"), ("after", "race"), ("race", "end"),
]  # fmt: skip


def race_lost_by_a_waiting_branch() -> RetryingDriver:
    """(d) `slow` completed `prep`, waits at `ask`, never reached `after`; `fast` wins."""
    driver = RetryingDriver(document(RACE, RACE_EDGES, log="append"))
    driver.run_actions()
    return driver


def race_failed_inside_a_branch() -> RetryingDriver:
    """A race whose `fast` branch fails while `slow` waits: the run fails."""
    driver = RetryingDriver(document(RACE, RACE_EDGES, log="append"))
    fail_action(driver, "quick")
    return driver


def race_cancelled_while_both_branches_wait() -> RetryingDriver:
    """approval-or-timeout cancelled at once: `approve` and `timer` both wait."""
    driver = RetryingDriver(demo("approval-or-timeout"), {"item": "desk", "hours": 1})
    cancel(driver)
    return driver


def foreach_of_no_items_then_a_task() -> RetryingDriver:
    """A foreach over no items finished; the run works on after it."""
    nodes = [
        {"id": "each", "type": "foreach", "items": "[]", "as": "x"},
        {"id": "body", "type": "task", "action": "noop"},
        {"id": "later", "type": "task", "action": "noop"},
    ]
    edges = [("start", "each"), ("each", "body", "item"), ("body", "each"),
             ("each", "later", "done"), ("later", "end")]  # fmt: skip
    return RetryingDriver(document(nodes, edges))


def task_waiting_for_its_retry() -> RetryingDriver:
    """A task whose first attempt failed waits for its second (retry with backoff)."""
    nodes: list[dict[str, Any]] = [
        {"id": "flaky", "type": "task", "action": "flaky", "params": {"succeed_on": 2},
         "retry": {"max_attempts": 2, "backoff_s": 10}},
        {"id": "next", "type": "task", "action": "noop"},
    ]  # fmt: skip
    driver = RetryingDriver(
        document(nodes, [("start", "flaky"), ("flaky", "next"), ("next", "end")])
    )
    driver.run_actions()
    return driver


def subflow_retried_after_its_failure() -> RetryingDriver:
    """A subflow's task failed the run; the run was retried: the task runs again."""
    nodes: list[dict[str, Any]] = [
        {"id": "call", "type": "subflow", "flow": "leaf", "output": {"log": "log"}},
        {"id": "after", "type": "task", "action": "noop"},
    ]
    edges = [("start", "call"), ("call", "after"), ("after", "end")]
    driver = RetryingDriver(document(nodes, edges, log="append"), subflows=SUBFLOWS)
    fail_action(driver, "call/work")
    driver.retry()
    return driver


def retry_after_a_step_that_went_on_past_the_failure() -> RetryingDriver:
    """A skipped item's failure let the step go on to a `fail` node, which failed the run;
    the retry restores the state before the failure: `check` and `stop` run again later."""
    nodes = [
        {"id": "each", "type": "foreach", "items": "[1]", "as": "x", "on_item_failure": "skip"},
        {"id": "work", "type": "task", "action": "noop"},
        {"id": "check", "type": "if", "condition": "true"},
        {"id": "stop", "type": "fail", "error": "planned"},
    ]
    edges = [("start", "each"), ("each", "work", "item"), ("work", "each"),
             ("each", "check", "done"), ("check", "stop", "true"),
             ("check", "end", "false")]  # fmt: skip
    driver = RetryingDriver(document(nodes, edges))
    fail_action(driver, "work")
    driver.retry()
    return driver


def nested_loop_idle_in_a_later_round() -> RetryingDriver:
    """An outer loop's first round ran the inner loop once (`mark`); its second round ran
    the inner loop no iteration; the run completed."""
    nodes: list[dict[str, Any]] = [
        {"id": "outer", "type": "loop", "while": "state.c < 2", "max_iterations": 2},
        {"id": "tick", "type": "set", "values": {"c": "1"}},
        {"id": "inner", "type": "loop", "while": "state.c == 1 && state.n == 0",
         "max_iterations": 1},
        {"id": "mark", "type": "set", "values": {"n": "1"}},
    ]  # fmt: skip
    edges = [("start", "outer"), ("outer", "tick", "body"), ("tick", "inner"),
             ("inner", "mark", "body"), ("mark", "inner"), ("inner", "outer", "done"),
             ("outer", "end", "done")]  # fmt: skip
    return RetryingDriver(document(nodes, edges, c="sum", n="sum"))


def nested_loop_running_in_a_later_item() -> RetryingDriver:
    """Item 1 ran the inner loop and `after`; item 2's inner loop runs `work`."""
    nodes: list[dict[str, Any]] = [
        {"id": "each", "type": "foreach", "items": "[1, 2]", "as": "x", "concurrency": 1},
        {"id": "inner", "type": "loop", "while": "true", "max_iterations": 1},
        {"id": "work", "type": "task", "action": "noop"},
        {"id": "after", "type": "set", "values": {"n": "1"}},
    ]
    edges = [("start", "each"), ("each", "inner", "item"), ("inner", "work", "body"),
             ("work", "inner"), ("inner", "after", "exhausted"), ("after", "each"),
             ("each", "end", "done")]  # fmt: skip
    driver = RetryingDriver(document(nodes, edges, n="sum"))
    driver.complete("run|work|root:1:each:1:inner:1|1")
    return driver


def loop_in_a_foreach_item_in_its_second_round() -> RetryingDriver:
    """The loop of `a live loop in a later round`, as the body of a one-item foreach."""
    each = {"id": "each", "type": "foreach", "items": "[1]", "as": "x"}
    nodes: list[dict[str, Any]] = [*LOOP_BODY, each]
    edges = [("start", "each"), ("each", "loop", "item"), *LOOP_EDGES[1:-1],
             ("loop", "each", "done"), ("each", "end", "done")]  # fmt: skip
    driver = RetryingDriver(document(nodes, edges, c="sum", log="append"))
    driver.decide("ask", "u", ("g",), "approve", "root:1:each:1:loop:1")
    return driver


def item_failed_while_its_race_waits() -> RetryingDriver:
    """Item 1 of a `skip` foreach: `work` fails its race while `ask` waits in the other
    branch; the item fails, the foreach goes on, item 2 waits at `gate`."""
    nodes: list[dict[str, Any]] = [
        {"id": "each", "type": "foreach", "items": "[1, 2]", "as": "x", "concurrency": 1,
         "on_item_failure": "skip"},
        {"id": "gate", "type": "approval", "groups": ["g"], "policy": "any"},
        {"id": "race", "type": "race", "branches": ["a", "b"]},
        {"id": "ask", "type": "approval", "groups": ["g"], "policy": "any"},
        {"id": "work", "type": "task", "action": "noop"},
    ]  # fmt: skip
    edges = [("start", "each"), ("each", "gate", "item"), ("gate", "race", "approved"),
             ("gate", "race", "rejected"), ("race", "ask", "branch:a"),
             ("race", "work", "branch:b"), ("ask", "race", "approved"),
             ("ask", "race", "rejected"), ("work", "race"), ("race", "each"),
             ("each", "end", "done")]  # fmt: skip
    driver = RetryingDriver(document(nodes, edges))
    driver.decide("gate", "u", ("g",), "approve", "root:1:each:1")
    fail_action(driver, "work")
    return driver


def race_lost_in_an_earlier_item() -> RetryingDriver:
    """Item 1's race was won by `work` while `slow` ran; item 2 runs `pre`, upstream."""
    nodes: list[dict[str, Any]] = [
        {"id": "each", "type": "foreach", "items": "[1, 2]", "as": "x", "concurrency": 2},
        {"id": "race", "type": "race", "branches": ["a", "b"]},
        {"id": "pre", "type": "task", "action": "noop"},
        {"id": "slow", "type": "task", "action": "noop"},
        {"id": "work", "type": "task", "action": "noop"},
    ]
    edges = [("start", "each"), ("each", "race", "item"), ("race", "pre", "branch:a"),
             ("pre", "slow"), ("slow", "race"), ("race", "work", "branch:b"), ("work", "race"),
             ("race", "each"), ("each", "end", "done")]  # fmt: skip
    driver = RetryingDriver(document(nodes, edges))
    driver.complete("run|pre|root:1:each:1:race.a:1|1")
    driver.complete("run|work|root:1:each:1:race.b:1|1")
    return driver


def running_row_below_a_loop_in_an_earlier_item() -> RetryingDriver:
    """Item 1 runs `slow`; item 2 runs `pre`, upstream; a loop with no round is above both."""
    nodes: list[dict[str, Any]] = [
        {"id": "each", "type": "foreach", "items": "[1, 2]", "as": "x", "concurrency": 2},
        {"id": "idle", "type": "loop", "while": "false", "max_iterations": 1},
        {"id": "round", "type": "set", "values": {}},
        {"id": "pre", "type": "task", "action": "noop"},
        {"id": "slow", "type": "task", "action": "noop"},
    ]
    edges = [("start", "each"), ("each", "idle", "item"), ("idle", "round", "body"),
             ("round", "idle"), ("idle", "pre", "done"), ("pre", "slow"), ("slow", "each"),
             ("each", "end", "done")]  # fmt: skip
    driver = RetryingDriver(document(nodes, edges))
    driver.complete("run|pre|root:1:each:1|1")
    return driver


def race_lost_in_a_loop_round_that_may_repeat() -> RetryingDriver:
    """Round 1 of 2: `quick` won the race before `slow` started; `hold` waits."""
    nodes: list[dict[str, Any]] = [
        {"id": "loop", "type": "loop", "while": "state.c < 2", "max_iterations": 2},
        {"id": "tick", "type": "set", "values": {"c": "1"}},
        {"id": "race", "type": "race", "branches": ["a", "b"]},
        {"id": "quick", "type": "set", "values": {}},
        {"id": "slow", "type": "set", "values": {}},
        {"id": "hold", "type": "approval", "groups": ["g"], "policy": "any"},
    ]
    edges = [("start", "loop"), ("loop", "tick", "body"), ("tick", "race"),
             ("race", "quick", "branch:a"), ("quick", "race"), ("race", "slow", "branch:b"),
             ("slow", "race"), ("race", "hold"), ("hold", "loop", "approved"),
             ("hold", "loop", "rejected"), ("loop", "end", "done")]  # fmt: skip
    return RetryingDriver(document(nodes, edges, c="sum"))


def foreach_whose_items_all_passed_a_node() -> RetryingDriver:
    """Both items of a foreach were admitted, took `check`'s false and run `work`."""
    nodes: list[dict[str, Any]] = [
        {"id": "each", "type": "foreach", "items": "[1, 2]", "as": "x", "concurrency": 2},
        {"id": "check", "type": "if", "condition": "false"},
        {"id": "note", "type": "set", "values": {}},
        {"id": "work", "type": "task", "action": "noop"},
    ]
    edges = [("start", "each"), ("each", "check", "item"), ("check", "note", "true"),
             ("note", "work"), ("check", "work", "false"), ("work", "each"),
             ("each", "end", "done")]  # fmt: skip
    return RetryingDriver(document(nodes, edges))


def loop_cancelled_after_a_fork_passed_an_empty_foreach() -> RetryingDriver:
    """A loop round forked; branch a passed a foreach of no items; the gather fired and
    `after` runs; the run is cancelled."""
    nodes: list[dict[str, Any]] = [
        {"id": "loop", "type": "loop", "while": "true", "max_iterations": 2},
        {"id": "split", "type": "fork", "branches": ["a", "b"]},
        {"id": "each", "type": "foreach", "items": "[]", "as": "x"},
        {"id": "body", "type": "set", "values": {}},
        {"id": "work", "type": "task", "action": "noop"},
        {"id": "other", "type": "set", "values": {}},
        {"id": "join", "type": "gather", "slots": ["a", "b"]},
        {"id": "after", "type": "task", "action": "noop"},
    ]
    edges = [("start", "loop"), ("loop", "split", "body"), ("split", "each", "branch:a"),
             ("each", "body", "item"), ("body", "each"), ("each", "work", "done"),
             ("split", "other", "branch:b"), ("join", "after"), ("after", "loop"),
             ("loop", "end", "exhausted")]  # fmt: skip
    built = document(nodes, edges)
    built["edges"] += [
        {"source": "work", "target": "join", "slot": "a"},
        {"source": "other", "target": "join", "slot": "b"},
    ]
    driver = RetryingDriver(built)
    driver.complete("run|work|root:1:loop:1:split.a:1|1")
    cancel(driver)
    return driver


def loop_cancelled_in_a_later_round_after_a_foreach() -> RetryingDriver:
    """Round 1 ran a foreach of one item, `work` and `after`; round 2 runs `work`; cancel."""
    nodes: list[dict[str, Any]] = [
        {"id": "loop", "type": "loop", "while": "true", "max_iterations": 2},
        {"id": "each", "type": "foreach", "items": "[1]", "as": "x"},
        {"id": "body", "type": "set", "values": {}},
        {"id": "work", "type": "task", "action": "noop"},
        {"id": "after", "type": "task", "action": "noop"},
    ]
    edges = [("start", "loop"), ("loop", "each", "body"), ("each", "body", "item"),
             ("body", "each"), ("each", "work", "done"), ("work", "after"), ("after", "loop"),
             ("loop", "end", "exhausted")]  # fmt: skip
    driver = RetryingDriver(document(nodes, edges))
    driver.complete("run|work|root:1:loop:1|1")
    driver.complete("run|after|root:1:loop:1|1")
    cancel(driver)
    return driver


def race_lost_while_an_attempt_waits_for_its_retry() -> RetryingDriver:
    """`flaky` failed attempt 1 and waits for attempt 2 when `work` wins the race."""
    nodes: list[dict[str, Any]] = [
        {"id": "race", "type": "race", "branches": ["a", "b"]},
        {"id": "flaky", "type": "task", "action": "flaky", "params": {"succeed_on": 2},
         "retry": {"max_attempts": 2, "backoff_s": 10}},
        {"id": "after", "type": "set", "values": {}},
        {"id": "work", "type": "task", "action": "noop"},
        {"id": "later", "type": "task", "action": "noop"},
    ]  # fmt: skip
    edges = [("start", "race"), ("race", "flaky", "branch:a"), ("flaky", "after"),
             ("after", "race"), ("race", "work", "branch:b"), ("work", "race"),
             ("race", "later"), ("later", "end")]  # fmt: skip
    driver = RetryingDriver(document(nodes, edges))
    fail_action(driver, "flaky")
    driver.complete("run|work|root:1:race.b:1|1")
    return driver


def loop_failed_inside_a_collected_item() -> RetryingDriver:
    """A foreach (collect) item's loop forked; `work` failed, so the loop failed, the item
    failed, the foreach completed and the run goes on at `later`; `ask` was waiting."""
    nodes: list[dict[str, Any]] = [
        {"id": "each", "type": "foreach", "items": "[1]", "as": "x",
         "on_item_failure": "collect", "errors": "errors"},
        {"id": "loop", "type": "loop", "while": "true", "max_iterations": 1},
        {"id": "split", "type": "fork", "branches": ["a", "b"]},
        {"id": "ask", "type": "approval", "groups": ["g"], "policy": "any"},
        {"id": "work", "type": "task", "action": "noop"},
        {"id": "join", "type": "gather", "slots": ["a", "b"]},
        {"id": "after", "type": "set", "values": {}},
        {"id": "later", "type": "task", "action": "noop"},
    ]  # fmt: skip
    edges = [("start", "each"), ("each", "loop", "item"), ("loop", "split", "body"),
             ("split", "ask", "branch:a"), ("split", "work", "branch:b"), ("join", "after"),
             ("after", "loop"), ("loop", "each", "exhausted"), ("each", "later", "done"),
             ("later", "end")]  # fmt: skip
    built = document(nodes, edges, errors="append")
    built["edges"] += [
        {"source": "ask", "target": "join", "slot": "a", "outcome": "approved"},
        {"source": "ask", "target": "join", "slot": "a", "outcome": "rejected"},
        {"source": "work", "target": "join", "slot": "b"},
    ]
    driver = RetryingDriver(built)
    fail_action(driver, "work")
    return driver


@dataclass(frozen=True)
class Case:
    """A run at a moment and the colors the rule gives (each was once a class of
    disagreement between the walk and the oracle: docs/monitor-oracle.md)."""

    run: Callable[[], RetryingDriver]
    colors: dict[str, str]


C, F, X, S, P, R, W = "completed", "failed", "cancelled", "skipped", "pending", "running", "waiting"
CASES = {
    "cancel inside a foreach": Case(
        batch_cancelled_while_items_wait,
        {"start": C, "lines": X, "big": C, "review": X, "ok": S, "small": C, "done": S},
    ),
    "cancel inside a loop": Case(
        loop_cancelled_in_second_round,
        {"start": C, "loop": X, "tick": C, "first": C, "note": C, "ask": X, "end": S},
    ),
    "a live loop in a later round": Case(
        loop_in_second_round,
        {"start": C, "loop": R, "tick": C, "first": C, "note": P, "ask": W, "end": P},
    ),
    "a loop failing at its limit": Case(
        loop_failing_at_its_limit,
        {"start": C, "loop": F, "tick": C, "work": C, "end": S},
    ),
    "a race lost by a waiting branch": Case(
        race_lost_by_a_waiting_branch,
        {"start": C, "race": C, "quick": C, "prep": C, "ask": X, "after": S, "end": C},
    ),
    "a failure inside a race branch": Case(
        race_failed_inside_a_branch,
        {"start": C, "race": F, "quick": F, "prep": C, "ask": X, "after": S, "end": S},
    ),
    "a cancel while race branches wait": Case(
        race_cancelled_while_both_branches_wait,
        {
            "start": C,
            "deadline": X,
            "approve": X,
            "approved": S,
            "rejected": S,
            "timer": X,
            "decided": S,
            "escalate": S,
            "done": S,
        },
    ),
    "a finished foreach in a live run": Case(
        foreach_of_no_items_then_a_task,
        {"start": C, "each": C, "body": S, "later": R, "end": P},
    ),
    "a task waiting for its retry": Case(
        task_waiting_for_its_retry,
        {"start": C, "flaky": F, "next": P, "end": P},
    ),
    "a subflow retried after its failure": Case(
        subflow_retried_after_its_failure,
        {
            "start": C,
            "call": R,
            "call/start": C,
            "call/work": R,
            "call/ask": P,
            "call/done": P,
            "after": P,
            "end": P,
        },
    ),
    "a retry after a step that went on past the failure": Case(
        retry_after_a_step_that_went_on_past_the_failure,
        {"start": C, "each": R, "work": R, "check": P, "stop": P, "end": P},
    ),
    "a nested loop idle in a later round": Case(
        nested_loop_idle_in_a_later_round,
        {"start": C, "outer": C, "tick": C, "inner": C, "mark": C, "end": C},
    ),
    "a nested loop running in a later item": Case(
        nested_loop_running_in_a_later_item,
        {"start": C, "each": R, "inner": R, "work": R, "after": C, "end": P},
    ),
    "a live loop in a foreach item": Case(
        loop_in_a_foreach_item_in_its_second_round,
        {"start": C, "each": R, "loop": R, "tick": C, "first": C, "note": P, "ask": W, "end": P},
    ),
    "a failed item's waiting rows while its foreach goes on": Case(
        item_failed_while_its_race_waits,
        {"start": C, "each": R, "gate": W, "race": F, "ask": X, "work": F, "end": P},
    ),
    "a race lost in an earlier item": Case(
        race_lost_in_an_earlier_item,
        {"start": C, "each": R, "race": R, "pre": R, "slow": X, "work": R, "end": P},
    ),
    "a running row below a loop in an earlier item": Case(
        running_row_below_a_loop_in_an_earlier_item,
        {"start": C, "each": R, "idle": C, "round": P, "pre": R, "slow": R, "end": P},
    ),
    "a race lost in a loop round that may repeat": Case(
        race_lost_in_a_loop_round_that_may_repeat,
        {"start": C, "loop": R, "tick": C, "race": C, "quick": C, "slow": P, "hold": W, "end": P},
    ),
    "a foreach whose items all passed a node": Case(
        foreach_whose_items_all_passed_a_node,
        {"start": C, "each": R, "check": C, "note": P, "work": R, "end": P},
    ),
    "a loop cancelled after a fork passed an empty foreach": Case(
        loop_cancelled_after_a_fork_passed_an_empty_foreach,
        {
            "start": C,
            "loop": X,
            "split": C,
            "each": C,
            "body": S,
            "work": C,
            "other": C,
            "join": C,
            "after": X,
            "end": S,
        },
    ),
    "a loop cancelled in a later round after a foreach": Case(
        loop_cancelled_in_a_later_round_after_a_foreach,
        {"start": C, "loop": X, "each": C, "body": C, "work": X, "after": C, "end": S},
    ),
    "a race lost while an attempt waits for its retry": Case(
        race_lost_while_an_attempt_waits_for_its_retry,
        {"start": C, "race": C, "flaky": F, "after": S, "work": C, "later": R, "end": P},
    ),
    "a loop failed inside a collected item": Case(
        loop_failed_inside_a_collected_item,
        {
            "start": C,
            "each": C,
            "loop": F,
            "split": C,
            "ask": X,
            "work": F,
            "join": S,
            "after": S,
            "later": R,
            "end": P,
        },
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_oracle_gives_the_colors_the_rule_gives(name: str) -> None:
    case = CASES[name]
    assert oracle_colors(case.run()) == case.colors


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_walks_give_the_colors_the_rule_gives(name: str) -> None:
    case = CASES[name]
    assert walk_colors(case.run()) == case.colors
