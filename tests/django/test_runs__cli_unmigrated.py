"""`braid run`, `show` and `decide` on a database that was never migrated say what to run."""

import subprocess
import sys
from pathlib import Path

import pytest

from tests.processes import ROOT, base_env, manage

DEMO = ROOT / "designer" / "demo_flows"
MESSAGE = (
    "The database has no Braid tables yet (or misses some migrations): "
    "run `.venv/bin/python manage.py migrate` first (or `make run`).\n"
)
RUN_ID = "0d6a5d6e-0000-4000-8000-000000000000"


def braid(var_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Run `manage.py braid ARGS` on a fresh SQLite file under var_dir."""
    env = base_env(BRAID_VAR_DIR=str(var_dir), DJANGO_SETTINGS_MODULE="braid.settings")
    return subprocess.run(
        [sys.executable, "manage.py", "braid", *args],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip


@pytest.mark.parametrize(
    "args",
    [
        ("run", str(DEMO / "approval-or-timeout.json"), "--max-wait", "0"),
        ("show", RUN_ID),
        ("decide", RUN_ID, "review", "--user", "finance", "approve"),
    ],
)
def test_an_unmigrated_database_gets_the_command_to_run_and_status_2(
    tmp_path: Path, args: tuple[str, ...]
) -> None:
    result = braid(tmp_path, *args)

    assert (result.returncode, result.stdout) == (2, MESSAGE)
    assert "Traceback" not in result.stderr


def test_after_migrate_the_same_command_runs(tmp_path: Path) -> None:
    env = base_env(BRAID_VAR_DIR=str(tmp_path), DJANGO_SETTINGS_MODULE="braid.settings")
    manage(env, "migrate", "--no-input")

    result = braid(tmp_path, "show", RUN_ID)

    assert (result.returncode, result.stdout) == (1, f"no run has the id {RUN_ID!r}\n")
