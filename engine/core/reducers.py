"""Field reducers: how one lineage's writes apply, and how concurrent lineages merge.

A reducer is a small object with one protocol; a new reducer is one class plus one line
in REDUCERS. `apply` folds one write into a lineage's value. `merge` replays several
lineages' writes (each a list, already in declared-slot or item order) onto the merge
base's value, and raises MergeConflict where the reducer cannot combine them.
"""

import json
from collections.abc import Sequence
from typing import Protocol

from engine.core.values import JSON


class MergeConflict(Exception):
    """Concurrent writes a reducer cannot combine; a gather fails closed on it."""


class WriteRejected(Exception):
    """A value this reducer cannot take (e.g. a number for `append`)."""


class Reducer(Protocol):
    """How a state field takes writes."""

    name: str

    def initial(self) -> JSON:
        """Return the field's value before any write, when it declares no default."""
        ...

    def apply(self, current: JSON, value: JSON) -> JSON:
        """Return the field's value after one write in one lineage."""
        ...

    def apply_owned(self, current: JSON, value: JSON) -> JSON:
        """Like apply, but free to update `current` in place (its caller owns it alone)."""
        ...

    def merge(self, base: JSON, contributions: Sequence[Sequence[JSON]]) -> JSON:
        """Return the base with every contribution's writes replayed, in the given order."""
        ...

    def size_after(self, current: int, value: int) -> int | None:
        """Return the JSON bytes of the field after one write, from the bytes of its value
        and of the write, where that needs no result; None where the result must be
        measured."""
        ...


def require_list(name: str, value: JSON) -> list[JSON]:
    """Return the value when it is a list, else refuse the write."""
    if not isinstance(value, list):
        raise WriteRejected(f"{name} takes a list, not {type(value).__name__}")
    return value


