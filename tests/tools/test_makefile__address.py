"""`make run` and `make run-scaled` serve where HOST and PORT say (127.0.0.1:8000 unless set).

`make -n` prints the recipes without running them; the Procfile's own use of HOST and PORT
is tested against a real Daphne in test_supervise.py.
"""

import shutil
import subprocess

import pytest

from tests.processes import ROOT, base_env


def recipe(target: str, **env: str) -> list[str]:
    """Return the lines `make -n TARGET` would run with the environment's additions."""
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    # A HOST or PORT of the caller's environment (tcsh exports HOST) would choose instead.
    clean = {key: value for key, value in base_env().items() if key not in ("HOST", "PORT")}
    result = subprocess.run(
        ["make", "-n", "--no-print-directory", target], cwd=ROOT, env=clean | env,
        capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    return result.stdout.splitlines()


def test_run_serves_on_127_0_0_1_8000_unless_host_and_port_say_otherwise() -> None:
    serve = ".venv/bin/python manage.py braid serve"
    assert recipe("run")[-1] == f"{serve} --host 127.0.0.1 --port 8000"
    assert recipe("run", HOST="0.0.0.0", PORT="8123")[-1] == f"{serve} --host 0.0.0.0 --port 8123"


def test_run_scaled_hands_host_and_port_to_the_procfile() -> None:
    supervise = ".venv/bin/python -m braid.supervise Procfile"
    assert recipe("run-scaled")[-1] == f"HOST=127.0.0.1 PORT=8000 {supervise}"
    assert recipe("run-scaled", PORT="8123")[-1] == f"HOST=127.0.0.1 PORT=8123 {supervise}"
