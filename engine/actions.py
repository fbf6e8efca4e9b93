"""Built-in actions, registered on the project's action registry.

They do I/O, so they live outside the pure core: `http.request` (only to the hosts and
ports on the BRAID_HTTP_ALLOWLIST setting, empty by default, redirects included; bounded by
BRAID_HTTP_MAX_REQUEST_BYTES, BRAID_HTTP_MAX_RESPONSE_BYTES and BRAID_HTTP_TIMEOUT_S:
engine/egress.py), `sleep`, `noop`,
`fail_sometimes` (deterministic by seed) and `python` (a dotted path on the
BRAID_PYTHON_ACTIONS setting).
"""

import dataclasses
import hashlib
import importlib
import json
import time
from typing import Any

from django.conf import settings

from engine import egress
from engine.core.actions import ActionContext, ActionError, ActionRegistry
from engine.core.values import loads_strict

ACTIONS = ActionRegistry()
MAX_SLEEP_S = 60.0


@ACTIONS.register("noop", params={"value": object})
def noop(params: dict[str, Any], context: ActionContext) -> Any:
    """Do nothing; return `value` when given."""
    return params.get("value")


@ACTIONS.register("sleep", params={"seconds": (int, float)}, required=["seconds"])
def sleep(params: dict[str, Any], context: ActionContext) -> Any:
    """Sleep up to 60 s (longer pauses are `wait` nodes, which hold no worker)."""
    seconds = float(params["seconds"])
    if not 0 <= seconds <= MAX_SLEEP_S:
        raise ActionError(f"sleep takes 0..{MAX_SLEEP_S:g} s; use a wait node for longer")
    time.sleep(seconds)
    return {"slept_s": seconds}


@ACTIONS.register(
    "fail_sometimes", params={"seed": (int, str), "rate": (int, float), "value": object}
)
def fail_sometimes(params: dict[str, Any], context: ActionContext) -> Any:
    """Fail with probability `rate`, decided by the seed, node, execution and attempt."""
    rate = float(params.get("rate", 0.5))
    material = f"{params.get('seed', 0)}|{context.node}|{context.execution_id}|{context.attempt}"
    draw = int(hashlib.sha256(material.encode()).hexdigest()[:8], 16) / 0xFFFFFFFF
    if draw < rate:
        raise ActionError(f"failed on purpose (draw {draw:.3f} < rate {rate:g})")
    return params.get("value", {"draw": round(draw, 6)})


@ACTIONS.register(
    "http.request",
    params={"url": str, "method": str, "json": object, "headers": dict, "timeout_s": (int, float)},
    required=["url"],
)
def http_request(params: dict[str, Any], context: ActionContext) -> Any:
    """Send an HTTP request to an allowed host (engine/egress.py); return the JSON or text."""
    url = params["url"]
    body = json.dumps(params["json"]).encode() if "json" in params else None
    headers = {"Idempotency-Key": context.idempotency_key, **params.get("headers", {})}
    if body is not None:
        headers["Content-Type"] = "application/json"
    reply = egress.fetch(
        url,
        params.get("method", "GET"),
        body,
        headers,
        allowlist=configured_allowlist(),
        limits=http_limits(params.get("timeout_s")),
    )
    if reply.status >= 400:
        raise ActionError(f"{reply.url}: HTTP Error {reply.status}")
    text = reply.body.decode(errors="replace")
    try:
        return loads_strict(text)
    except ValueError:  # not JSON, or with NaN or Infinity, which could not be stored
        return text


def configured_allowlist() -> egress.Allowlist:
    """Return BRAID_HTTP_ALLOWLIST parsed; an entry that cannot be read fails the node."""
    try:
        return egress.Allowlist.parse(settings.BRAID_HTTP_ALLOWLIST)
    except ValueError as error:
        raise ActionError(f"BRAID_HTTP_ALLOWLIST: {error}") from error


def http_limits(timeout_s: float | None) -> egress.Limits:
    """Return the request's limits: the settings, and a `timeout_s` param when it is shorter."""
    limits = egress.Limits(
        max_request_bytes=settings.BRAID_HTTP_MAX_REQUEST_BYTES,
        max_response_bytes=settings.BRAID_HTTP_MAX_RESPONSE_BYTES,
        timeout_s=float(settings.BRAID_HTTP_TIMEOUT_S),
    )
    if timeout_s is None or timeout_s >= limits.timeout_s:
        return limits
    if not timeout_s > 0:
        raise ActionError(f"timeout_s must be more than 0, not {timeout_s!r}")
    return dataclasses.replace(limits, timeout_s=float(timeout_s), timeout_source="timeout_s")


@ACTIONS.register("python", params={"path": str, "args": dict}, required=["path"])
def python(params: dict[str, Any], context: ActionContext) -> Any:
    """Call an allowed function `module.name(**args)` and return what it returns."""
    path = params["path"]
    if path not in settings.BRAID_PYTHON_ACTIONS:
        raise ActionError(f"{path!r} is not on BRAID_PYTHON_ACTIONS")
    module, _, name = path.rpartition(".")
    function = getattr(importlib.import_module(module), name)
    return function(**params.get("args", {}))
