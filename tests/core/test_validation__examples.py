"""The shared example flows validate clean and round-trip exactly.

The examples are copies of the contract's public examples (../shared/examples) kept in
tests/fixtures/examples, so that a checkout without the shared folder still runs them."""

import json
from pathlib import Path
from typing import Any

import pytest

from engine.core.expressions import Bindings, compile_template
from engine.core.graph import Graph
from engine.core.validation import validate

EXAMPLES = Path(__file__).resolve().parents[1] / "fixtures" / "examples"
NAMES = ["batch-approval.json", "poll-loop.json"]


def load(name: str) -> dict[str, Any]:
    """Return one shared example, read from the in-repo fixtures."""
    document: dict[str, Any] = json.loads((EXAMPLES / name).read_text(encoding="utf-8"))
    return document


@pytest.mark.parametrize("name", NAMES)
def test_a_shared_example_validates_with_no_errors_and_no_warnings(name: str) -> None:
    report = validate(load(name))
    assert (report.errors, report.warnings) == ((), ())


@pytest.mark.parametrize("name", NAMES)
def test_a_shared_example_round_trips_exactly(name: str) -> None:
    document = load(name)
    graph = Graph.from_json(document)
    assert graph.to_json() == document
    assert Graph.from_json(graph.to_json()) == graph


def test_the_batch_example_title_is_interpolated_per_line() -> None:
    review = Graph.from_json(load("batch-approval.json")).node("review")
    title = review.expressions()[0]
    bindings = Bindings(state={}, input={}, variables={"line": {"id": "L2", "amount": 20000}})
    assert compile_template(title.source).render(bindings) == "Line L2: 20000"
