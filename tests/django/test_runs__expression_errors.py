"""On the durable path, a failing expression names its node, field and expression, as in-process."""

import pytest

from engine.models import NodeState
from engine.runtime import runs
from runs import services
from tests.core.expression_sites import CASES
from tests.django.durable_driver import drain


@pytest.mark.django_db
@pytest.mark.parametrize("site", sorted(CASES))
def test_a_durable_run_fails_with_the_message_that_names_the_node(site: str) -> None:
    document, input_value, message = CASES[site]

    done = drain(runs.create_run(services.resolve_graphs(document), "flow", input_value))

    failed = NodeState.objects.filter(run_id=done.pk, status="failed").values_list("node")
    assert (done.status, done.error) == ("failed", message)
    assert [node for (node,) in failed] == [message.split("`")[1]]