def require_number(name: str, value: JSON) -> float | int:
    """Return the value when it is a number (not a bool), else refuse the write."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise WriteRejected(f"{name} takes a number, not {type(value).__name__}")
    return value


class Overwrite:
    """The last write wins in one lineage; two different concurrent writes conflict."""

    name = "overwrite"

    def initial(self) -> JSON:
        return None

    def apply_owned(self, current: JSON, value: JSON) -> JSON:
        return self.apply(current, value)

    def apply(self, current: JSON, value: JSON) -> JSON:
        return value

    def size_after(self, current: int, value: int) -> int | None:
        return value

    def merge(self, base: JSON, contributions: Sequence[Sequence[JSON]]) -> JSON:
        finals = [writes[-1] for writes in contributions if writes]
        if any(value != finals[0] for value in finals[1:]):
            raise MergeConflict(f"different concurrent values: {finals[0]!r} and others")
        return finals[0] if finals else base


class Append:
    """List concatenation; merged lists join in replay order."""

    name = "append"

    def initial(self) -> JSON:
        return []

    def apply(self, current: JSON, value: JSON) -> JSON:
        return [*require_list(self.name, current), *require_list(self.name, value)]

    def apply_owned(self, current: JSON, value: JSON) -> JSON:
        extended = require_list(self.name, current)
        extended.extend(require_list(self.name, value))
        return extended

    def size_after(self, current: int, value: int) -> int | None:
        # `[a,b]` and `[c]` make `[a,b,c]`: one bracket pair goes, one comma comes; an
        # empty list (`[]`, 2 bytes) adds nothing. Exact, so a long log is never re-measured.
        if current <= 2 or value <= 2:
            return max(current, value)
        return current + value - 1

    def merge(self, base: JSON, contributions: Sequence[Sequence[JSON]]) -> JSON:
        result = list(require_list(self.name, base))
        for writes in contributions:
            for value in writes:
                result.extend(require_list(self.name, value))
        return result


class Sum:
    """Numbers add up; concurrent additions commute."""

    name = "sum"

    def size_after(self, current: int, value: int) -> int | None:
        return None

    def initial(self) -> JSON:
        return 0

    def apply_owned(self, current: JSON, value: JSON) -> JSON:
        return self.apply(current, value)

    def apply(self, current: JSON, value: JSON) -> JSON:
        return require_number(self.name, current) + require_number(self.name, value)

    def merge(self, base: JSON, contributions: Sequence[Sequence[JSON]]) -> JSON:
        total = require_number(self.name, base)
        for writes in contributions:
            for value in writes:
                total += require_number(self.name, value)
        return total


class Extreme:
    """The smallest (min) or largest (max) value written; null until the first write."""

    def __init__(self, name: str, smallest: bool) -> None:
        self.name = name
        self.smallest = smallest

    def size_after(self, current: int, value: int) -> int | None:
        return None

    def initial(self) -> JSON:
        return None

    def apply_owned(self, current: JSON, value: JSON) -> JSON:
        return self.apply(current, value)

    def apply(self, current: JSON, value: JSON) -> JSON:
        number = require_number(self.name, value)
        if current is None:
            return number
        kept = require_number(self.name, current)
        return min(kept, number) if self.smallest else max(kept, number)

    def merge(self, base: JSON, contributions: Sequence[Sequence[JSON]]) -> JSON:
        result = base
        for writes in contributions:
            for value in writes:
                result = self.apply(result, value)
        return result


class Merge:
    """Dict union; one key written with different values by two lineages conflicts."""

    name = "merge"

    def size_after(self, current: int, value: int) -> int | None:
        return None

    def initial(self) -> JSON:
        return {}

    def apply_owned(self, current: JSON, value: JSON) -> JSON:
        return self.apply(current, value)

    def apply(self, current: JSON, value: JSON) -> JSON:
        return {**self.require_dict(current), **self.require_dict(value)}

    def require_dict(self, value: JSON) -> dict[str, JSON]:
        """Return the value when it is an object, else refuse the write."""
        if not isinstance(value, dict):
            raise WriteRejected(f"merge takes an object, not {type(value).__name__}")
        return value

    def merge(self, base: JSON, contributions: Sequence[Sequence[JSON]]) -> JSON:
        result = dict(self.require_dict(base))
        written: dict[str, JSON] = {}
        for writes in contributions:
            patch: dict[str, JSON] = {}
            for value in writes:
                patch.update(self.require_dict(value))
            for key, value in patch.items():
                if key in written and written[key] != value:
                    raise MergeConflict(f"key {key!r} written with different values")
                written[key] = value
        result.update(written)
        return result


class Union:
    """Set semantics on lists, in order of first appearance."""

    name = "union"

    def size_after(self, current: int, value: int) -> int | None:
        return None

    def initial(self) -> JSON:
        return []

    def apply_owned(self, current: JSON, value: JSON) -> JSON:
        return self.apply(current, value)

    def apply(self, current: JSON, value: JSON) -> JSON:
        return self.merge(current, [[value]])

    def merge(self, base: JSON, contributions: Sequence[Sequence[JSON]]) -> JSON:
        result = list(require_list(self.name, base))
        seen = {identity(item) for item in result}
        for writes in contributions:
            for value in writes:
                for item in require_list(self.name, value):
                    key = identity(item)
                    if key not in seen:
                        seen.add(key)
                        result.append(item)
        return result


def identity(value: JSON) -> str:
    """Return a hashable key, equal for equal JSON values (1 and 1.0 alike)."""
    if isinstance(value, list | dict):
        return "json:" + json.dumps(value, sort_keys=True)
    if isinstance(value, float) and value.is_integer():
        return repr(int(value))
    return repr(value)


REDUCERS: dict[str, Reducer] = {
    reducer.name: reducer
    for reducer in (
        Overwrite(), Append(), Sum(), Extreme("min", True), Extreme("max", False), Merge(), Union(),
    )
}  # fmt: skip
