"""A failing expression, wherever a run evaluates one, names its node, field and expression."""

import pytest

from engine.core.values import summary
from tests.core.expression_sites import CASES, CHILD, SUBFLOW
from tests.core.harness import Driver


@pytest.mark.parametrize("site", sorted(CASES))
def test_an_expression_that_fails_names_its_node_field_and_expression(site: str) -> None:
    document, input_value, message = CASES[site]

    driver = Driver(document, input_value)

    assert driver.status == "failed"
    assert driver.state.error == message


def test_a_subflow_input_expression_that_fails_names_the_calling_node() -> None:
    document, input_value, message = SUBFLOW

    driver = Driver(document, input_value, subflows={"child@latest": CHILD})

    assert driver.status == "failed"
    assert driver.state.error == message


def test_the_failed_node_row_carries_the_same_message() -> None:
    document, input_value, message = CASES["if condition"]

    driver = Driver(document, input_value)

    assert driver.row_table()["amount_check"] == ("failed", "root:1", summary(message), 1)
