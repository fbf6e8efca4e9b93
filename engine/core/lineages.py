"""Lineages: isolated state worldviews inside one scope, each with one parent.

A lineage records its own writes in order; its view is its parent's view with those
writes applied through the field reducers. A gather merges several lineages at their
lowest common ancestor (the merge base) by replaying each one's writes after the base,
in the order given (declared slots, or foreach items), into a new lineage under the base.
Lineages that take part in a fork are frozen from then on, so a cached view stays true.
"""

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from engine.core import expression_limits
from engine.core.reducers import REDUCERS, MergeConflict
from engine.core.values import JSON, json_size

Fields = Mapping[str, str]  # state field -> reducer name


class LineageError(Exception):
    """Lineages that cannot be merged: abandoned, or in different scopes."""


class SizeExceeded(Exception):
    """A write or merge that would make a value or the state larger than its limit."""


@dataclass(slots=True)
class Sizes:
    """The JSON bytes of each field of one lineage's view, and of them all together."""

    fields: dict[str, int]
    total: int

    @classmethod
    def of(cls, view: Mapping[str, JSON]) -> "Sizes":
        """Measure every field of a view."""
        fields = {name: json_size(value) for name, value in view.items()}
        return cls(fields, sum(fields.values()))

    def copy(self) -> "Sizes":
        """Return an independent copy."""
        return Sizes(dict(self.fields), self.total)

    def check(self, name: str, size: int) -> int:
        """Return the state's bytes with the field at `size`; raise SizeExceeded past a limit."""
        limits = expression_limits.limits()
        if size > limits.max_value_bytes:
            raise SizeExceeded(
                f"state field {name!r} would hold {size:,} bytes of JSON; the limit is "
                f"{limits.max_value_bytes:,} (BRAID_VALUE_MAX_BYTES)"
            )
        total = self.total - self.fields.get(name, 0) + size
        if total > limits.max_state_bytes:
            raise SizeExceeded(
                f"writing state field {name!r} would make the state {total:,} bytes of JSON; "
                f"the limit is {limits.max_state_bytes:,} (BRAID_STATE_MAX_BYTES)"
            )
        return total

    def set(self, name: str, size: int, total: int) -> None:
        """Record a field's new size and the state's total that check() returned."""
        self.fields[name] = size
        self.total = total


def check_value(size: int, what: str) -> None:
    """Raise SizeExceeded when one value's JSON is over BRAID_VALUE_MAX_BYTES."""
    limit = expression_limits.limits().max_value_bytes
    if size > limit:
        raise SizeExceeded(
            f"{what} is {size:,} bytes of JSON; the limit is {limit:,} (BRAID_VALUE_MAX_BYTES)"
        )


@dataclass(slots=True)
class Lineage:
    """One worldview: its parent, its own writes and, for a scope's root, its base state."""

    id: int
    scope: int
    parent: int | None
    depth: int
    writes: list[tuple[str, JSON]] = field(default_factory=list)
    base: dict[str, JSON] | None = None
    abandoned: bool = False

    def to_json(self) -> dict[str, object]:
        """Return the lineage as JSON (its view is derived, never stored)."""
        return {
            "id": self.id, "scope": self.scope, "parent": self.parent, "depth": self.depth,
            "writes": [[name, value] for name, value in self.writes], "base": self.base,
            "abandoned": self.abandoned,
        }  # fmt: skip

    @classmethod
    def from_json(cls, data: Mapping[str, object]) -> "Lineage":
        """Rebuild a lineage from to_json()."""
        writes = data["writes"]
        assert isinstance(writes, list)
        return cls(
            id=int(data["id"]),  # type: ignore[call-overload]
            scope=int(data["scope"]),  # type: ignore[call-overload]
            parent=None if data["parent"] is None else int(data["parent"]),  # type: ignore[call-overload]
            depth=int(data["depth"]),  # type: ignore[call-overload]
            writes=[(str(name), value) for name, value in writes],
            base=data["base"],  # type: ignore[arg-type]
            abandoned=bool(data["abandoned"]),
        )


