"""The scheduler's table: one NodeKind per node type, each from its own module in core/nodes."""

from pathlib import Path

from engine.core import graph as g
from engine.core import nodes
from engine.core.scheduler import KINDS

NODES = Path(nodes.__file__).parent


def test_every_node_type_has_one_row_in_the_table() -> None:
    assert sorted(KINDS) == sorted(g.NodeType)


def test_each_row_is_the_kind_its_own_module_defines() -> None:
    modules = {kind.execute.__module__ for kind in KINDS.values()}
    assert len(modules) == len(KINDS)
    assert modules == {
        f"engine.core.nodes.{path.stem}" for path in NODES.glob("*.py") if path.stem != "__init__"
    }
