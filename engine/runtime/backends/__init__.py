"""The storage backends: everything the runtime does differently on PostgreSQL and on
SQLite (locking, SKIP LOCKED, upserts, pipelines, server-side binding) is a method of one
backend object. This is the one place that asks which database it is on.
"""

from django.db import connection

from engine.runtime.backends.portable import PortableBackend
from engine.runtime.backends.postgresql import PostgresBackend

_BACKENDS: dict[str, PortableBackend] = {"postgresql": PostgresBackend()}
_PORTABLE = PortableBackend()


def backend() -> PortableBackend:
    """Return the storage backend of the default database's vendor."""
    return _BACKENDS.get(connection.vendor, _PORTABLE)


def database_vendor() -> str:
    """Return the default database's vendor name ("postgresql", "sqlite")."""
    return connection.vendor
