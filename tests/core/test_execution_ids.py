"""Execution ids: parsing, segments, prefixes, the supersedes order and its encoding."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.core.execution_ids import (
    ExecutionId,
    ExecutionIdError,
    Segment,
    branch_text,
    child_text,
    common_prefix,
    common_prefix_text,
    iteration_text,
)

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


@given(shapes.flatmap(ids_of_shape), st.sampled_from(NAMES), st.integers(1, 10**6))
def test_child_texts_equal_the_texts_of_child_ids(
    parent: ExecutionId, name: str, number: int
) -> None:
    text = str(parent)
    assert child_text(text, name, number) == str(parent.child(name, number))
    assert iteration_text(text, name, number) == str(parent.iteration(name, number))
    assert branch_text(text, name, "b7") == str(parent.branch(name, "b7"))


@pytest.mark.parametrize(("name", "number"), [("", 1), ("a:b", 1), ("a", 0), ("a", 10**10)])
def test_a_child_text_refuses_a_bad_segment(name: str, number: int) -> None:
    with pytest.raises(ExecutionIdError):
        child_text("root:1", name, number)


@given(st.lists(shapes.flatmap(ids_of_shape), min_size=1, max_size=5))
def test_the_common_prefix_of_texts_is_that_of_the_ids(ids: list[ExecutionId]) -> None:
    rooted = [ExecutionId((Segment("root", 1), *i.segments[1:])) for i in ids]
    assert common_prefix_text([str(i) for i in rooted]) == str(common_prefix(rooted))


def test_the_common_prefix_of_texts_keeps_whole_segments() -> None:
    texts = ["root:1:fork.b1:1", "root:1:fork.b10:1", "root:1:fork.b1:2"]
    assert common_prefix_text(texts) == "root:1"
    assert common_prefix_text(["root:1:each:3:x:1", "root:1:each:3:y:1"]) == "root:1:each:3"
    with pytest.raises(ExecutionIdError):
        common_prefix_text(["root:1", "root:2"])
