"""A real websocket client watches a run change colors, on both arrangements:
`braid serve` (the in-memory layer, embedded worker) and scaled mode (Daphne and a
separate `celery worker` over PostgreSQL and Redis: a worker's commit reaches the
browser's socket on Daphne through channels-redis). The scaled one also reads /metrics, to
see a separate worker's counts reach Daphne (one scaled stack for both: it takes ~30 s to
set up on this machine)."""

import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from tests.django.metric_samples import TOKEN, Samples, parse, value
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
    metrics_dir = tmp_path / "metrics"
    metrics_dir.mkdir()
    with scaled_serving(
        scaled_database, require_redis(), tmp_path, workers=1,
        PROMETHEUS_MULTIPROC_DIR=str(metrics_dir), BRAID_METRICS_TOKEN=TOKEN,
    ) as base_url:  # fmt: skip
        # Idle longer than redis-py's default 5 s read timeout: the socket must stay open.
        messages = watch_an_invoice_sign_off(base_url, idle_s=7)
        found = scrape(base_url)
    assert_colors_went_from_waiting_to_completed(messages)
    # The same stack also shows /metrics in scaled mode (docs/operations.md): Daphne steps
    # nothing (no embedded worker with REDIS_URL set), so the start and the two decisions it
    # reports applied were counted by the separate worker's pool process, through the shared
    # PROMETHEUS_MULTIPROC_DIR; the database's figures come from its own scrape.
    assert value(found, "braid_step_events_total") == 3.0
    assert value(found, "braid_runs_finished_total", flow="invoice-sign-off",
                 status="completed") == 1.0  # fmt: skip


def scrape(base_url: str) -> Samples:
    """GET /metrics from the server with the bearer token; return its samples."""
    request = urllib.request.Request(
        base_url + "/metrics", headers={"Authorization": f"Bearer {TOKEN}"}
    )
    with urllib.request.urlopen(request, timeout=15) as response:
        return parse(response.read().decode())
