"""A `set` node: every value sees the state as the node found it; writes apply together."""

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.core.harness import Driver, edge, flow

START, END = {"id": "start", "type": "start"}, {"id": "done", "type": "end"}


def set_flow(values: dict[str, str], state: dict[str, str]) -> dict[str, Any]:
    """start -> one set node -> end."""
    nodes: list[dict[str, Any]] = [START, {"id": "bump", "type": "set", "values": values}, END]
    return flow(nodes, [edge("start", "bump"), edge("bump", "done")], state)


def test_a_value_sees_the_old_state_even_when_an_earlier_key_writes_its_field() -> None:
    document = set_flow(
        {"n": "state.n + 1", "log": "[state.n]"}, {"n": "overwrite", "log": "append"}
    )
    document["state"]["n"]["default"] = 5

    driver = Driver(document)

    assert driver.status == "completed"
    assert driver.result == {"n": 6, "log": [5]}


def test_the_order_of_keys_does_not_change_the_result_when_reversed() -> None:
    forward = {"n": "state.n + 1", "log": "[state.n]", "twice": "state.n * 2"}
    state = {"n": "overwrite", "log": "append", "twice": "overwrite"}
    backward = dict(reversed(forward.items()))

    results = []
    for values in (forward, backward):
        document = set_flow(values, state)
        document["state"]["n"]["default"] = 0
        results.append(Driver(document).result)

    assert results == [{"n": 1, "log": [0], "twice": 0}, {"n": 1, "log": [0], "twice": 0}]


FIELDS = ("a", "b", "c")
EXPRESSIONS = st.sampled_from(
    ["state.a + 1", "state.b * 2", "state.c - state.a", "state.a + state.b + state.c", "7"]
)


@settings(max_examples=60, deadline=None)
@given(
    values=st.dictionaries(st.sampled_from(FIELDS), EXPRESSIONS, min_size=1, max_size=3),
    order=st.permutations(FIELDS),
    start=st.tuples(st.integers(-50, 50), st.integers(-50, 50), st.integers(-50, 50)),
)
def test_a_set_nodes_result_does_not_depend_on_the_order_of_its_keys(
    values: dict[str, str], order: list[str], start: tuple[int, int, int]
) -> None:
    state = dict.fromkeys(FIELDS, "overwrite")
    reordered = {name: values[name] for name in order if name in values}
    results = []
    for mapping in (values, reordered):
        document = set_flow(mapping, state)
        for name, value in zip(FIELDS, start, strict=True):
            document["state"][name]["default"] = value
        results.append(Driver(document).result)

    expected = dict(zip(FIELDS, start, strict=True))
    found = expected.copy()
    for name, expression in values.items():
        a, b, c = found["a"], found["b"], found["c"]
        expected[name] = {
            "state.a + 1": a + 1,
            "state.b * 2": b * 2,
            "state.c - state.a": c - a,
            "state.a + state.b + state.c": a + b + c,
            "7": 7,
        }[expression]
    assert results == [expected, expected]
