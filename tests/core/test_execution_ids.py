"""Execution ids: parsing, segments, prefixes, the supersedes order and its encoding."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.core.execution_ids import ExecutionId, ExecutionIdError, Segment

NAMES = ["lines", "split.legal", "poll", "review"]


def ids_of_shape(shape: tuple[str, ...]) -> st.SearchStrategy[ExecutionId]:
    """Generate ids with the given segment names after root."""
    numbers = st.lists(st.integers(1, 10**6), min_size=len(shape) + 1, max_size=len(shape) + 1)
    return numbers.map(
        lambda ns: ExecutionId(
            tuple(Segment(n, k) for n, k in zip(("root", *shape), ns, strict=True))
        )
    )


shapes = st.lists(st.sampled_from(NAMES), max_size=4).map(tuple)
pairs = shapes.flatmap(lambda shape: st.tuples(ids_of_shape(shape), ids_of_shape(shape)))


def test_an_id_parses_and_formats_back_to_the_same_text() -> None:
    text = "root:1:review:4:split.legal:1"
    parsed = ExecutionId.parse(text)
    assert parsed.segments == (Segment("root", 1), Segment("review", 4), Segment("split.legal", 1))
    assert str(parsed) == text


def test_child_segments_name_iterations_branches_and_subflow_calls() -> None:
    root = ExecutionId.root()
    assert str(root.iteration("lines", 2)) == "root:1:lines:2"
    assert str(root.branch("split", "legal")) == "root:1:split.legal:1"
    assert str(root.iteration("review", 4).subflow("assess")) == "root:1:review:4:assess:1"


@pytest.mark.parametrize(
    "text",
    [
        "",
        "root",
        "root:0",
        "root:x",
        "lines:1",
        "root:1:lines",
        "root:1::2",
        "root:-1",
        "root:\u0661",
    ],
)
def test_malformed_ids_are_refused(text: str) -> None:
    with pytest.raises(ExecutionIdError):
        ExecutionId.parse(text)


def test_a_later_iteration_supersedes_an_earlier_one_at_the_first_differing_segment() -> None:
    older = ExecutionId.parse("root:1:poll:2:split.a:1")
    newer = ExecutionId.parse("root:1:poll:3:split.a:1")
    assert newer.supersedes(older)
    assert not older.supersedes(newer)
    assert not newer.supersedes(newer)
    assert ExecutionId.parse("root:2:poll:1").supersedes(ExecutionId.parse("root:1:poll:9"))


def test_ids_with_different_segments_cannot_be_ordered() -> None:
    with pytest.raises(ExecutionIdError):
        ExecutionId.parse("root:1:a:1").supersedes(ExecutionId.parse("root:1:b:1"))
    with pytest.raises(ExecutionIdError):
        _ = ExecutionId.parse("root:1") < ExecutionId.parse("root:1:a:1")


def test_prefixes_are_ancestors() -> None:
    parent = ExecutionId.parse("root:1:lines:2")
    assert parent.is_prefix_of(ExecutionId.parse("root:1:lines:2:split.a:1"))
    assert parent.is_prefix_of(parent)
    assert not parent.is_prefix_of(ExecutionId.parse("root:1:lines:3:split.a:1"))
    assert not parent.is_prefix_of(ExecutionId.root())


@given(pairs)
def test_supersedes_is_the_order_of_the_numbers(pair: tuple[ExecutionId, ExecutionId]) -> None:
    a, b = pair
    numbers_a = [s.number for s in a.segments]
    numbers_b = [s.number for s in b.segments]
    assert a.supersedes(b) == (numbers_a > numbers_b)
    assert (a < b) == (numbers_a < numbers_b)
    assert a.supersedes(b) or b.supersedes(a) or a == b


@given(pairs)
def test_the_encoding_sorts_as_bytes_exactly_like_the_ids(
    pair: tuple[ExecutionId, ExecutionId],
) -> None:
    a, b = pair
    ea, eb = a.encode().encode(), b.encode().encode()
    assert (ea < eb) == (a < b)
    assert (ea == eb) == (a == b)


@given(shapes.flatmap(ids_of_shape))
def test_text_and_encoding_round_trip(execution_id: ExecutionId) -> None:
    assert ExecutionId.parse(str(execution_id)) == execution_id
    assert ExecutionId.decode(execution_id.encode()) == execution_id
