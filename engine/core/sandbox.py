"""Evaluate risky CEL programs in a child process, under a wall clock and a memory limit.

The native CEL library cannot be interrupted from Python: seven nested `map` calls over
ten elements build ten million values and hold a worker for minutes. Expressions whose
shape can cost more than linear in the data they read (comprehensions, long operator
chains; see `Measure.risky`) therefore run here: one child Python process per thread,
started on first use, fed one JSON line per evaluation. Over its time the child is
killed and replaced; over its address space, or if the library crashes, only the child
dies. Either way the caller gets `ExpressionBudgetError` and moves on.

Run as `python -m engine.core.sandbox`, this module is the child.
"""

from __future__ import annotations

import json
import os
import resource
import select
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import IO, Any

import cel

from engine.core.cel_results import to_plain
from engine.core.expression_errors import ExpressionError
from engine.core.expression_limits import limits
from engine.core.values import JSON

_ROOT = str(Path(__file__).resolve().parents[2])
_START_TIMEOUT_S = 60.0  # a loaded 2-core machine can take seconds to start Python


class SandboxError(Exception):
    """An evaluation the sandbox stopped: over time, over memory, too large, or crashed."""


class EvaluationFailed(Exception):
    """The expression itself failed in the child (a CEL error, not a budget)."""


class Sandbox:
    """One child process serving one thread's evaluations, one at a time."""

    def __init__(self) -> None:
        self.process: subprocess.Popen[bytes] | None = None
        self.owner = os.getpid()
        self.limits = limits()  # what the running child was started with

    def evaluate(self, source: str, activation: dict[str, Any]) -> JSON:
        """Return the plain JSON result; raise SandboxError or EvaluationFailed."""
        current = limits()
        process = self._ready()
        request = json.dumps({"source": source, "activation": activation}).encode() + b"\n"
        assert process.stdin is not None and process.stdout is not None
        try:
            process.stdin.write(request)
            process.stdin.flush()
        except BrokenPipeError:
            raise self._died() from None
        line = _read_line(process.stdout, time.monotonic() + current.timeout_s)
        if line is None:
            self.stop()
            raise SandboxError(
                f"evaluation took longer than {current.timeout_s:g} s (BRAID_CEL_TIMEOUT_S)"
            )
        if not line:
            raise self._died()
        reply = json.loads(line)
        if "error" in reply:
            raise EvaluationFailed(reply["error"])
        if "budget" in reply:
            raise SandboxError(reply["budget"])
        value: JSON = reply["value"]
        return value

    def stop(self) -> None:
        """Kill the child (it is started again on the next evaluation)."""
        if self.process is not None and self.owner == os.getpid():
            self.process.kill()
            self.process.wait()
        self.process = None

    def _ready(self) -> subprocess.Popen[bytes]:
        """Return the running child, starting one (after a fork, a new one)."""
        if self.owner != os.getpid():  # inherited across fork: that child is not ours
            self.process, self.owner = None, os.getpid()
        if self.process is not None and self.limits is not limits():
            self.stop()  # the limits changed since the child started
        if self.process is None or self.process.poll() is not None:
            self.limits = limits()
            self.process = _start()
        return self.process

    def _died(self) -> SandboxError:
        """Describe why the child died while evaluating, and forget it."""
        assert self.process is not None
        code = self.process.wait()
        self.process = None
        current = limits()
        return SandboxError(
            f"evaluation exceeded the sandbox's limits (exit {code}; memory "
            f"{current.memory_mb} MB, BRAID_CEL_MEMORY_MB)"
        )


def _start() -> subprocess.Popen[bytes]:
    """Start a child with the limits in force; return once it is ready to evaluate.

    The child's start (an interpreter and the CEL library, about 0.3 s) is not charged to
    any evaluation's time limit.
    """
    current = limits()
    env = {**os.environ, "PYTHONPATH": _ROOT, "BRAID_SANDBOX_LIMITS": json.dumps(
        {"memory_mb": current.memory_mb, "max_result_bytes": current.max_result_bytes}
    )}  # fmt: skip
    process = subprocess.Popen(
        [sys.executable, "-m", "engine.core.sandbox"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
        cwd=_ROOT,
        close_fds=True,
    )
    assert process.stdout is not None
    if _read_line(process.stdout, time.monotonic() + _START_TIMEOUT_S) != b"ready\n":
        process.kill()
        process.wait()
        raise SandboxError("the expression sandbox did not start")
    return process


def _read_line(stream: IO[bytes], deadline: float) -> bytes | None:
    """Return one line (b"" at end of file), or None when the deadline passes first."""
    chunks = []
    descriptor = stream.fileno()
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return None
        readable, _, _ = select.select([descriptor], [], [], remaining)
        if not readable:
            return None
        chunk = os.read(descriptor, 1 << 16)
        if not chunk:
            return b""
        chunks.append(chunk)
        if chunk.endswith(b"\n"):
            return b"".join(chunks)


_local = threading.local()


def sandbox() -> Sandbox:
    """Return this thread's sandbox."""
    found: Sandbox | None = getattr(_local, "sandbox", None)
    if found is None:
        found = _local.sandbox = Sandbox()
    return found


def evaluate(source: str, activation: dict[str, Any]) -> JSON:
    """Evaluate in this thread's sandbox."""
    return sandbox().evaluate(source, activation)


def _serve() -> None:
    """The child: apply the limits, then answer one JSON line per request."""
    config = json.loads(os.environ.get("BRAID_SANDBOX_LIMITS", "{}"))
    memory = int(config.get("memory_mb", 512)) * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    largest = int(config.get("max_result_bytes", 1_000_000))
    programs: dict[str, cel.Program] = {}
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    for line in sys.stdin.buffer:
        request = json.loads(line)
        source = request["source"]
        try:
            program = programs.get(source) or programs.setdefault(source, cel.compile(source))
            value = to_plain(program.execute(request["activation"]), source)
            text = json.dumps({"value": value})
            if len(text) > largest:
                text = json.dumps({"budget": _too_large(len(text), largest)})
        except MemoryError:
            text = json.dumps({"budget": "evaluation ran out of the sandbox's memory"})
        except (ExpressionError, Exception) as error:  # the library raises many types
            text = json.dumps({"error": str(error)})
        sys.stdout.write(text + "\n")
        sys.stdout.flush()


def _too_large(size: int, largest: int) -> str:
    """Describe a result over the size limit."""
    return (
        f"the result is {size:,} bytes of JSON; the limit is {largest:,} "
        "(BRAID_CEL_MAX_RESULT_BYTES)"
    )


if __name__ == "__main__":
    _serve()
