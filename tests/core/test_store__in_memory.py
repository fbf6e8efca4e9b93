"""The in-memory store passes the store contract."""

from collections.abc import Callable

import pytest

from engine.core.store import InMemoryStore
from tests.core.store_contract import CONTRACT


@pytest.mark.parametrize("check", CONTRACT, ids=lambda check: check.__name__)
def test_the_in_memory_store_keeps_the_store_contract(check: Callable) -> None:  # type: ignore[type-arg]
    check(InMemoryStore)
