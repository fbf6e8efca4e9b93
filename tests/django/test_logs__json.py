"""BRAID_LOG_FORMAT=json: one JSON object a line, with the run, the node and the request
where they apply; X-Request-ID in and out."""

import io
import json
import logging
import logging.config
import os
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from django.conf import settings

from designer import services as flows
from engine.log_context import ContextFilter
from engine.models import Run
from runs import services
from tests.django.approval_helpers import start
from tests.django.fixture_types import ClientFor, DemoUsers
from tests.django.graphs import ALWAYS_FAILS
from tests.processes import ROOT

GIVEN_ID = "req-7f3a.b_9:1"


@pytest.fixture
def json_lines() -> Iterator[io.StringIO]:
    """Write every record to a stream as BRAID_LOG_FORMAT=json does (the settings' own
    formatter and filter), through a handler on the root logger."""
    configurator = logging.config.DictConfigurator({"version": 1})
    formatter = configurator.configure_formatter(dict(settings.LOG_FORMATTERS["json"]))
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(formatter)
    handler.addFilter(ContextFilter())
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        yield stream
    finally:
        root.removeHandler(handler)


def lines(stream: io.StringIO, logger: str) -> list[dict[str, Any]]:
    """Return the JSON lines written so far by one logger."""
    decoded = [json.loads(line) for line in stream.getvalue().splitlines()]
    return [line for line in decoded if line["logger"] == logger]


@pytest.mark.django_db
def test_a_sane_request_id_is_kept_returned_and_on_the_requests_log_lines(
    demo: DemoUsers, client_for: ClientFor, json_lines: io.StringIO
) -> None:
    missing = "/api/runs/6f9619ff-8b86-d011-b42d-00cf4fc964ff/"
    response = client_for("admin").get(missing, headers={"X-Request-ID": GIVEN_ID})
    assert (response.status_code, response["X-Request-ID"]) == (404, GIVEN_ID)
    (line,) = lines(json_lines, "django.request")  # logged after the middleware returned
    assert (line["level"], line["message"], line["request_id"]) == (
        "WARNING", f"Not Found: {missing}", GIVEN_ID
    )  # fmt: skip
    assert "run_id" not in line and "node" not in line
    assert line["time"].endswith("+00:00")


@pytest.mark.django_db
def test_an_insane_or_missing_request_id_is_replaced_by_a_new_one(client_for: ClientFor) -> None:
    client = client_for("admin")
    seen = set()
    for given in ("two words", "x" * 129, "a\u00e9b", '{"forged": 1}', None):
        headers = {} if given is None else {"X-Request-ID": given}
        returned = client.get("/healthz", headers=headers)["X-Request-ID"]
        assert len(returned) == 32 and int(returned, 16) >= 0, given
        seen.add(returned)
    assert len(seen) == 5
    assert client.get("/healthz", headers={"X-Request-ID": "x" * 128})["X-Request-ID"] == "x" * 128


@pytest.mark.django_db
def test_a_500_names_the_request_id_of_its_header_and_log_line(
    demo: DemoUsers, client_for: ClientFor, json_lines: io.StringIO,
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("secret internals")

    monkeypatch.setattr(services, "latest_version", broken)
    response = client_for("analyst").post(
        "/api/runs/", {"flow": "staged-gathers"}, content_type="application/json",
        headers={"X-Request-ID": GIVEN_ID},
    )  # fmt: skip
    assert (response.status_code, response.json()["request_id"]) == (500, GIVEN_ID)
    assert response["X-Request-ID"] == GIVEN_ID
    (line,) = lines(json_lines, "braid.api")
    assert (line["message"], line["request_id"]) == (
        f"request {GIVEN_ID} to /api/runs/ failed", GIVEN_ID
    )  # fmt: skip
    assert "RuntimeError: secret internals" in line["exc_info"]


@pytest.mark.django_db
def test_a_failed_actions_line_names_its_run_and_node(
    demo_users: DemoUsers, client_for: ClientFor, json_lines: io.StringIO
) -> None:
    flows.import_graph(demo_users["analyst"], ALWAYS_FAILS, "always-fails", True)
    run = start(client_for("admin"), "always-fails", {})
    assert run.status == "failed"
    (line,) = lines(json_lines, "engine.runtime.results")
    assert line == {
        "time": line["time"],
        "level": "WARNING",
        "logger": "engine.runtime.results",
        "message": line["message"],
        "run_id": str(run.pk),
        "node": "flaky",
    }
    assert line["message"].startswith("action fail_sometimes (attempt 1) failed: failed on")
    assert Run.objects.get(pk=run.pk).status == "failed"


# The settings' LOGGING as Django applies it at start-up, without starting all of Django.
SCRIPT = """
import logging.config
from braid import settings
from engine.log_context import about_run
logging.config.dictConfig(settings.LOGGING)
with about_run("run-1", "pay"):
    logging.getLogger("braid.x").warning("hi %s", 2)
"""


def in_a_process(log_format: str | None, *command: str) -> subprocess.CompletedProcess[str]:
    """Run a command of this checkout with BRAID_LOG_FORMAT set (or unset)."""
    env = {key: value for key, value in os.environ.items() if key != "BRAID_LOG_FORMAT"}
    if log_format is not None:
        env["BRAID_LOG_FORMAT"] = log_format
    return subprocess.run([sys.executable, *command], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=60)  # fmt: skip


def test_the_settings_write_json_lines_when_asked_plain_text_by_default_and_refuse_others(
) -> None:  # fmt: skip
    logged = in_a_process("json", "-c", SCRIPT)
    (line,) = logged.stderr.splitlines()
    decoded = json.loads(line)
    assert decoded == {"time": decoded["time"], "level": "WARNING", "logger": "braid.x",
                       "message": "hi 2", "run_id": "run-1", "node": "pay"}  # fmt: skip
    assert in_a_process(None, "-c", SCRIPT).stderr == "hi 2\n"
    refused = in_a_process("xml", "-c", "import braid.settings")
    assert refused.returncode == 1
    assert refused.stderr.splitlines()[-1] == (
        "django.core.exceptions.ImproperlyConfigured: BRAID_LOG_FORMAT is text or json, not 'xml'"
    )
