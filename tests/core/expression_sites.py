"""Every place a run evaluates a CEL expression, each with a flow whose expression fails there.

Shared by the in-process tests (tests/core) and the durable ones (tests/django): each case
is (flow document, input, the run's exact error). A failing expression names its node, the
config field it sits in, and the expression, then says what failed.
"""

from __future__ import annotations

from typing import Any

from tests.core.harness import edge, flow

START, END = {"id": "start", "type": "start"}, {"id": "done", "type": "end"}
INPUT = {"amount": 3, "vendor": "acme"}


def overload(reads: str) -> str:
    """The message of an operation CEL has no overload for, with what the fields read hold."""
    return (
        f"no such overload: the operation does not take these types ({reads}); CEL does not "
        "convert between types, so convert with int(x), double(x) or string(x)"
    )


AMOUNT = "`input.amount` is int (3)"
BOTH = f'{AMOUNT}, `input.vendor` is string ("acme")'


def line(
    node: dict[str, Any], state: dict[str, str] | None = None, out: str = "next"
) -> dict[str, Any]:
    """start -> node -> end, leaving the node by `out` (and `rejected` for an approval)."""
    edges = [edge("start", node["id"]), edge(node["id"], "done", outcome=out)]
    if node["type"] == "approval":
        edges.append(edge(node["id"], "done", outcome="rejected"))
    return flow([START, node, END], edges, state)


def decision() -> dict[str, Any]:
    """An if whose condition compares a number with a string."""
    node = {"id": "amount_check", "type": "if", "condition": "input.amount > 'x'"}
    edges = [
        edge("start", "amount_check"),
        edge("amount_check", "done", outcome="true"),
        edge("amount_check", "done", outcome="false"),
    ]
    return flow([START, node, END], edges)


def switch() -> dict[str, Any]:
    """A switch whose second case divides by zero."""
    node = {
        "id": "route",
        "type": "switch",
        "cases": [
            {"when": "input.vendor == 'other'", "outcome": "other"},
            {"when": "input.amount / 0 > 1", "outcome": "big"},
        ],
        "default": "small",
    }
    edges = [edge("start", "route")] + [
        edge("route", "done", outcome=name) for name in ("other", "big", "small")
    ]
    return flow([START, node, END], edges)


def foreach(items: str) -> dict[str, Any]:
    """A foreach over `items` with an empty body."""
    nodes: list[dict[str, Any]] = [
        START,
        {"id": "each", "type": "foreach", "items": items, "as": "line", "concurrency": 1},
        {"id": "touch", "type": "set", "values": {"seen": "line"}},
        END,
    ]
    edges = [
        edge("start", "each"),
        edge("each", "touch", outcome="item"),
        edge("touch", "each"),
        edge("each", "done", outcome="done"),
    ]
    return flow(nodes, edges, {"seen": "append"})


def loop() -> dict[str, Any]:
    """A loop whose condition reads a string as a number."""
    nodes: list[dict[str, Any]] = [
        START,
        {"id": "rounds", "type": "loop", "while": "state.n < input.vendor", "max_iterations": 3},
        {"id": "bump", "type": "set", "values": {"n": "state.n + 1"}},
        END,
    ]
    edges = [
        edge("start", "rounds"),
        edge("rounds", "bump", outcome="body"),
        edge("bump", "rounds"),
        edge("rounds", "done", outcome="done"),
    ]
    document = flow(nodes, edges)
    document["state"] = {"n": {"reducer": "overwrite", "default": 0}}
    return document


APPROVAL = {"id": "sign", "type": "approval", "groups": ["finance"], "policy": "any"}

CASES: dict[str, tuple[dict[str, Any], dict[str, Any], str]] = {
    "set value": (
        line({"id": "calc", "type": "set", "values": {"total": "input.amount + 'x'"}},
             {"total": "overwrite"}),
        INPUT,
        f"node `calc` values.total: `input.amount + 'x'` failed: {overload(AMOUNT)}",
    ),
    "if condition": (
        decision(),
        INPUT,
        f"node `amount_check` condition: `input.amount > 'x'` failed: {overload(AMOUNT)}",
    ),
    "switch case": (
        switch(),
        INPUT,
        "node `route` cases[1].when: `input.amount / 0 > 1` failed: division by zero in CEL "
        "expression",
    ),
    "foreach items": (
        foreach("input.amount.map(x, x)"),
        INPUT,
        f"node `each` items: `input.amount.map(x, x)` failed: {overload(AMOUNT)}",
    ),
    "foreach items not a list": (
        foreach("input.vendor"),
        INPUT,
        "node `each` items: `input.vendor` gave a string, not a list",
    ),
    "loop while": (
        loop(),
        INPUT,
        "node `rounds` while: `state.n < input.vendor` failed: "
        + overload('`state.n` is int (0), `input.vendor` is string ("acme")'),
    ),
    "a lone task param": (
        line({"id": "pay", "type": "task", "action": "noop",
              "params": {"value": "${input.amount * input.vendor}"}}),
        INPUT,
        f"node `pay` params: `input.amount * input.vendor` failed: {overload(BOTH)}",
    ),
    "a task param template": (
        line({"id": "pay", "type": "task", "action": "noop",
              "params": {"url": "https://pay.example/${input.amount / 0}"}}),
        INPUT,
        "node `pay` params: `input.amount / 0` failed: division by zero in CEL expression",
    ),
    "approval title": (
        line({**APPROVAL, "title": "Pay ${input.vendor - 1}"}, out="approved"),
        INPUT,
        "node `sign` title: `input.vendor - 1` failed: Unsupported operation: string - int. "
        "CEL does not coerce between types — both operands must be the same type. Convert "
        "explicitly with int(x), uint(x), double(x) or string(x) as appropriate.",
    ),
    "approval instructions": (
        line({**APPROVAL, "instructions": "Check ${input.amount / 0}"}, out="approved"),
        INPUT,
        "node `sign` instructions: `input.amount / 0` failed: division by zero in CEL "
        "expression",
    ),
    "approval show": (
        line({**APPROVAL, "show": ["input.amount + input.vendor"]}, out="approved"),
        INPUT,
        f"node `sign` show: `input.amount + input.vendor` failed: {overload(BOTH)}",
    ),
    "wait until": (
        line({"id": "later", "type": "wait", "until": "input.amount"}),
        INPUT,
        "node `later` until: `input.amount` failed: expected a timestamp, got int",
    ),
}  # fmt: skip

CHILD = {
    "format": "braid.graph/1",
    "nodes": [START, END],
    "edges": [edge("start", "done")],
}
SUBFLOW = (
    line({"id": "call", "type": "subflow", "flow": "child",
          "input": {"total": "input.amount + input.vendor"}}),
    INPUT,
    f"node `call` input.total: `input.amount + input.vendor` failed: {overload(BOTH)}",
)  # fmt: skip
