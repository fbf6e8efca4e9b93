"""/metrics in scaled mode: Daphne reports what separate Celery worker processes counted
(PROMETHEUS_MULTIPROC_DIR), and its own open websockets."""

import time
import urllib.request
from pathlib import Path

import pytest
from websockets.sync.client import connect

from tests.django.metric_samples import TOKEN, Samples, parse, value
from tests.processes import Browserless, scaled_serving, socket_headers
from tests.scaled.test_scaled_mode import scaled_database  # noqa: F401  (a fixture)
from tests.servers import require_redis

pytestmark = [pytest.mark.redis, pytest.mark.postgres]


def scrape(base_url: str) -> Samples:
    """GET /metrics from the server with the bearer token; return its samples."""
    request = urllib.request.Request(
        base_url + "/metrics", headers={"Authorization": f"Bearer {TOKEN}"}
    )
    with urllib.request.urlopen(request, timeout=15) as response:
        return parse(response.read().decode())


def wait_for_status(client: Browserless, run_id: str, status: str) -> None:
    """Poll the run until it has the status, for up to 60 s."""
    deadline = time.monotonic() + 60
    while client.get_json(f"/api/runs/{run_id}/")[1]["status"] != status:
        assert time.monotonic() < deadline, f"run {run_id} never became {status}"
        time.sleep(0.2)


def test_daphne_reports_the_steps_and_actions_of_separate_worker_processes(
    scaled_database: str,  # noqa: F811
    tmp_path: Path,
) -> None:
    metrics_dir = tmp_path / "metrics"
    metrics_dir.mkdir()
    with scaled_serving(
        scaled_database, require_redis(), tmp_path, workers=1,
        PROMETHEUS_MULTIPROC_DIR=str(metrics_dir), BRAID_METRICS_TOKEN=TOKEN,
    ) as base_url:  # fmt: skip
        client = Browserless(base_url)
        client.login("admin", "braid-admin")
        status, run = client.post_json("/api/runs/", {"flow": "staged-gathers", "input": {}})
        assert status == 201, run
        wait_for_status(client, run["id"], "completed")
        found = scrape(base_url)
        url = base_url.replace("http://", "ws://") + "/ws/runs/"
        with connect(url, additional_headers=socket_headers(client), open_timeout=10) as socket:
            socket.recv(timeout=10)  # the snapshot: the socket is counted by now
            watching = scrape(base_url)
        time.sleep(0.5)  # the close reaches Daphne's consumer
        closed = scrape(base_url)
    # The start, then the noop's result: two steps, both on the worker's pool process (with
    # REDIS_URL set Daphne has no embedded worker and steps nothing).
    assert value(found, "braid_step_seconds_count") == 2.0
    assert value(found, "braid_step_events_total") == 2.0
    assert value(found, "braid_action_seconds_count", action="noop", outcome="completed") == 1
    assert value(found, "braid_runs_finished_total", flow="staged-gathers",
                 status="completed") == 1.0  # fmt: skip
    assert value(watching, "braid_websockets", socket="runs") == 1.0
    assert value(closed, "braid_websockets", socket="runs") == 0.0
