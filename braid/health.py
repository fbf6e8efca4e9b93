"""The /healthz report: can this process reach its database, broker and channel layer."""

import platform
import uuid
from collections.abc import Callable
from importlib.metadata import version

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.conf import settings
from django.contrib.auth.decorators import login_not_required
from django.db import connection
from django.http import HttpRequest, JsonResponse

from braid.celery import app as celery_app
from engine.runtime.backends import database_vendor
from web.auth import Role, has_role

PACKAGES = ("django", "djangorestframework", "channels", "daphne", "celery")


def check_database() -> str:
    """Run one query on the default database and return its vendor (the storage backend's)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
        cursor.fetchone()
    return database_vendor()


def check_broker() -> str:
    """Open a connection to the Celery broker and return its transport name."""
    with celery_app.connection_for_write() as conn:
        conn.ensure_connection(max_retries=1, timeout=2)
        return str(conn.transport_cls)


def check_channel_layer() -> str:
    """Send a message to a fresh channel and read it back; return the layer's class name."""
    layer = get_channel_layer()
    if layer is None:
        raise RuntimeError("no channel layer configured")
    channel = async_to_sync(layer.new_channel)()
    async_to_sync(layer.send)(channel, {"type": "health.ping", "nonce": uuid.uuid4().hex})
    async_to_sync(layer.receive)(channel)
    return type(layer).__name__


def check_workers() -> str:
    """Report the embedded worker thread, or ping the worker processes over the broker."""
    if settings.BRAID_EMBEDDED_WORKER:
        from braid.worker import embedded_worker_state

        return embedded_worker_state()
    replies = celery_app.control.ping(timeout=1.0)
    if not replies:
        raise RuntimeError("no Celery worker answered a ping within 1 s")
    return f"{len(replies)} worker(s)"


def run_check(check: Callable[[], str]) -> dict[str, object]:
    """Run one check; a failure becomes {ok: false, error} instead of a 500."""
    try:
        return {"ok": True, "detail": check()}
    except Exception as error:  # any failure of a dependency is the report, not a crash
        return {"ok": False, "error": f"{type(error).__name__}: {error}"}


@login_not_required
def healthz(request: HttpRequest) -> JsonResponse:
    """Return 200 with every check ok, else 503; both with a JSON report.

    Anyone may ask, so that load balancers and supervisors can (no login). Only admins see
    the checks' details and the versions, which would help an attacker.
    """
    checks = {
        "database": run_check(check_database),
        "broker": run_check(check_broker),
        "channel_layer": run_check(check_channel_layer),
        "workers": run_check(check_workers),
    }
    ok = all(check["ok"] for check in checks.values())
    report: dict[str, object] = {"ok": ok}
    if has_role(request.user, Role.ADMINS):
        versions = {name: version(name) for name in PACKAGES}
        versions["braid"] = version("braid")
        versions["python"] = platform.python_version()
        report |= {"mode": "embedded" if settings.BRAID_EMBEDDED_WORKER else "scaled"}
        report |= {"checks": checks, "versions": versions}
    else:
        report["checks"] = {name: {"ok": check["ok"]} for name, check in checks.items()}
    return JsonResponse(report, status=200 if ok else 503)