class Lineages:
    """Every lineage of a run, with cached views and the merge at gathers."""

    def __init__(self, fields_by_scope: Mapping[int, Fields] | None = None) -> None:
        self.all: dict[int, Lineage] = {}
        self.next_id = 1
        self.fields: dict[int, Fields] = dict(fields_by_scope or {})
        self._views: dict[int, dict[str, JSON]] = {}
        self._owned: dict[int, set[str]] = {}  # fields whose value a lineage's writes made
        # The JSON bytes of the views of the lineages written or merged into, kept up to date
        # write by write, so the size limits cost what a write costs, not what the state holds.
        self._sizes: dict[int, Sizes] = {}
        self.children: dict[int, int] = {}  # lineage -> how many lineages have it as parent
        # What changed since the store last saw it (engine.core.parts): new or abandoned
        # lineages, and lineages with writes appended.
        self.touched: set[int] = set()
        self.written: set[int] = set()

    def new_root(self, scope: int, fields: Fields, base: dict[str, JSON]) -> Lineage:
        """Create the root lineage of a scope with its initial state."""
        self.fields[scope] = fields
        return self._add(Lineage(self.next_id, scope, None, 0, base=dict(base)))

    def child(self, parent_id: int) -> Lineage:
        """Create a lineage under the given one."""
        parent = self.all[parent_id]
        return self._add(Lineage(self.next_id, parent.scope, parent.id, parent.depth + 1))

    def _add(self, lineage: Lineage) -> Lineage:
        self.all[lineage.id] = lineage
        if lineage.parent is not None:
            self.children[lineage.parent] = self.children.get(lineage.parent, 0) + 1
        self.touched.add(lineage.id)
        if lineage.id >= self.next_id:
            self.next_id = lineage.id + 1
        return lineage

    def view(self, lineage_id: int) -> dict[str, JSON]:
        """Return the state this lineage sees (cached; do not mutate the result)."""
        cached = self._views.get(lineage_id)
        if cached is not None:
            return cached
        chain = []
        current: int | None = lineage_id
        while current is not None and current not in self._views:
            chain.append(self.all[current])
            current = self.all[current].parent
        view = dict(self._views[current]) if current is not None else {}
        for lineage in reversed(chain):
            if lineage.base is not None:
                view = dict(lineage.base)
            self._apply_all(view, lineage)
            self._views[lineage.id] = view
            view = dict(view)
        return self._views[lineage_id]

    def _apply_all(self, view: dict[str, JSON], lineage: Lineage) -> None:
        fields = self.fields[lineage.scope]
        for name, value in lineage.writes:
            view[name] = REDUCERS[fields[name]].apply(view.get(name), value)

    def write(self, lineage_id: int, name: str, value: JSON) -> None:
        """Apply one write through its field's reducer; raises WriteRejected on a bad value,
        SizeExceeded past a size limit (nothing changes then)."""
        lineage = self.all[lineage_id]
        view = self.view(lineage_id)
        reducer = REDUCERS[self.fields[lineage.scope][name]]
        written = json_size(value)
        check_value(written, f"the value written to state field {name!r}")
        sizes = self.sizes(lineage_id)
        current = sizes.fields.get(name)
        if current is None:
            current = json_size(view.get(name))
        size = reducer.size_after(current, written)
        owned = self._owned.setdefault(lineage_id, set())
        if size is not None:
            total = sizes.check(name, size)  # before an in-place append can change the view
            if name in owned:
                # This lineage made the value itself, so no other view shares it: appending
                # a line to a long log costs O(1), not a copy of the log.
                view[name] = reducer.apply_owned(view.get(name), value)
            else:
                view[name] = reducer.apply(view.get(name), value)
        else:
            result = reducer.apply(view.get(name), value)
            size = json_size(result)
            total = sizes.check(name, size)
            view[name] = result
        owned.add(name)
        sizes.set(name, size, total)
        lineage.writes.append((name, value))
        self.written.add(lineage_id)

    def sizes(self, lineage_id: int) -> Sizes:
        """Return the JSON bytes of the lineage's view (kept from here on; do not mutate)."""
        cached = self._sizes.get(lineage_id)
        if cached is not None:
            return cached
        lineage = self.all[lineage_id]
        if lineage.parent is not None and not lineage.writes and lineage.base is None:
            # A new branch, item or iteration sees its parent's view: measure that once,
            # not once per child (a foreach of 10,000 items has 10,000 such children).
            cached = self.sizes(lineage.parent).copy()
        else:
            cached = Sizes.of(self.view(lineage_id))
        self._sizes[lineage_id] = cached
        return cached

    def merge_base(self, lineage_ids: Sequence[int]) -> int:
        """Return the lowest common ancestor of the lineages (one scope, none abandoned)."""
        lineages = [self.all[i] for i in lineage_ids]
        if len({lineage.scope for lineage in lineages}) != 1:
            raise LineageError("lineages from different scopes cannot merge")
        abandoned = [lineage.id for lineage in lineages if lineage.abandoned]
        if abandoned:
            raise LineageError(f"abandoned lineages cannot merge: {abandoned}")
        return self.common_ancestor(lineage_ids)

    def common_ancestor(self, lineage_ids: Sequence[int]) -> int:
        """Return the lowest common ancestor of lineages of one scope."""
        base = self.all[lineage_ids[0]]
        for other in lineage_ids[1:]:
            base = self._common_ancestor(base, self.all[other])
        return base.id

    def _common_ancestor(self, a: Lineage, b: Lineage) -> Lineage:
        while a.depth > b.depth:
            a = self.all[a.parent]  # type: ignore[index]
        while b.depth > a.depth:
            b = self.all[b.parent]  # type: ignore[index]
        while a.id != b.id:
            if a.parent is None or b.parent is None:
                raise LineageError("lineages share no ancestor")
            a, b = self.all[a.parent], self.all[b.parent]
        return a

    def writes_since(self, base_id: int, lineage_id: int) -> list[tuple[str, JSON]]:
        """Return the writes of the chain from just below the base down to the lineage."""
        chain = []
        current = self.all[lineage_id]
        while current.id != base_id:
            chain.append(current)
            current = self.all[current.parent]  # type: ignore[index]
        return [write for lineage in reversed(chain) for write in lineage.writes]

    def merge(self, lineage_ids: Sequence[int], base_id: int | None = None) -> Lineage:
        """Replay the lineages' writes in the given order into a new lineage under the base.

        Raises MergeConflict where a reducer cannot combine the writes; nothing changes then.
        """
        base_id = self.merge_base(lineage_ids) if base_id is None else base_id
        per_input = [self.writes_since(base_id, i) for i in lineage_ids]
        base_view = self.view(base_id)
        fields = self.fields[self.all[base_id].scope]
        merged_view = dict(base_view)
        grouped = [by_field(writes) for writes in per_input]
        names = touched(per_input)
        for name in names:
            contributions = [group.get(name, []) for group in grouped]
            try:
                merged_view[name] = REDUCERS[fields[name]].merge(base_view.get(name), contributions)
            except MergeConflict as conflict:
                raise MergeConflict(f"state field {name!r}: {conflict}") from conflict
        sizes = self.merged_sizes(base_id, lineage_ids, merged_view, names)
        result = self.child(base_id)
        result.writes = [write for writes in per_input for write in writes]
        self._views[result.id] = merged_view
        self._sizes[result.id] = sizes
        return result

    def merged_sizes(
        self, base_id: int, lineage_ids: Sequence[int], merged: Mapping[str, JSON],
        names: Sequence[str],
    ) -> Sizes:  # fmt: skip
        """Return the sizes of a merged view; raise SizeExceeded past a limit.

        One input (a loop's iteration) merges into exactly its own view, whose sizes are
        known when it was written; several (a gather, a foreach) are measured field by field.
        """
        sizes = self.sizes(base_id).copy()
        single = self._sizes.get(lineage_ids[0]) if len(lineage_ids) == 1 else None
        for name in names:
            size = single.fields.get(name) if single is not None else None
            if size is None:
                size = json_size(merged.get(name))
            sizes.set(name, size, sizes.check(name, size))
        return sizes

    def abandon(self, lineage_ids: Iterable[int]) -> None:
        """Mark lineages as abandoned: they can never be merged again."""
        for lineage_id in lineage_ids:
            self.all[lineage_id].abandoned = True
            self.touched.add(lineage_id)

    def release(self, lineage_ids: Iterable[int]) -> None:
        """Forget merged lineages: those abandoned that no lineage descends from.

        A gather's, foreach's or loop's inputs are abandoned once merged, and their writes
        live on in the merged lineage; nothing reads them again. Keeping them would grow a
        run (its memory, its snapshot and the garbage collector's work) with every branch
        or item. A lineage with children stays: its children's views start from it.
        """
        for lineage_id in lineage_ids:
            lineage = self.all.get(lineage_id)
            if lineage is None or not lineage.abandoned or self.children.get(lineage_id):
                continue
            del self.all[lineage_id]
            self._views.pop(lineage_id, None)
            self._owned.pop(lineage_id, None)
            self._sizes.pop(lineage_id, None)
            self.children.pop(lineage_id, None)
            self.written.discard(lineage_id)
            self.touched.add(lineage_id)  # the store drops its parts
            if lineage.parent is not None:
                left = self.children[lineage.parent] - 1
                if left:
                    self.children[lineage.parent] = left
                else:
                    del self.children[lineage.parent]

    def clear_views(self) -> None:
        """Forget every cached view; each is recomputed from the writes when next read."""
        self._views.clear()
        self._owned.clear()
        self._sizes.clear()

    def to_json(self) -> list[dict[str, object]]:
        """Return every lineage as JSON, in id order."""
        return [self.all[i].to_json() for i in sorted(self.all)]

    def restore(self, data: Sequence[Mapping[str, object]]) -> None:
        """Load lineages from to_json(); views are recomputed on demand."""
        for item in data:
            self._add(Lineage.from_json(item))
        self.clear_views()


def touched(per_input: Sequence[Sequence[tuple[str, JSON]]]) -> list[str]:
    """Return the fields any input wrote, in order of first write."""
    names: dict[str, None] = {}
    for writes in per_input:
        for name, _ in writes:
            names.setdefault(name, None)
    return list(names)


def by_field(writes: Sequence[tuple[str, JSON]]) -> dict[str, list[JSON]]:
    """Return the written values per field, each in write order."""
    grouped: dict[str, list[JSON]] = {}
    for name, value in writes:
        grouped.setdefault(name, []).append(value)
    return grouped
