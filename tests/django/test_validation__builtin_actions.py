"""The core validator's default catalog is the catalog of the actions the workers run."""

from engine.actions import ACTIONS
from engine.core.validation import BUILTIN_ACTIONS


def test_the_validators_builtin_actions_are_the_registered_actions_and_their_outcomes() -> None:
    assert dict(BUILTIN_ACTIONS) == ACTIONS.catalog()
    assert sorted(BUILTIN_ACTIONS) == ["fail_sometimes", "http.request", "noop", "python", "sleep"]
