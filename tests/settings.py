"""The suite's settings: Braid's own, served over plain http as on 127.0.0.1."""

import os

os.environ.setdefault("DJANGO_HTTPS", "0")

from braid.settings import *  # noqa: F403

# The test database is a file, not SQLite's shared in-memory database: browser tests serve
# pages from a live server thread, and shared-cache memory databases answer a concurrent
# writer with an immediate "database table is locked", where a file in WAL mode waits out
# the lock (the timeout in braid.settings). One file per pytest process, so that two suites
# run side by side (a second checkout, a focused run beside the full one) never share it.
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":  # noqa: F405
    DATABASES["default"]["TEST"] = {"NAME": str(VAR_DIR / f"test-{os.getpid()}.sqlite3")}  # noqa: F405
