"""What a run's state tracks for incremental persistence, below the state itself.

`WriteTrackedDict` and `TrackedDict` remember the keys a step touched, so a commit writes
only those; `Persisted` records what the store already holds of a state's growing parts.
`engine.core.state` builds a run from these; `engine.core.parts` reads them to take a delta.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, overload

from engine.core.values import JSON


class WriteTrackedDict[K, V](dict[K, V]):
    """A dict that remembers every key written or removed since `touched` was cleared.

    For values never changed in place (scopes, wait and live counts, barriers, whose
    tokens they track themselves).
    """

    __slots__ = ("touched",)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.touched: set[K] = set()

    def __setitem__(self, key: K, value: V) -> None:
        self.touched.add(key)
        dict.__setitem__(self, key, value)

    def __delitem__(self, key: K) -> None:
        self.touched.add(key)
        dict.__delitem__(self, key)

    def pop(self, key: K, *default: Any) -> Any:
        self.touched.add(key)
        return dict.pop(self, key, *default)

    def setdefault(self, key: K, default: Any = None) -> Any:
        self.touched.add(key)
        return dict.setdefault(self, key, default)

    def popitem(self) -> tuple[K, V]:
        key, value = dict.popitem(self)
        self.touched.add(key)
        return key, value

    def clear(self) -> None:
        self.touched.update(dict.keys(self))
        dict.clear(self)

    def update(self, *args: Any, **kwargs: Any) -> None:
        for key, value in dict(*args, **kwargs).items():
            self[key] = value

    def __ior__(self, other: Any) -> WriteTrackedDict[K, V]:  # type: ignore[override,misc]
        self.update(other)
        return self


class TrackedDict[K, V](WriteTrackedDict[K, V]):
    """A dict that also counts a key read as touched: for frames, changed in place.

    A frame the scheduler changes is one it looked up first, so a lookup marks it;
    iterating over the values (a scan that only reads) does not.
    """

    __slots__ = ()

    def __getitem__(self, key: K) -> V:
        self.touched.add(key)
        return dict.__getitem__(self, key)

    @overload
    def get(self, key: K, default: None = None, /) -> V | None: ...

    @overload
    def get[T](self, key: K, default: V | T, /) -> V | T: ...

    def get(self, key: K, default: Any = None, /) -> Any:
        self.touched.add(key)
        return dict.get(self, key, default)


@dataclass
class Persisted:
    """What the store holds of a state's growing parts, to write only what is new.

    `full` means nothing is known to be stored yet (a new run, or one loaded from a whole
    snapshot): the next delta writes every part and replaces the stored ones.
    """

    full: bool = True
    writes: dict[int, int] = field(default_factory=dict)  # lineage -> writes stored
    items: dict[int, list[JSON]] = field(default_factory=dict)  # frame -> items stored
    entries: dict[tuple[int, str], tuple[dict[str, JSON], int]] = field(default_factory=dict)
    split: set[int] = field(default_factory=set)  # foreach frames: their items and entries
