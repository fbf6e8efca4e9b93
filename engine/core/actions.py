"""The action registry: a decorator registers a Python callable as a task's action.

The registry is pure bookkeeping; what an action does (HTTP, sleeping, calling code) lives
with the adapters that register it, so the core stays free of I/O.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from engine.core.values import JSON


@dataclass(frozen=True, slots=True)
class ActionContext:
    """What an action knows about its call; `idempotency_key` is stable across redeliveries."""

    run_id: str
    node: str
    execution_id: str
    attempt: int
    idempotency_key: str


@dataclass(frozen=True, slots=True)
class ActionResult:
    """An action's output and the outcome it chose (one of its declared outcomes)."""

    output: JSON = None
    outcome: str = "next"


class ActionError(Exception):
    """An action's failure, with a message for the node row and the trace."""


ActionFunction = Callable[[dict[str, Any], ActionContext], Any]


@dataclass(frozen=True, slots=True)
class ActionSpec:
    """A registered action: its callable, declared outcomes and params schema."""

    name: str
    function: ActionFunction
    outcomes: frozenset[str]
    params: Mapping[str, type | tuple[type, ...]] = field(default_factory=dict)
    required: frozenset[str] = frozenset()

    def check_params(self, params: Mapping[str, Any]) -> None:
        """Raise ActionError when params are missing, unknown or of the wrong type."""
        if not params and not self.required:
            return  # nothing given, nothing required (most tasks): nothing to check
        missing = sorted(self.required - set(params))
        unknown = sorted(set(params) - set(self.params)) if self.params else []
        if missing or unknown:
            raise ActionError(f"{self.name}: missing params {missing}, unknown params {unknown}")
        for name, value in params.items():
            expected = self.params.get(name)
            if expected is not None and not isinstance(value, expected):
                raise ActionError(f"{self.name}: param {name!r} has the wrong type")

    def call(self, params: dict[str, Any], context: ActionContext) -> ActionResult:
        """Run the action; normalize its return value into an ActionResult."""
        self.check_params(params)
        returned = self.function(params, context)
        result = returned if isinstance(returned, ActionResult) else ActionResult(returned)
        if result.outcome not in self.outcomes:
            raise ActionError(f"{self.name} returned undeclared outcome {result.outcome!r}")
        return result


class ActionRegistry:
    """Actions by name."""

    def __init__(self) -> None:
        self.specs: dict[str, ActionSpec] = {}

    def register(
        self,
        name: str,
        outcomes: Iterable[str] = ("next",),
        params: Mapping[str, type | tuple[type, ...]] | None = None,
        required: Iterable[str] = (),
    ) -> Callable[[ActionFunction], ActionFunction]:
        """Return a decorator registering a callable under `name`."""

        def decorate(function: ActionFunction) -> ActionFunction:
            if name in self.specs:
                raise ValueError(f"action {name!r} is already registered")
            self.specs[name] = ActionSpec(
                name,
                function,
                frozenset(outcomes) | {"next"},
                dict(params or {}),
                frozenset(required),
            )
            return function

        return decorate

    def get(self, name: str) -> ActionSpec:
        """Return the action; raise ActionError when no action has the name."""
        spec = self.specs.get(name)
        if spec is None:
            raise ActionError(f"no action is registered as {name!r}")
        return spec

    def catalog(self) -> dict[str, frozenset[str]]:
        """Return each action's declared outcomes, for the validator."""
        return {name: spec.outcomes for name, spec in self.specs.items()}
