"""A real websocket client watches a run change colors, on both arrangements:
`braid serve` (the in-memory layer, embedded worker) and scaled mode (Daphne and a
separate `celery worker` over PostgreSQL and Redis: a worker's commit reaches the
browser's socket on Daphne through channels-redis)."""

import time
from pathlib import Path
from typing import Any

import pytest

from tests.processes import Browserless, braid_serving, scaled_serving, watch_run
from tests.scaled.test_scaled_mode import scaled_database  # noqa: F401  (a fixture)
from tests.servers import require_redis

INVOICE = {"invoice": {"id": "I-7", "amount": 900, "vendor": "ACME"}}


def sign_off(base_url: str) -> None:
    """Finance and legal each approve their open request of the run."""
    for user in ("finance", "legal"):
        client = Browserless(base_url)
        client.login(user, f"braid-{user}")
        status, page = client.get_json("/api/approvals/")
        assert status == 200, page
        for request in page["results"]:
            status, body = client.post_json(
                f"/api/approvals/{request['id']}/decide/", {"decision": "approve"}
            )
            assert status == 202, body


def watch_an_invoice_sign_off(base_url: str, idle_s: float = 0) -> list[dict[str, Any]]:
    """Start an invoice run as admin, watch it while finance and legal approve (after the
    socket has been idle for idle_s seconds)."""
    admin = Browserless(base_url)
    admin.login("admin", "braid-admin")
    status, run = admin.post_json("/api/runs/", {"flow": "invoice-sign-off", "input": INVOICE})
    assert status == 201, run
    run_id = run["id"]
    waiting = watch_run(admin, run_id, until="waiting")
    assert waiting[0]["type"] == "snapshot"

    def later() -> None:
        time.sleep(idle_s)
        sign_off(base_url)

    return watch_run(admin, run_id, until="completed", then=later)


def assert_colors_went_from_waiting_to_completed(messages: list[dict[str, Any]]) -> None:
    snapshot, deltas = messages[0], messages[1:]
    assert snapshot["type"] == "snapshot" and snapshot["status"] == "waiting"
    assert snapshot["colors"]["fin"] == "waiting" and snapshot["colors"]["leg"] == "waiting"
    assert snapshot["reasons"]["fin"] == "Waiting for a decision by finance"
    assert deltas and all(d["type"] == "delta" for d in deltas)
    assert [m["seq"] for m in messages] == list(range(1, len(messages) + 1))
    final = dict(snapshot["colors"])
    for delta in deltas:
        final.update(delta["colors"])
    assert final["fin"] == final["leg"] == final["both"] == final["done"] == "completed"


def test_a_socket_on_braid_serve_sees_the_run_change(tmp_path: Path) -> None:
    with braid_serving(tmp_path) as base_url:
        assert_colors_went_from_waiting_to_completed(watch_an_invoice_sign_off(base_url))


@pytest.mark.redis
@pytest.mark.postgres
def test_a_socket_on_daphne_sees_a_separate_workers_commits(
    scaled_database: str,  # noqa: F811
    tmp_path: Path,
) -> None:
    with scaled_serving(scaled_database, require_redis(), tmp_path, workers=1) as base_url:
        # Idle longer than redis-py's default 5 s read timeout: the socket must stay open.
        messages = watch_an_invoice_sign_off(base_url, idle_s=7)
    assert_colors_went_from_waiting_to_completed(messages)
