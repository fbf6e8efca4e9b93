"""The Django store passes the core's store contract (on SQLite, and on PostgreSQL's pass)."""

import uuid
from collections.abc import Callable
from typing import Any

import pytest

from engine.core.events import RequestApproval, Trace
from engine.core.rows import NodeRow
from engine.core.store import StoredRun
from engine.runtime.store import DjangoStore
from tests.core.store_contract import CONTRACT, StoreFactory


class FreshIds(DjangoStore):
    """The Django store with run ids mapped to UUIDs, as Run's primary key needs."""

    def __init__(self) -> None:
        super().__init__()
        self.ids: dict[str, str] = {}

    def key(self, run_id: str) -> str:
        return self.ids.setdefault(run_id, str(uuid.uuid5(uuid.NAMESPACE_URL, run_id)))

    def create(self, run_id: str, flow: str, input_value: Any, graphs: dict[str, Any]) -> None:
        super().create(self.key(run_id), flow, input_value, graphs)

    def commit(self, run_id: str, *args: Any, **kwargs: Any) -> None:
        super().commit(self.key(run_id), *args, **kwargs)

    def load(self, run_id: str) -> StoredRun:
        return super().load(self.key(run_id) if run_id in self.ids else run_id)

    def rows(self, run_id: str) -> dict[str, NodeRow]:
        return super().rows(self.key(run_id))

    def trace(self, run_id: str) -> list[Trace]:
        return super().trace(self.key(run_id))

    def approvals(self, run_id: str) -> list[RequestApproval]:
        return super().approvals(self.key(run_id) if run_id in self.ids else run_id)


@pytest.mark.django_db
@pytest.mark.parametrize("check", CONTRACT, ids=lambda check: check.__name__)
def test_the_django_store_keeps_the_store_contract(check: Callable[[StoreFactory], None]) -> None:
    check(FreshIds)
