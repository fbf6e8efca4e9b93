"""The in-process runtime stores approval requests and decides the one a person names."""

import json
from pathlib import Path

import pytest

from engine.core.actions import ActionRegistry
from engine.core.events import Decision, RunStatus
from engine.core.runtime import (
    AmbiguousApproval,
    EventRefused,
    InProcessRuntime,
    ManualClock,
    NoSuchApproval,
    OpenApproval,
    choose_approval,
)
from engine.core.state import MAIN
from engine.core.store import InMemoryStore
from tests.core.harness import graph_of

DEMO = Path(__file__).resolve().parents[2] / "designer" / "demo_flows"
BATCH = json.loads((DEMO / "batch-line-approval.json").read_text())
LINES = {
    "lines": [{"id": "A", "amount": 20000}, {"id": "B", "amount": 5}, {"id": "C", "amount": 30000}]
}
ITEM_1, ITEM_3 = (
    OpenApproval("k1", "review", "root:1:lines:1"),
    OpenApproval("k3", "review", "root:1:lines:3"),
)


def test_the_only_open_approval_at_a_node_is_chosen_without_an_execution_id() -> None:
    assert choose_approval([ITEM_1, OpenApproval("k9", "other", "root:1")], "review") == ITEM_1


def test_several_open_approvals_at_a_node_need_an_execution_id_and_the_error_lists_them() -> None:
    with pytest.raises(AmbiguousApproval) as error:
        choose_approval([ITEM_1, ITEM_3], "review")
    assert str(error.value) == (
        "2 approvals are open at 'review'; name one by its execution id: "
        "root:1:lines:1, root:1:lines:3"
    )
    assert choose_approval([ITEM_1, ITEM_3], "review", "root:1:lines:3") == ITEM_3


def test_an_unknown_node_or_execution_id_is_no_such_approval() -> None:
    with pytest.raises(NoSuchApproval) as no_node:
        choose_approval([ITEM_1], "sign")
    assert str(no_node.value) == "no open approval at 'sign'"
    with pytest.raises(NoSuchApproval) as no_execution:
        choose_approval([ITEM_1, ITEM_3], "review", "root:1:lines:2")
    assert str(no_execution.value) == (
        "no open approval at 'review' has the execution id 'root:1:lines:2'; "
        "open there: root:1:lines:1, root:1:lines:3"
    )


def test_the_in_process_runtime_stores_one_request_per_item_and_closes_each_decided_one() -> None:
    store = InMemoryStore()
    runtime = InProcessRuntime(store, ActionRegistry(), ManualClock())
    state = runtime.start("r", {MAIN: graph_of(BATCH)}, "batch", LINES)
    assert [
        (r.node, r.execution_id, r.title, r.groups, r.policy) for r in store.approvals("r")
    ] == [
        ("review", "root:1:lines:1", "Line A: 20000", ("finance",), "any"),
        ("review", "root:1:lines:3", "Line C: 30000", ("finance",), "any"),
    ]
    with pytest.raises(AmbiguousApproval):
        runtime.decide(state, "review", "fiona", ("finance",), Decision.APPROVE)
    with pytest.raises(EventRefused, match=r"^leo is in none of the groups \['finance'\]$"):
        runtime.decide(state, "review", "leo", ("legal",), Decision.APPROVE, "", "root:1:lines:3")
    state = runtime.decide(
        state, "review", "fiona", ("finance",), Decision.APPROVE, "", "root:1:lines:3"
    )
    assert [r.execution_id for r in store.approvals("r")] == ["root:1:lines:1"]
    state = runtime.decide(state, "review", "fiona", ("finance",), Decision.REJECT)
    assert (state.status, state.current_view()) == (
        RunStatus.COMPLETED,
        {"approved": ["C"], "auto": ["B"], "errors": []},
    )
    assert store.approvals("r") == []
    assert store.closed["r"] == {
        "r|review|root:1:lines:1|approval": "rejected",
        "r|review|root:1:lines:3|approval": "approved",
    }
