"""The Django store passes the core's store contract (on SQLite, and on PostgreSQL's pass)."""

import uuid
from collections.abc import Callable

import pytest

from engine.runtime.store import DjangoStore
from tests.core.store_contract import CONTRACT


class FreshIds(DjangoStore):
    """The Django store with run ids mapped to UUIDs, as Run's primary key needs."""

    def __init__(self) -> None:
        super().__init__()
        self.ids: dict[str, str] = {}

    def key(self, run_id: str) -> str:
        return self.ids.setdefault(run_id, str(uuid.uuid5(uuid.NAMESPACE_URL, run_id)))

    def create(self, run_id, flow, input_value, graphs):  # type: ignore[no-untyped-def]
        super().create(self.key(run_id), flow, input_value, graphs)

    def commit(self, run_id, *args, **kwargs):  # type: ignore[no-untyped-def]
        super().commit(self.key(run_id), *args, **kwargs)

    def load(self, run_id):  # type: ignore[no-untyped-def]
        return super().load(self.key(run_id) if run_id in self.ids else run_id)

    def rows(self, run_id):  # type: ignore[no-untyped-def]
        return super().rows(self.key(run_id))

    def trace(self, run_id):  # type: ignore[no-untyped-def]
        return super().trace(self.key(run_id))

    def approvals(self, run_id):  # type: ignore[no-untyped-def]
        return super().approvals(self.key(run_id) if run_id in self.ids else run_id)


@pytest.mark.django_db
@pytest.mark.parametrize("check", CONTRACT, ids=lambda check: check.__name__)
def test_the_django_store_keeps_the_store_contract(check: Callable) -> None:  # type: ignore[type-arg]
    check(FreshIds)
