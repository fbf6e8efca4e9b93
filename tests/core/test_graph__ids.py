"""Node ids cannot contain the separators of execution ids and node paths."""

import pytest

from engine.core.validation import validate
from tests.core.harness import edge, flow


@pytest.mark.parametrize("node_id", ["a:b", "split.legal", "sub/child"])
def test_a_node_id_with_a_separator_is_refused_with_its_code(node_id: str) -> None:
    document = flow(
        [{"id": "start", "type": "start"}, {"id": node_id, "type": "end"}],
        [edge("start", node_id)],
    )
    codes = {(p.code.value, p.node) for p in validate(document).errors}
    assert ("node.id_invalid", node_id) in codes


def test_unicode_ids_without_separators_are_accepted() -> None:
    document = flow(
        [{"id": "start", "type": "start"}, {"id": "prüfung_✓", "type": "end"}],
        [edge("start", "prüfung_✓")],
    )
    assert validate(document).errors == ()
